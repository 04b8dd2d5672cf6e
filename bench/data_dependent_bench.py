"""Ops whose output size the data decides, compiled by Tessel against ONNX Runtime's kernels on
the same inputs. NonMaxSuppression: boxes of random centres and sizes (5% to 30% of the unit
square, corner format), uniform scores, IoU threshold 0.5, score threshold 0.05, at most 100
boxes per class; Tessel's composition (src/frontend/onnx/adapters_nms.cpp) does the same work
whatever the data, ranking and the greedy pass over every box of every class (quadratic in the
boxes), where ORT's kernel skips boxes under the score threshold and stops at the limit.
NonZero: a uniform [0, 1) tensor thresholded at 0.5, as a mask would be. Both are timed in
alternation, rounds of `--repeat` runs each, and printed as ratios with the output's extent.

    ~/.cache/tessel/venv/bin/python bench/data_dependent_bench.py [--nms 1000x1,1000x20,3000x1] \\
        [--nonzero 4096,150528] [--tessel build/src/cli/tessel] [--threads 1] [--rounds 3] [--repeat 20]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab_compare import time_library, time_session  # noqa: E402
from common import REPO, table  # noqa: E402


def nms_model(boxes: int, classes: int):
    inits = [numpy_helper.from_array(np.array([100], np.int64), "most"),
             numpy_helper.from_array(np.array([0.5], np.float32), "iou"),
             numpy_helper.from_array(np.array([0.05], np.float32), "least")]
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "most", "iou", "least"], ["selected"])
    graph = helper.make_graph([node], "nms", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, boxes, 4]),
                                              helper.make_tensor_value_info("scores", TensorProto.FLOAT,
                                                                            [1, classes, boxes])],
                              [helper.make_tensor_value_info("selected", TensorProto.INT64, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)


def nonzero_model(n: int):
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    nodes = [helper.make_node("Greater", ["x", "half"], ["hot"]), helper.make_node("NonZero", ["hot"], ["where"])]
    graph = helper.make_graph(nodes, "nonzero", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("where", TensorProto.INT64, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def nms_inputs(rng, boxes: int, classes: int):
    centre = rng.random((1, boxes, 2), dtype=np.float32)
    half = rng.uniform(0.025, 0.15, (1, boxes, 2)).astype(np.float32)
    return {"boxes": np.concatenate([centre - half, centre + half], -1),
            "scores": rng.random((1, classes, boxes), dtype=np.float32)}


def main() -> None:
    import onnxruntime as ort
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(REPO, "build", "src", "cli", "tessel"))
    ap.add_argument("--nms", default="1000x1,1000x20,3000x1", help="BOXESxCLASSES, comma-separated")
    ap.add_argument("--nonzero", default="4096,150528", help="input sizes, comma-separated")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    cases = [(f"NMS {b} boxes x {k} classes", nms_model(b, k), nms_inputs(rng, b, k))
             for b, k in (tuple(int(v) for v in c.split("x")) for c in args.nms.split(",") if c)]
    cases += [(f"NonZero of {n} entries", nonzero_model(n), {"x": rng.random(n, dtype=np.float32)})
              for n in (int(v) for v in args.nonzero.split(",") if v)]
    rows, started = [], time.time()
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    with tempfile.TemporaryDirectory() as work:
        for done, (label, onnx_model, feeds) in enumerate(cases):
            model = os.path.join(work, f"case{done}.onnx")
            save(onnx_model, model)
            library = model.replace(".onnx", ".so")
            subprocess.run([args.tessel, "compile", model, "-o", library], check=True, capture_output=True)
            in_dir = os.path.join(work, f"in_{done}")
            os.makedirs(in_dir)
            for name, value in feeds.items():
                np.save(os.path.join(in_dir, name + ".npy"), value)
            session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
            extent = session.run(None, feeds)[0].shape
            tessel_ms, ort_ms = [], []
            for _ in range(args.rounds):
                tessel_ms.append(time_library(args.tessel, library, args.threads, args.repeat, in_dir))
                ort_ms.append(time_session(session, feeds, args.repeat))
            t, o = statistics.median(tessel_ms), statistics.median(ort_ms)
            rows.append([label, "x".join(map(str, extent)), f"{t:.3f}", f"{o:.3f}", f"{t / o:.1f}x"])
            elapsed = time.time() - started
            print(f"[{done + 1}/{len(cases)}] {label} elapsed {elapsed:.0f} s, "
                  f"ETA {elapsed / (done + 1) * (len(cases) - done - 1):.0f} s", file=sys.stderr)
    print(table(["case", "output", "Tessel ms", "ORT ms", "Tessel/ORT"], rows))
    print(f"tessel {args.tessel}, {args.threads} thread(s), medians of {args.rounds} interleaved rounds of "
          f"{args.repeat} runs")
    print("command: bench/data_dependent_bench.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
