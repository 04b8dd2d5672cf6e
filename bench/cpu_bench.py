#!/usr/bin/env python3
"""Tessel's CPU benchmark: untuned compiled latency of the exported models against ONNX Runtime and
PyTorch eager, and single ops (GEMM 1024^3, ResNet-18's 3x3 convolutions) against OpenBLAS and
oneDNN, all measured in one run on this machine at each thread count. Prints tables of medians,
ratios (tessel / peer: above 1 means Tessel is slower) and % of the machine's fp32 peak.

Run it with the model tests' venv python, through bench/run_cpu_bench.sh; see bench/README.md."""
import os
import sys

# OPENBLAS_CORETYPE=Haswell (and OPENBLAS_L2_SIZE), which this environment may set, makes OpenBLAS
# take its AVX2 kernels on an AVX-512 machine, halving it. They must be gone before OpenBLAS is
# loaded: numpy and PyTorch load it (libblas.so.3) in this process, op_peers in its own. Tessel's
# libraries and ONNX Runtime do not read them; `tessel compile` still gets the environment as given.
BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
GIVEN_ENV = dict(os.environ)
for _var in BLAS_VARS:
    os.environ.pop(_var, None)

import argparse  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import time  # noqa: E402

from common import REPO, Settings, TesselCompiler  # noqa: E402
import model_bench  # noqa: E402
import op_bench  # noqa: E402

# fp32 peak of one core of the target machine, from the issue (AVX-512, 2 FMA units).
DEFAULT_PEAK_GFLOPS_PER_CORE = 220.0


def parse_args(argv):
    cache = os.environ.get("TESSEL_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "tessel"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(REPO, "build", "src", "cli", "tessel"),
                    help="the tessel binary (default: build/src/cli/tessel)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--repeat", type=int, help="timed runs per measurement (default 30; --quick: 5)")
    ap.add_argument("--warmup", type=int, help="untimed runs first (default 3; --quick: 1)")
    ap.add_argument("--budget", type=float,
                    help="seconds after which a measurement stops repeating, keeping at least 3 runs "
                         "(default 20; --quick: 5)")
    ap.add_argument("--models", default=",".join(model_bench.MODELS),
                    help="comma-separated models, or '' for none (default: all four)")
    ap.add_argument("--ops", action=argparse.BooleanOptionalAction, default=True,
                    help="run the single-op section (default on)")
    ap.add_argument("--op-list", help="comma-separated ops of the single-op section, or all (default: all; --quick: "
                                      + ",".join(op_bench.QUICK_OPS) + "); known: "
                                      + ",".join(o.name for o in op_bench.OPS))
    ap.add_argument("--quick", action="store_true",
                    help="fewer repetitions and three ops: a smoke test, not a measurement")
    ap.add_argument("--peak-gflops-per-core", type=float, default=DEFAULT_PEAK_GFLOPS_PER_CORE,
                    help=f"fp32 peak of one core for the %%peak columns (default {DEFAULT_PEAK_GFLOPS_PER_CORE:g}, "
                         "the issue's figure for the AVX-512 machine)")
    ap.add_argument("--models-dir", default=os.path.join(cache, "models"),
                    help="the exported models and manifest.json (scripts/export_models.py)")
    ap.add_argument("--work-dir", default=os.path.join(cache, "bench"),
                    help="compiled libraries, op models and the op_peers binary (default $TESSEL_CACHE/bench)")
    ap.add_argument("--no-compile-cache", action="store_true",
                    help="compile every model again even if this tessel binary compiled it before")
    args = ap.parse_args(argv)
    args.repeat = args.repeat or (5 if args.quick else 30)
    args.warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    args.budget = args.budget or (5.0 if args.quick else 20.0)
    try:
        args.threads = [int(t) for t in args.threads.split(",") if t.strip()]
    except ValueError:
        ap.error(f"--threads takes comma-separated integers, got {args.threads!r}")
    if not args.threads or min(args.threads) < 1:
        ap.error("--threads needs at least one count, each >= 1")
    args.models = [m for m in args.models.split(",") if m.strip()]
    known_models = model_bench.MODELS + model_bench.BUILT_MODELS
    unknown = [m for m in args.models if m not in known_models]
    if unknown:
        ap.error(f"unknown model {unknown[0]!r} (known: {', '.join(known_models)})")
    all_ops = [o.name for o in op_bench.OPS]
    if args.op_list == "all" or (not args.op_list and not args.quick):
        op_names = all_ops
    else:
        op_names = args.op_list.split(",") if args.op_list else op_bench.QUICK_OPS
    unknown = [o for o in op_names if o not in all_ops]
    if unknown:
        ap.error(f"unknown op {unknown[0]!r} (known: {', '.join(all_ops)})")
    args.op_names = op_names if args.ops else []
    return args


