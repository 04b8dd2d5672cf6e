#!/usr/bin/env python3
"""The single-operation models of the GPU benchmark, built with onnx.helper:
GEMM (both operands inputs), a 3x3 convolution, and the fused
elementwise + reduction subgraphs compared with torch.compile (LayerNorm,
softmax, bias + GELU). --small shrinks every shape for a run on the CUDA
emulator, which checks the benchmark's plumbing, not its speed.

    micro_models.py OUT_DIR [--small]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model_graph, path, opset=17):
    model = helper.make_model(model_graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def weight(name, shape, rng, scale):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def main(out_dir, small):
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(7)
    n = 256 if small else 4096
    save(helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["C"])], f"gemm_{n}",
                           [f32("A", [n, n]), f32("B", [n, n])], [f32("C", [n, n])]),
         os.path.join(out_dir, "gemm.onnx"))

    c, hw = (16, 28) if small else (64, 56)
    conv = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    save(helper.make_graph([conv], f"conv_{c}x{hw}", [f32("x", [1, c, hw, hw])], [f32("y", [1, c, hw, hw])],
                           [weight("w", [c, c, 3, 3], rng, 0.05), weight("b", [c], rng, 0.1)]),
         os.path.join(out_dir, "conv3x3.onnx"))

    rows, cols = (256, 256) if small else (8192, 1024)
    norm = helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5)
    save(helper.make_graph([norm], "layernorm", [f32("x", [rows, cols])], [f32("y", [rows, cols])],
                           [weight("gamma", [cols], rng, 1.0), weight("beta", [cols], rng, 1.0)]),
         os.path.join(out_dir, "layernorm.onnx"))
    save(helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], "softmax",
                           [f32("x", [rows, cols])], [f32("y", [rows, cols])]),
         os.path.join(out_dir, "softmax.onnx"))
    # GELU as erf (opset 17 has no Gelu): 0.5 * t * (1 + erf(t / sqrt(2))), t = x + bias.
    bias_gelu = [helper.make_node("Add", ["x", "bias"], ["t"]),
                 helper.make_node("Mul", ["t", "inv_sqrt2"], ["u"]),
                 helper.make_node("Erf", ["u"], ["e"]),
                 helper.make_node("Add", ["e", "one"], ["e1"]),
                 helper.make_node("Mul", ["t", "e1"], ["te"]),
                 helper.make_node("Mul", ["te", "half"], ["y"])]
    consts = [weight("bias", [cols], rng, 0.5)] + [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in
                                                   (("inv_sqrt2", 0.7071067811865476), ("one", 1.0), ("half", 0.5))]
    save(helper.make_graph(bias_gelu, "bias_gelu", [f32("x", [rows, cols])], [f32("y", [rows, cols])], consts),
         os.path.join(out_dir, "bias_gelu.onnx"))
    print(f"{out_dir}: gemm {n}^3, conv3x3 {c} channels {hw}x{hw}, layernorm/softmax/bias_gelu {rows}x{cols}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    if len(args) != 1:
        sys.exit(__doc__)
    main(args[0], "--small" in sys.argv)
