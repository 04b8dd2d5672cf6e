#!/usr/bin/env python3
# QDQ-quantized CNNs against ONNX Runtime. The exported ResNet-18 and MobileNetV2 (ReLU6 as Clip)
# are quantized here in the format ONNX Runtime's quantizer writes (QuantFormat.QDQ: uint8
# activations calibrated by min/max, int8 symmetric per-channel 7-bit weights, int32 biases with scale
# x_scale * w_scale, a QuantizeLinear / DequantizeLinear pair after every float activation; a Relu
# or Clip kept between a Conv and its QuantizeLinear). With `--qdq integer` Tessel folds each
# DequantizeLinear -> Conv [-> Relu or Clip] -> QuantizeLinear into an integer convolution, as ONNX
# Runtime does; with `--qdq float` (the default) the model runs as written. The float ops between
# them (Add, MaxPool, GlobalAveragePool, Gemm) run on dequantized values in both. The quantized
# output must be ONNX Runtime's within one quantization step with `--qdq integer` (a value near a
# rounding tie may land on either side, as it does between ONNX Runtime's own folded and unfolded
# runs, printed for comparison) and within two as written, on `tessel run --reference` and
# `--target llvm`. MobileNetV2 is cut after its third block: with random weights its quantized
# logits are chaotic (ONNX Runtime's two runs of the whole model differ by several steps), while its
# first blocks test depthwise convs and ReLU6 folded.
# Usage: qdq_cnn_vs_ort.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
import onnx
import onnx.utils
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import run_tessel  # noqa: E402

MODELS = os.path.join(os.environ.get("TESSEL_CACHE", os.path.expanduser("~/.cache/tessel")), "models")


