"""Where a model is slower than ONNX Runtime, kernel by kernel: each Tessel kernel (timed from
`tessel run --trace`, full names) next to the ONNX Runtime nodes that compute the same ONNX node
(its per-node profile, `SessionOptions.enable_profiling`), summed by category (conv3x3, dw5x5,
conv1x1, Concat, MaxPool, ...), then the kernels that lose the most. A diagnostic for choosing what
to work on, not a benchmark (bench/ab_compare.py times whole models against ONNX Runtime).

    ~/.cache/tessel/venv/bin/python bench/kernel_vs_ort.py [--models mnasnet1_0,densenet121] \\
        [--tessel build/src/cli/tessel] [--threads 1] [--top 12]

A Tessel kernel is named after its first ONNX node (fused_<node>); an ONNX Runtime node after
the ONNX output it computes (NCHWc nodes end in _nchwc; a fused Conv+ReLU names the ReLU's
output): both are traced back through the graph to the Conv, Gemm, pool or other anchor that
produced them. A kernel whose nodes ONNX Runtime fused differently (a BatchNormalization it turned
into a Conv) is compared with what maps, so read the categories with the model in mind.
Models are read from ${TESSEL_CACHE:-~/.cache/tessel}/models (scripts/export_models.py).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, exported_models, table  # noqa: E402

ANCHORS = ("Conv", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool", "Concat")


def tessel_kernels(tessel: str, model: str, threads: int) -> dict[str, float]:
    """Kernel name -> its fastest time in ms over the traced runs."""
    with tempfile.TemporaryDirectory() as tmp:
        lib, trace = os.path.join(tmp, "m.so"), os.path.join(tmp, "trace.json")
        subprocess.run([tessel, "compile", model, "-o", lib], check=True, capture_output=True)
        subprocess.run([tessel, "run", lib, "--threads", str(threads), "--repeat", "10", "--trace", trace],
                       check=True, capture_output=True)
        events = json.load(open(trace))["traceEvents"]
    times: dict[str, list[float]] = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            times[e["name"]].append(e["dur"] / 1000)
    return {k: min(v) for k, v in times.items()}


def ort_nodes(model: str, threads: int) -> dict[str, float]:
    """ONNX Runtime node name -> its fastest time in ms over 30 profiled runs (the first 10 skipped)."""
    import numpy as np
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_profiling = True
    with tempfile.TemporaryDirectory() as tmp:
        options.profile_file_prefix = os.path.join(tmp, "ort")
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        feeds = {i.name: np.random.rand(*[d if isinstance(d, int) else 1 for d in i.shape]).astype(np.float32)
                 for i in session.get_inputs()}
        for _ in range(30):
            session.run(None, feeds)
        events = json.load(open(session.end_profiling()))
    times: dict[str, list[float]] = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            times[e["name"][: -len("_kernel_time")]].append(e["dur"] / 1000)
    return {k: min(v[10:] or v) for k, v in times.items()}


class Graph:
    def __init__(self, path: str):
        import onnx
        self.nodes = onnx.load(path, load_external_data=False).graph.node
        self.producer = {o: n for n in self.nodes for o in n.output}
        self.by_name = {n.name: n for n in self.nodes}

    def anchor_of_output(self, output: str):
        node = self.producer.get(output)
        while node is not None and node.op_type not in ANCHORS and node.input:
            node = self.producer.get(node.input[0])
        return node

    @staticmethod
    def category(node) -> str:
        if node is None:
            return "other"
        if node.op_type != "Conv":
            return node.op_type
        attrs = {a.name: a for a in node.attribute}
        k = list(attrs["kernel_shape"].ints) if "kernel_shape" in attrs else []
        group = attrs["group"].i if "group" in attrs else 1
        return ("dw" if group > 1 else "conv") + "x".join(str(d) for d in k)


def compare(graph: Graph, tes: dict[str, float], ort_times: dict[str, float]):
    ort_by_anchor: dict[str, float] = collections.defaultdict(float)
    for name, ms in ort_times.items():
        anchor = graph.anchor_of_output(re.sub(r"_nchwc$", "", name))
        ort_by_anchor[anchor.name if anchor is not None else name] += ms
    rows = []
    for kernel, ms in tes.items():
        first = kernel[len("fused_"):] if kernel.startswith("fused_") else kernel
        node = graph.by_name.get(first)
        anchor = graph.anchor_of_output(node.output[0]) if node is not None and node.output else None
        peer = ort_by_anchor.get(anchor.name) if anchor is not None else None
        rows.append((kernel, Graph.category(anchor), ms, peer))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="mnasnet1_0")
    ap.add_argument("--tessel", default=os.path.join(REPO, "build", "src", "cli", "tessel"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    names = [m for m in args.models.split(",") if m]
    for index, name, path in exported_models(names):
        print(f"[{index + 1}/{len(names)}] {name}", file=sys.stderr, flush=True)
        rows = compare(Graph(path), tessel_kernels(args.tessel, path, args.threads), ort_nodes(path, args.threads))
        totals: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
        for _, cat, ms, peer in rows:
            totals[cat][0] += ms
            totals[cat][1] += peer or 0.0
        cats = sorted(totals.items(), key=lambda kv: kv[1][0] - kv[1][1], reverse=True)
        print(f"\n{name}, {args.threads} thread(s): by category")
        print(table(["category", "Tessel ms", "ORT ms", "ratio"],
                    [[c, f"{t:.3f}", f"{o:.3f}", f"{t / o:.2f}x" if o else "-"] for c, (t, o) in cats]))
        worst = sorted(rows, key=lambda r: r[2] - (r[3] or 0.0), reverse=True)[: args.top]
        print(f"\n{name}: the kernels that lose the most")
        print(table(["kernel", "category", "Tessel ms", "ORT ms", "ratio"],
                    [[k[:56], c, f"{t:.4f}", f"{o:.4f}" if o else "-", f"{t / o:.2f}x" if o else "-"]
                     for k, c, t, o in worst]))
    print(f"\ncommand: bench/kernel_vs_ort.py --models {args.models} --threads {args.threads}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
