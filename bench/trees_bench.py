"""Decision-tree ensembles (ai.onnx.ml TreeEnsembleRegressor) compiled by Tessel against ONNX
Runtime's tree kernels: forests of full trees of several depths over 20 features, a batch of
1000 samples drawn as the timing feeds are (uniform in [0, 1), thresholds likewise). Tessel runs
shallow trees as path-matrix products and deeper ones as a walk of gathers
(src/frontend/onnx/ml_tree_ensemble.h); both are timed in alternation with ONNX Runtime, rounds
of `--repeat` runs each, and printed as ratios.

    ~/.cache/tessel/venv/bin/python bench/trees_bench.py [--forests 100x3,100x6,100x10,300x8] \\
        [--tessel build/src/cli/tessel] [--threads 1] [--rounds 3] [--repeat 20]
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
from onnx import TensorProto, helper, save

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab_compare import time_library, time_ort  # noqa: E402
from common import REPO, table  # noqa: E402

FEATURES = 20
BATCH = 1000


def full_forest(rng, trees: int, depth: int):
    """A TreeEnsembleRegressor of `trees` full binary trees of `depth` splits per path."""
    attrs = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                             "nodes_truenodeids", "nodes_falsenodeids", "target_treeids", "target_nodeids",
                             "target_ids", "target_weights")}
    inner = 2 ** depth - 1
    for t in range(trees):
        for node in range(2 ** (depth + 1) - 1):
            leaf = node >= inner
            row = (t, node, 0 if leaf else int(rng.integers(FEATURES)), "LEAF" if leaf else "BRANCH_LEQ",
                   0.0 if leaf else float(rng.random()), 0 if leaf else 2 * node + 1, 0 if leaf else 2 * node + 2)
            for key, value in zip(list(attrs)[:7], row):
                attrs[key].append(value)
            if leaf:
                for key, value in zip(list(attrs)[7:], (t, node, 0, float(rng.normal()))):
                    attrs[key].append(value)
    node = helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", n_targets=1, **attrs)
    graph = helper.make_graph([node], "forest", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, FEATURES])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, 1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 3)], ir_version=8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(REPO, "build", "src", "cli", "tessel"))
    ap.add_argument("--forests", default="100x3,100x6,100x10,300x8", help="TREESxDEPTH, comma-separated")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    forests = [tuple(int(v) for v in f.split("x")) for f in args.forests.split(",") if f]
    rng = np.random.default_rng(0)
    rows, started = [], time.time()
    with tempfile.TemporaryDirectory() as work:
        for done, (trees, depth) in enumerate(forests):
            model = os.path.join(work, f"forest_{trees}x{depth}.onnx")
            save(full_forest(rng, trees, depth), model)
            library = model.replace(".onnx", ".so")
            subprocess.run([args.tessel, "compile", model, "-o", library], check=True, capture_output=True)
            tessel_ms, ort_ms = [], []
            for _ in range(args.rounds):
                tessel_ms.append(time_library(args.tessel, library, args.threads, args.repeat))
                ort_ms.append(time_ort(model, args.threads, args.repeat))
            t, o = statistics.median(tessel_ms), statistics.median(ort_ms)
            rows.append([f"{trees} trees, depth {depth}", f"{t:.3f}", f"{o:.3f}", f"{t / o:.2f}x"])
            elapsed = time.time() - started
            print(f"[{done + 1}/{len(forests)}] {trees}x{depth} elapsed {elapsed:.0f} s, "
                  f"ETA {elapsed / (done + 1) * (len(forests) - done - 1):.0f} s", file=sys.stderr)
    print(table(["forest (batch 1000, 20 features)", "Tessel ms", "ORT ms", "Tessel/ORT"], rows))
    print(f"tessel {args.tessel}, {args.threads} thread(s), medians of {args.rounds} interleaved rounds of "
          f"{args.repeat} runs")
    print("command: bench/trees_bench.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
