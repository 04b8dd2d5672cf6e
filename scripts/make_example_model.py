#!/usr/bin/env python3
# Writes examples/tiny_cnn.onnx, the bundled example model: a small MNIST-sized
# CNN (Conv, Relu, MaxPool, Flatten, Gemm, Softmax) with seeded random weights.
# Run with Debian's /usr/bin/python3 (it has onnx and numpy).
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out_path):
    rng = np.random.default_rng(20261202)
    w1 = (rng.standard_normal((8, 1, 3, 3)) * 0.4).astype(np.float32)
    b1 = (rng.standard_normal(8) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((16, 8, 3, 3)) * 0.15).astype(np.float32)
    b2 = (rng.standard_normal(16) * 0.1).astype(np.float32)
    fc = (rng.standard_normal((16 * 7 * 7, 10)) * 0.05).astype(np.float32)
    fcb = (rng.standard_normal(10) * 0.1).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w1, "conv1.w"), (b1, "conv1.b"), (w2, "conv2.w"), (b2, "conv2.b"), (fc, "fc.w"), (fcb, "fc.b")]]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.w", "conv1.b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.w", "conv2.b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 1, 28, 28])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="tessel/scripts/make_example_model.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out_path)
    print(f"wrote {out_path} ({os.path.getsize(out_path)} bytes)")


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "examples", "tiny_cnn.onnx"))