def activation_ranges(model, feeds):
    """min and max of every float tensor a node writes (and of the inputs), over the calibration feeds."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    known = {o.name for o in probe.graph.output}
    for node in probe.graph.node:
        for out in node.output:
            if out not in known:
                probe.graph.output.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    ranges = {}
    for feed in feeds:
        values = dict(zip(names, session.run(None, feed)), **feed)
        for name, v in values.items():
            lo, hi = min(0.0, float(v.min())), max(0.0, float(v.max()))
            old = ranges.get(name, (lo, hi))
            ranges[name] = (min(lo, old[0]), max(hi, old[1]))
    return ranges


def uint8_params(lo, hi):
    scale = max(hi - lo, 1e-8) / 255.0
    return np.float32(scale), np.uint8(np.clip(round(-lo / scale), 0, 255))


class QdqWriter:
    def __init__(self, model, ranges):
        self.model, self.ranges = model, ranges
        self.inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        self.new_inits, self.nodes = [], []

    def init(self, name, value):
        self.new_inits.append(numpy_helper.from_array(value, name))
        return name

    def qdq(self, tensor):
        """QuantizeLinear then DequantizeLinear of a float activation; returns the dequantized name."""
        scale, zero = uint8_params(*self.ranges[tensor])
        s, z = self.init(tensor + "_scale", scale), self.init(tensor + "_zero", zero)
        self.nodes.append(helper.make_node("QuantizeLinear", [tensor, s, z], [tensor + "_q"]))
        self.nodes.append(helper.make_node("DequantizeLinear", [tensor + "_q", s, z], [tensor + "_dq"]))
        return tensor + "_dq"

    def conv_weights(self, node, x_scale):
        """The Conv's weight (int8 per output channel, symmetric, 7 bits: ORT's reduce_range, without
        which its u8 x s8 kernels on a CPU without VNNI saturate pairs of products in int16 and
        disagree with its own unfolded run by several steps) and bias (int32), dequantized."""
        w = self.inits[node.input[1]]
        w_scale = (np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 63.0).astype(np.float32)
        w_scale = np.maximum(w_scale, np.float32(1e-8))
        w_q = np.clip(np.round(w / w_scale.reshape(-1, 1, 1, 1)), -63, 63).astype(np.int8)
        name = node.input[1]
        self.nodes.append(helper.make_node(
            "DequantizeLinear", [self.init(name + "_q", w_q), self.init(name + "_scale", w_scale),
                                 self.init(name + "_zero", np.zeros(w.shape[0], np.int8))], [name + "_dq"], axis=0))
        inputs = [name + "_dq"]
        if len(node.input) > 2:
            b = self.inits[node.input[2]]
            b_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
            b_q = np.round(b / b_scale).astype(np.int32)
            bname = node.input[2]
            self.nodes.append(helper.make_node(
                "DequantizeLinear", [self.init(bname + "_q", b_q), self.init(bname + "_scale", b_scale),
                                     self.init(bname + "_zero", np.zeros(w.shape[0], np.int32))],
                [bname + "_dq"], axis=0))
            inputs.append(bname + "_dq")
        return inputs

    def write(self):
        g = self.model.graph
        readers = {}
        for node in g.node:
            for i in node.input:
                readers.setdefault(i, []).append(node)
        for node in g.node:  # the exporter shares equal weights through Identity nodes
            if node.op_type == "Identity" and node.input[0] in self.inits:
                self.inits[node.output[0]] = self.inits[node.input[0]]
        dequantized = {i.name: self.qdq(i.name) for i in g.input}
        for node in g.node:
            ins = [dequantized.get(i, i) for i in node.input]
            if node.op_type == "Conv":
                x_scale, _ = uint8_params(*self.ranges[node.input[0]])
                ins = ins[:1] + self.conv_weights(node, x_scale)
            self.nodes.append(helper.make_node(node.op_type, ins, list(node.output), name=node.name,
                                               **{a.name: helper.get_attribute_value(a) for a in node.attribute}))
            out = node.output[0]
            # As ONNX Runtime's quantizer: no pair between a Conv and the Relu or Clip that alone reads it.
            clamped = node.op_type == "Conv" and [r.op_type for r in readers.get(out, [])] in (["Relu"], ["Clip"])
            constant = node.op_type == "Constant" or out in self.inits
            if out in self.ranges and not clamped and not constant and node.op_type != "Flatten":
                dequantized[out] = self.qdq(out)
        for o in g.output:
            if o.name not in dequantized:
                self.qdq(o.name)
        used = {i for n in self.nodes for i in n.input}
        inits = [t for t in g.initializer if t.name in used] + self.new_inits
        outputs = [f"output{i}_q" for i in range(len(g.output))]  # names that are also file names
        for o, name in zip(g.output, outputs):
            self.nodes.append(helper.make_node("Identity", [o.name + "_q"], [name]))
        dims = [[d.dim_value for d in o.type.tensor_type.shape.dim] for o in g.output]
        graph = helper.make_graph(self.nodes, g.name + "_qdq", list(g.input),
                                  [helper.make_tensor_value_info(o, TensorProto.UINT8, d) for o, d in zip(outputs, dims)],
                                  inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        return model


def print_steps(label, ours, theirs, most=1):
    """Prints how many quantized values differ and by how many steps; True within `most` steps."""
    steps = np.abs(ours.astype(np.int32) - theirs.astype(np.int32))
    passed = ours.shape == theirs.shape and int(steps.max()) <= most
    print(f"{'PASS' if passed else 'FAIL'} {label}: max {int(steps.max())} step(s), "
          f"{np.count_nonzero(steps)} of {steps.size} differ")
    return passed


def check_model(tessel, model_name, tmp, up_to=None):
    """Quantizes the exported model (up to the value `up_to`, when given) and holds each Tessel mode
    to ONNX Runtime's; True if all pass."""
    path = os.path.join(MODELS, model_name + ".onnx")
    if up_to:
        cut = os.path.join(tmp, model_name + "_cut.onnx")
        onnx.utils.extract_model(path, cut, [onnx.load(path).graph.input[0].name], [up_to])
        path = cut
    model = onnx.load(path)
    rng = np.random.default_rng(0)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    name = model.graph.input[0].name
    feeds = [{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(3)]
    qdq = QdqWriter(model, activation_ranges(model, feeds)).write()
    onnx.checker.check_model(qdq)
    feed = {name: rng.standard_normal(shape).astype(np.float32) * 0.8}
    # ONNX Runtime folds (integer kernels) by default; without graph optimizations it runs as written.
    as_written = ort.SessionOptions()
    as_written.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    wants = {"integer": ort.InferenceSession(qdq.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feed),
             "float": ort.InferenceSession(qdq.SerializeToString(), as_written,
                                           providers=["CPUExecutionProvider"]).run(None, feed)}
    print_steps(f"{model_name}: ONNX Runtime as written vs folded", wants["float"][0], wants["integer"][0])
    # Where ONNX Runtime's own folded run is further than a step from its run as written (its
    # integer kernels round otherwise on a CPU without VNNI), the folded run is held to that distance.
    own = int(np.abs(wants["float"][0].astype(np.int32) - wants["integer"][0].astype(np.int32)).max())
    integer_steps = max(1, own)
    ok = True
    for qdq_mode in ("float", "integer"):
        _, results = run_tessel(tessel, qdq, feed, tmp, model_name + "_qdq", ["--qdq", qdq_mode])
        for mode, got in results.items():
            if isinstance(got, str):
                print(f"FAIL {model_name} --qdq {qdq_mode} {mode}: {got}")
                ok = False
                continue
            for ours, theirs in zip(got.values(), wants[qdq_mode]):
                label = f"{model_name}: --qdq {qdq_mode:7s} {mode:11s} vs ONNX Runtime {qdq_mode:7s}"
                # Float sums in another order put other values across a rounding tie, and
                # through twenty requantizations two such flips can meet: two steps as written.
                ok = print_steps(label, ours, theirs, integer_steps if qdq_mode == "integer" else 2) and ok
    return ok


def main():
    tessel = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        ok = all([check_model(tessel, "resnet18", tmp),
                  check_model(tessel, "mobilenet_v2", tmp, "/features/features.3/Add_output_0")])
    print("all passed" if ok else "some failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
