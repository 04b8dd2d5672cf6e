"""Tuned Tessel against TVM MetaSchedule at equal trials, on one-op models (GEMM 1024^3 with B an
input, ResNet-18's 64-channel 56x56 3x3 convolution, ...): each op is tuned by `tessel tune` and by
MetaSchedule's `tune_tir` (bench/metaschedule_peer.py, run with a Python that has apache-tvm, see
../shared/TOOLCHAIN.md) for the same trials and threads, then both results are timed the same way
(median of warm runs); for the GEMM OpenBLAS too (the numpy of that Python: PyPI's wheel
bundles OpenBLAS). Prints times, ratios and tuning time.

    ~/.cache/tessel/venv/bin/python bench/tune_vs_metaschedule.py [--ops gemm_1024,conv_64_56]
        [--trials 64,256] [--threads 1] [--tvm-python ~/.cache/tessel/tvm-venv/bin/python]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, table  # noqa: E402
import op_bench  # noqa: E402

OPENBLAS_GEMM = """
import sys, time, numpy as np
n = 1024
a = np.random.default_rng(0).random((n, n), dtype=np.float32)
b = np.random.default_rng(1).random((n, n), dtype=np.float32)
for _ in range(3): a @ b
runs = []
for _ in range(int(sys.argv[1])):
    s = time.perf_counter(); a @ b; runs.append((time.perf_counter() - s) * 1e3)
print(sorted(runs)[len(runs) // 2])
"""


def tessel_tuned_ms(tessel: str, model: str, log: str, trials: int, threads: int, repeat: int) -> tuple[float, float]:
    """(median ms of the tuned library, tuning seconds)."""
    start = time.time()
    subprocess.run([tessel, "tune", model, "--log", log, "--trials", str(trials), "--threads", str(threads)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.time() - start
    lib = log + ".so"
    subprocess.run([tessel, "compile", model, "--tuning-log", log, "-o", lib], check=True, capture_output=True)
    out = subprocess.run([tessel, "run", lib, "--threads", str(threads), "--repeat", str(repeat)], check=True,
                         capture_output=True, text=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", out).group(1)), seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(REPO, "build", "src", "cli", "tessel"))
    ap.add_argument("--tvm-python", default=os.path.expanduser("~/.cache/tessel/tvm-venv/bin/python"))
    ap.add_argument("--ops", default="gemm_1024,conv_64_56")
    ap.add_argument("--trials", default="64,256")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mcpu", default="native",
                    help="the CPU MetaSchedule compiles for (native: the host's, as TVM's LLVM names it)")
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    env = dict(os.environ, TVM_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads))
    rows, peer_cpu = [], args.mcpu
    with tempfile.TemporaryDirectory() as work:
        for name in args.ops.split(","):
            op = next(o for o in op_bench.OPS if o.name == name)
            model, _ = op_bench.write_op_model(op, work)
            blas = "-"
            if op.kind == "gemm":
                # The TVM venv's numpy is PyPI's, with OpenBLAS inside (Debian's links the reference BLAS).
                out = subprocess.run([args.tvm_python, "-c", OPENBLAS_GEMM, str(args.repeat)], env=env, check=True,
                                     capture_output=True, text=True).stdout
                blas = f"{float(out):.3f}"
            for trials in [int(t) for t in args.trials.split(",")]:
                t_ms, t_s = tessel_tuned_ms(args.tessel, model, os.path.join(work, f"{name}.{trials}.jsonl"), trials,
                                            args.threads, args.repeat)
                print(f"{name} {trials} trials: tessel {t_ms:.3f} ms ({t_s:.0f} s)", file=sys.stderr)
                peer = subprocess.run([args.tvm_python, os.path.join(REPO, "bench", "metaschedule_peer.py"), "--op",
                                       name, "--trials", str(trials), "--threads", str(args.threads), "--mcpu",
                                       args.mcpu, "--repeat", str(args.repeat), "--work", work],
                                      env=env, capture_output=True, text=True)
                if peer.returncode != 0:
                    raise RuntimeError(f"metaschedule_peer.py failed:\n{peer.stderr[-3000:]}")
                ms = json.loads(peer.stdout.strip().splitlines()[-1])
                peer_cpu = ms["mcpu"]
                print(f"{name} {trials} trials: MetaSchedule {ms['median_ms']:.3f} ms ({ms['tune_s']:.0f} s)",
                      file=sys.stderr)
                rows.append([name, str(trials), f"{t_ms:.3f}", f"{ms['median_ms']:.3f}", blas,
                             f"{t_ms / ms['median_ms']:.2f}x", f"{t_s:.0f}", f"{ms['tune_s']:.0f}"])
    print(table(["op", "trials", "Tessel ms", "MetaSchedule ms", "OpenBLAS ms", "Tessel/MS", "Tessel tune s",
                 "MS tune s"], rows))
    print(f"{args.threads} thread(s), MetaSchedule for -mcpu={peer_cpu}; medians of {args.repeat} warm runs; "
          "ratios < 1: Tessel faster")
    print("command: bench/tune_vs_metaschedule.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