def cpu_info():
    """(model name, flags of interest) from /proc/cpuinfo."""
    name, flags = platform.processor() or "?", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and name in ("?", "", "x86_64"):
                    name = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    return name, flags


def header(args, compiler_version):
    name, flags = cpu_info()
    isa = " ".join(f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile") if f in flags) or "?"
    lines = [
        "Tessel CPU benchmark: untuned compiled latency (default schedule) against peers, one run, one machine",
        "command: " + shlex.join([sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:]),
        f"host: {name}; {os.cpu_count()} logical CPUs, {len(os.sched_getaffinity(0))} usable; ISA flags: {isa}; "
        f"load average at start {os.getloadavg()[0]:.2f}",
        f"threads: {', '.join(map(str, args.threads))}",
        f"timing: medians of up to {args.repeat} timed runs after {args.warmup} warm-up run(s), a measurement "
        f"stops repeating after {args.budget:g} s (at least 3 runs)" + ("  [--quick: a smoke test]" if args.quick else ""),
        f"peak: {args.peak_gflops_per_core:g} GFLOP/s per core x threads, from "
        + ("the issue's fp32 figure for the AVX-512 target machine (override with --peak-gflops-per-core)"
           if args.peak_gflops_per_core == DEFAULT_PEAK_GFLOPS_PER_CORE else "--peak-gflops-per-core"),
        f"tessel: {args.tessel} ({compiler_version})",
        "environment: " + (", ".join(f"{v}={GIVEN_ENV[v]}" for v in BLAS_VARS if v in GIVEN_ENV) or "no OPENBLAS_* set")
        + "; removed for the peers (OpenBLAS in op_peers, numpy/PyTorch here); Tessel and ORT do not read them",
    ]
    if "avx512f" not in flags and args.peak_gflops_per_core == DEFAULT_PEAK_GFLOPS_PER_CORE:
        lines.append("note: /proc/cpuinfo shows no avx512f here, so the default peak (which assumes AVX-512) "
                     "overstates this machine's peak")
    return "\n".join(lines)


def main(argv):
    args = parse_args(argv)
    if not os.access(args.tessel, os.X_OK):
        sys.exit(f"cpu_bench: no tessel binary at {args.tessel} (build it, or pass its path)")
    sys.path.insert(0, os.path.join(REPO, "python"))
    os.makedirs(args.work_dir, exist_ok=True)
    start = time.monotonic()

    def log(message):  # progress goes to stderr, the report to stdout
        print(f"[{time.monotonic() - start:7.1f} s] {message}", file=sys.stderr, flush=True)

    compiler = TesselCompiler(args.tessel, args.work_dir, GIVEN_ENV, not args.no_compile_cache)
    print(header(args, compiler.version()), flush=True)
    settings = Settings(args.repeat, args.warmup, args.budget)

    if args.models:
        if not os.path.exists(os.path.join(args.models_dir, "manifest.json")):
            sys.exit(f"cpu_bench: no {args.models_dir}/manifest.json: run "
                     "~/.cache/tessel/venv/bin/python scripts/export_models.py first")
        rows, notes = model_bench.bench_models(args.models, args.models_dir, compiler, args.threads, settings, log)
        print("\n== Models: latency in ms (median), tessel/peer ratio (>1: Tessel slower), "
              "GFLOP/s and %peak from Tessel's FLOP count, max rel error of Tessel vs ORT ==")
        print(model_bench.models_table(rows, args.peak_gflops_per_core))
        print("\n".join("  - " + n for n in notes), flush=True)

    if args.op_names:
        peer_env = {k: v for k, v in GIVEN_ENV.items() if k not in BLAS_VARS}
        rows, notes = op_bench.bench_ops(args.op_names, args.work_dir, compiler, args.threads, settings, peer_env, log)
        print("\n== Single ops: latency in ms, GFLOP/s and %peak of each implementation, tessel/impl ratio "
              "(>1: Tessel slower), max|tessel - ref| / max|ref| ==")
        print(op_bench.ops_table(rows, args.peak_gflops_per_core))
        print("\n".join("  - " + n for n in notes), flush=True)
    # The load at the end too: a build running meanwhile makes the numbers meaningless.
    print(f"\ndone in {time.monotonic() - start:.0f} s; load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
