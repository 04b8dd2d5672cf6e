#!/usr/bin/env python3
# ConvInteger and QLinearConv against ONNX Runtime: per-tensor zero points, per-channel weight
# scales (and zero points, int8), int32 bias, strides, pads, groups. Each runs on `tessel run
# --reference` and `--target llvm`; integer outputs must match exactly.
# Usage: quantized_conv_vs_ort.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import check, run_tessel  # noqa: E402

X = [1, 4, 9, 9]


def conv_integer(rng, w_type, attrs):
    w = rng.integers(0, 255, [6, 4 // attrs.get("group", 1), 3, 3]).astype(np.uint8)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(128, np.uint8), "xz"),
             numpy_helper.from_array(np.array(131, np.uint8), "wz")]  # ORT: per tensor only
    return helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], **attrs), inits, TensorProto.INT32


def qlinear_conv(rng, w_type, attrs):
    group = attrs.get("group", 1)
    if w_type == np.int8:
        # 7-bit weights (ORT's reduce_range): on a CPU without VNNI, ONNX Runtime's u8 x s8 kernel
        # adds pairs of products in saturating int16, which full-range weights overflow.
        w = rng.integers(-64, 64, [6, 4 // group, 3, 3]).astype(np.int8)
        wz = np.zeros([6], np.int8)
    else:
        w = rng.integers(0, 255, [6, 4 // group, 3, 3]).astype(np.uint8)
        wz = np.array(120, np.uint8)
    inits = [numpy_helper.from_array(np.array(0.02, np.float32), "xs"),
             numpy_helper.from_array(np.array(128, np.uint8), "xz"), numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(rng.uniform(0.001, 0.01, [6]).astype(np.float32), "ws"),
             numpy_helper.from_array(wz, "wz"), numpy_helper.from_array(np.array(0.05, np.float32), "ys"),
             numpy_helper.from_array(np.array(100, np.uint8), "yz"),
             numpy_helper.from_array(rng.integers(-2000, 2000, [6]).astype(np.int32), "b")]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], **attrs)
    return node, inits, TensorProto.UINT8


CASES = [
    ("conv_integer_pads", conv_integer, np.uint8, {"pads": [1, 1, 1, 1]}),
    ("conv_integer_stride2_group2", conv_integer, np.uint8, {"strides": [2, 2], "group": 2}),
    ("qlinear_conv_int8_weights", qlinear_conv, np.int8, {"pads": [1, 1, 1, 1]}),
    ("qlinear_conv_uint8_stride2_group2", qlinear_conv, np.uint8, {"strides": [2, 2], "group": 2}),
]


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261206)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, build, w_type, attrs in CASES:
            node, inits, out_type = build(rng, w_type, attrs)
            graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.UINT8, X)],
                                      [helper.make_tensor_value_info("y", out_type, None)], inits)
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
            feeds = {"x": rng.integers(0, 255, X).astype(np.uint8)}
            path, results = run_tessel(tessel, model, feeds, tmp, name)
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
            for mode, got in results.items():
                failures += not check(f"{name} {mode}", got, want)
    print(f"{len(CASES) * 2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
