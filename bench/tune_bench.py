"""Tuned against untuned Tessel and ONNX Runtime, end to end: each model is tuned with
`tessel tune` (or its log, kept in --logs, is resumed up to --trials), compiled with the default
schedules and with `--tuning-log`, and the two libraries are timed in alternation with ONNX
Runtime in the same rounds. Prints per model the trials, the tuning time, the median latency of
each and the ratios, and the geomean of tuned / ONNX Runtime.

    ~/.cache/tessel/venv/bin/python bench/tune_bench.py [--models mobilenet_v2,resnet18] \\
        [--trials 300] [--threads 1] [--rounds 5] [--logs ~/.cache/tessel/tune-logs] [--fusion tuned] \\
        [--layouts default]

With --fusion tuned the session also decides fusion by measurement and the tuned library is
compiled with it; "default" is then the untuned library with the default fusion policy.
With --layouts default the sessions search schedules only, each conv in the default's layout
(the ablation of the layout search).

Models are read from ${TESSEL_CACHE:-~/.cache/tessel}/models (scripts/export_models.py).
"""
from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab_compare import time_library, time_ort  # noqa: E402
from common import CACHE, REPO, exported_models, table  # noqa: E402

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "transformer_encoder_layer", "efficientnet_b0",
          "mobilenet_v3_large", "regnet_y_400mf", "mnasnet1_0", "shufflenet_v2_x1_0"]


def log_records(path: str) -> int:
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        decisions = ('{"fusion"', '{"layout"', '{"in_model"')
        return sum(1 for line in f if line.endswith("\n") and not line.startswith(decisions))


def tune(tessel: str, model: str, log: str, trials: int, threads: int, fusion: str, layouts: str) -> float:
    """Tunes up to `trials` records in the log; the seconds it took (0 when the log had them)."""
    if log_records(log) >= trials:
        return 0.0
    command = [tessel, "tune", model, "--log", log, "--trials", str(trials), "--threads", str(threads),
               "--fusion", fusion, "--layouts", layouts]
    if log_records(log) > 0:
        command.append("--resume")
    start = time.time()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.time() - start


def compile_model(tessel: str, model: str, out: str, log: str | None, fusion: str = "default") -> None:
    command = [tessel, "compile", model, "-o", out]
    if log:
        command += ["--tuning-log", log, "--fusion", fusion]
    subprocess.run(command, check=True, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(REPO, "build", "src", "cli", "tessel"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=20, help="timed runs per library per round")
    ap.add_argument("--logs", default=os.path.join(CACHE, "tune-logs"), help="where the tuning logs are kept")
    ap.add_argument("--fusion", default="default", help="the fusion policy tuned and compiled (tuned: by measurement)")
    ap.add_argument("--layouts", default="search", choices=["search", "default"],
                    help="search: each conv's layouts measured too (tessel tune's default)")
    args = ap.parse_args()
    os.makedirs(args.logs, exist_ok=True)
    rows, ratios = [], []
    started = time.time()
    models = [m for m in args.models.split(",") if m]
    with tempfile.TemporaryDirectory() as work:
        for done, name, model in exported_models(models):
            suffix = ("" if args.fusion == "default" else f".fusion-{args.fusion}") + \
                ("" if args.layouts == "search" else ".layouts-default")
            log = os.path.join(args.logs, f"{name}.t{args.threads}{suffix}.jsonl")
            seconds = tune(args.tessel, model, log, args.trials, args.threads, args.fusion, args.layouts)
            libs = {"default": os.path.join(work, name + ".default.so"), "tuned": os.path.join(work, name + ".tuned.so")}
            compile_model(args.tessel, model, libs["default"], None)
            compile_model(args.tessel, model, libs["tuned"], log, args.fusion)
            times = {"default": [], "tuned": [], "ort": []}
            for _ in range(args.rounds):
                times["default"].append(time_library(args.tessel, libs["default"], args.threads, args.repeat))
                times["tuned"].append(time_library(args.tessel, libs["tuned"], args.threads, args.repeat))
                times["ort"].append(time_ort(model, args.threads, args.repeat))
            d, t, o = (statistics.median(times[k]) for k in ("default", "tuned", "ort"))
            ratios.append(t / o)
            rows.append([name, str(log_records(log)), f"{seconds:.0f}" if seconds else "(log)", f"{d:.2f}", f"{t:.2f}",
                         f"{o:.2f}", f"{t / d:.2f}x", f"{d / o:.2f}x", f"{t / o:.2f}x"])
            elapsed = time.time() - started
            eta = elapsed / (done + 1) * (len(models) - done - 1)
            print(f"[{done + 1}/{len(models)}] {name} elapsed {elapsed:.0f} s, ETA {eta:.0f} s", file=sys.stderr)
    print(table(["model", "trials", "tune s", "default ms", "tuned ms", "ORT ms", "tuned/default", "default/ORT",
                 "tuned/ORT"], rows))
    if ratios:
        print(f"geomean tuned/ORT: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
    print(f"{args.threads} thread(s), fusion {args.fusion} and layouts {args.layouts} when tuned, medians of {args.rounds} interleaved rounds of {args.repeat} runs; "
          f"logs in {args.logs}")
    print("command: bench/tune_bench.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
