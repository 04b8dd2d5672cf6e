#!/usr/bin/env python3
"""The fusion benchmark: for each model, `tessel fusion-report` (every policy compiled and profiled in one
process) repeated over --rounds, and ONNX Runtime in this process at the same thread count; prints per
model the kernels and median latency of each policy, the speedups over one kernel per node, of default
over simple and of aggressive over default, the best policy against ONNX Runtime, and the share of
time outside kernels.

    ~/.cache/tessel/venv/bin/python bench/fusion_bench.py [--tessel build/src/cli/tessel] [--threads 1]
        [--rounds 3] [--models resnet18,efficientnet_b0,...]

Models are read from ${TESSEL_CACHE:-~/.cache/tessel}/models (scripts/export_models.py; the unseen
CNNs efficientnet_b0, mobilenet_v3_large, regnet_y_400mf are exported by name)."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, Settings, median, ratio, table, time_runs  # noqa: E402

DEFAULT_MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "transformer_encoder_layer",
                  "efficientnet_b0", "mobilenet_v3_large", "regnet_y_400mf"]
POLICIES = ["none", "injective", "simple", "default", "aggressive"]


def ort_ms(path, shape, threads, settings):
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    return time_runs(lambda: session.run(None, {name: x}), settings).median_ms


def fusion_report(tessel, path, in_name, shape, threads, repeat):
    with tempfile.TemporaryDirectory() as out:
        cmd = [tessel, "fusion-report", path, "--input-shape", f"{in_name}={'x'.join(map(str, shape))}",
               "--policies", ",".join(POLICIES), "--threads", str(threads), "--repeat", str(repeat), "-o", out]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(out, "report.json")) as f:
            return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(REPO, "build", "src", "cli", "tessel"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3, help="fusion reports per model (medians across them)")
    ap.add_argument("--repeat", type=int, default=30, help="profiled runs per policy in each report")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    args = ap.parse_args()
    cache = os.environ.get("TESSEL_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "tessel"))
    with open(os.path.join(cache, "models", "manifest.json")) as f:
        manifest = json.load(f)
    settings = Settings(repeat=30, warmup=3, budget_s=10)
    rows, start = [], time.monotonic()
    models = [m for m in args.models.split(",") if m]
    for i, name in enumerate(models):
        entry = manifest.get(name)
        if not entry:
            print(f"{name}: not exported (scripts/export_models.py {name})", file=sys.stderr)
            continue
        path = os.path.join(cache, "models", entry["file"])
        spec = entry["inputs"][0]
        per_policy = {p: [] for p in POLICIES}
        kernels, outside = {}, {}
        for r in range(args.rounds):
            print(f"[{i + 1}/{len(models)}] {name}: report {r + 1}/{args.rounds} "
                  f"({time.monotonic() - start:.0f} s elapsed)", file=sys.stderr, flush=True)
            report = fusion_report(args.tessel, path, spec["name"], spec["shape"], args.threads, args.repeat)
            for p in report["policies"]:
                per_policy[p["policy"]].append(p["end_to_end_ms"]["median"])
                kernels[p["policy"]] = p["kernels_per_inference"]
                outside.setdefault(p["policy"], []).append(p["outside_kernels_ms"] / p["end_to_end_ms"]["median"])
        ms = {p: median(v) for p, v in per_policy.items()}
        best = min(ms, key=ms.get)
        ort = ort_ms(path, spec["shape"], args.threads, settings)
        rows.append([name] + [f"{kernels[p]} / {ms[p]:.2f}" for p in POLICIES] +
                    [ratio(ms["none"], ms["simple"]), ratio(ms["none"], ms["default"]),
                     ratio(ms["none"], ms["aggressive"]), ratio(ms["simple"], ms["default"]),
                     ratio(ms["default"], ms["aggressive"]), best, f"{ort:.2f}", ratio(ms[best], ort),
                     f"{100 * median(outside['default']):.1f}%"])
    print(f"== Fusion policies at {args.threads} thread(s): kernels / median ms per policy (medians of "
          f"{args.rounds} reports of {args.repeat} runs), speedups, best policy against ONNX Runtime ==")
    print(table(["model"] + [f"{p} k/ms" for p in POLICIES] +
                ["simple vs none", "default vs none", "aggressive vs none", "default vs simple",
                 "aggressive vs default", "best", "ORT ms", "best/ORT",
                 "default outside kernels"], rows))
    print("speedup a vs b: b's time / a's time (>1: a faster); best/ORT > 1: Tessel slower")
    print("command: " + " ".join([os.path.relpath(sys.argv[0], REPO)] + sys.argv[1:]))


if __name__ == "__main__":
    main()
