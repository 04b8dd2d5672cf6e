"""QDQ-quantized models: Tessel's `--qdq float` (the model as written, on dequantized values) and
`--qdq integer` (each DequantizeLinear -> Conv/MatMul -> QuantizeLinear folded into an exact integer
product) against ONNX Runtime, which folds them into its int8 kernels. The exported models are
quantized as tests/model/qdq_cnn_vs_ort.py quantizes them (uint8 activations, int8 per-channel
weights); the three are timed in alternation, rounds of `--repeat` runs each.

    ~/.cache/tessel/venv/bin/python bench/qdq_bench.py [--models resnet18,mobilenet_v2] \\
        [--tessel build/src/cli/tessel] [--threads 1] [--rounds 3] [--repeat 10]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab_compare import time_library, time_ort  # noqa: E402
from common import REPO, exported_models, table  # noqa: E402


def qdq_writer_module():
    path = os.path.join(REPO, "tests", "model", "qdq_cnn_vs_ort.py")
    spec = importlib.util.spec_from_file_location("qdq_cnn_vs_ort", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def quantize(writer, model_path: str, out: str) -> None:
    model = onnx.load(model_path)
    rng = np.random.default_rng(0)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    feeds = [{model.graph.input[0].name: rng.standard_normal(shape).astype(np.float32)} for _ in range(3)]
    onnx.save(writer.QdqWriter(model, writer.activation_ranges(model, feeds)).write(), out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(REPO, "build", "src", "cli", "tessel"))
    ap.add_argument("--models", default="resnet18,mobilenet_v2")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    writer = qdq_writer_module()
    models = [m for m in args.models.split(",") if m]
    rows, started = [], time.time()
    with tempfile.TemporaryDirectory() as work:
        for done, name, path in exported_models(models):
            qdq = os.path.join(work, name + "_qdq.onnx")
            quantize(writer, path, qdq)
            libs = {mode: os.path.join(work, f"{name}.{mode}.so") for mode in ("float", "integer")}
            for mode, lib in libs.items():
                subprocess.run([args.tessel, "compile", qdq, "--qdq", mode, "-o", lib], check=True, capture_output=True)
            times = {"float": [], "integer": [], "ort": []}
            for _ in range(args.rounds):
                for mode, lib in libs.items():
                    times[mode].append(time_library(args.tessel, lib, args.threads, args.repeat))
                times["ort"].append(time_ort(qdq, args.threads, args.repeat))
            f, i, o = (statistics.median(times[k]) for k in ("float", "integer", "ort"))
            rows.append([name, f"{f:.2f}", f"{i:.2f}", f"{o:.2f}", f"{i / f:.2f}x", f"{f / o:.2f}x", f"{i / o:.2f}x"])
            elapsed = time.time() - started
            print(f"[{done + 1}/{len(models)}] {name} elapsed {elapsed:.0f} s, "
                  f"ETA {elapsed / (done + 1) * (len(models) - done - 1):.0f} s", file=sys.stderr)
    print(table(["QDQ model", "float ms", "integer ms", "ORT ms", "integer/float", "float/ORT", "integer/ORT"], rows))
    print(f"tessel {args.tessel}, {args.threads} thread(s), medians of {args.rounds} interleaved rounds of "
          f"{args.repeat} runs; ORT: onnxruntime's default (QDQ folded into its int8 kernels)")
    print("command: bench/qdq_bench.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
