"""Two Tessel builds on the same models, interleaved: each model is compiled by both binaries, then
their libraries are timed in alternation (A, B, A, B, ...) with ONNX Runtime in the same rounds,
so that a slow minute of a shared machine slows both. Prints per model the median latency of each,
B/A and each against ONNX Runtime.

    ~/.cache/tessel/venv/bin/python bench/ab_compare.py --a OLD/build/src/cli/tessel \\
        [--b build/src/cli/tessel] [--fusion default] [--fusion-a simple] [--threads 1] [--rounds 5] \\
        [--models resnet18,efficientnet_b0,...]

Models are read from ${TESSEL_CACHE:-~/.cache/tessel}/models (scripts/export_models.py).
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, exported_models, table  # noqa: E402

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "transformer_encoder_layer", "efficientnet_b0",
          "mobilenet_v3_large", "regnet_y_400mf"]


def compile_with(tessel: str, model: str, fusion: str, out: str) -> None:
    subprocess.run([tessel, "compile", model, "--fusion", fusion, "-o", out], check=True, capture_output=True)


def time_library(tessel: str, library: str, threads: int, repeat: int, inputs: str | None = None) -> float:
    """The median latency in ms that `tessel run --repeat` prints for the library (on the .npy
    files of folder `inputs` when given, else on its random inputs)."""
    feeds = ["--inputs", inputs] if inputs else []
    out = subprocess.run([tessel, "run", library, *feeds, "--threads", str(threads), "--repeat", str(repeat)],
                         check=True, capture_output=True, text=True).stdout
    match = re.search(r"median ([0-9.]+) ms", out)
    if not match:
        raise RuntimeError(f"no latency in the output of {tessel} run {library}:\n{out}")
    return float(match.group(1))


def time_ort(model: str, threads: int, repeat: int) -> float:
    import numpy as np
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    feeds = {i.name: np.random.default_rng(0).random(i.shape, dtype=np.float32) for i in session.get_inputs()}
    return time_session(session, feeds, repeat)


def time_session(session, feeds, repeat: int) -> float:
    """The median latency in ms of an ONNX Runtime session on feeds, after three warm-up runs."""
    for _ in range(3):
        session.run(None, feeds)
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        session.run(None, feeds)
        runs.append((time.perf_counter() - start) * 1e3)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the baseline tessel binary")
    ap.add_argument("--b", default=os.path.join(REPO, "build", "src", "cli", "tessel"))
    ap.add_argument("--fusion", default="default", help="fusion policy of both (B's)")
    ap.add_argument("--fusion-a", help="A's fusion policy when it differs")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=20, help="timed runs per library per round")
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    rows = []
    started = time.time()
    models = [m for m in args.models.split(",") if m]
    with tempfile.TemporaryDirectory() as work:
        for done, name, model in exported_models(models):
            libs = {"a": os.path.join(work, name + ".a.so"), "b": os.path.join(work, name + ".b.so")}
            compile_with(args.a, model, args.fusion_a or args.fusion, libs["a"])
            compile_with(args.b, model, args.fusion, libs["b"])
            times = {"a": [], "b": [], "ort": []}
            for _ in range(args.rounds):
                times["a"].append(time_library(args.a, libs["a"], args.threads, args.repeat))
                times["b"].append(time_library(args.b, libs["b"], args.threads, args.repeat))
                times["ort"].append(time_ort(model, args.threads, args.repeat))
            a, b, o = (statistics.median(times[k]) for k in ("a", "b", "ort"))
            rows.append([name, f"{a:.2f}", f"{b:.2f}", f"{o:.2f}", f"{b / a:.2f}x", f"{a / o:.2f}x", f"{b / o:.2f}x"])
            elapsed = time.time() - started
            eta = elapsed / (done + 1) * (len(models) - done - 1)
            print(f"[{done + 1}/{len(models)}] {name} elapsed {elapsed:.0f} s, ETA {eta:.0f} s", file=sys.stderr)
    print(table(["model", "A ms", "B ms", "ORT ms", "B/A", "A/ORT", "B/ORT"], rows))
    print(f"A: {args.a} (fusion {args.fusion_a or args.fusion}); B: {args.b} (fusion {args.fusion}); "
          f"{args.threads} thread(s), medians of {args.rounds} interleaved rounds of {args.repeat} runs; "
          "ratios < 1: the first faster")
    print("command: bench/ab_compare.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
