#!/usr/bin/env python3
# LSTM, GRU and RNN variants against ONNX Runtime: each built with onnx.helper (seeded weights),
# run with the same inputs on ORT and on Tessel (`tessel run --reference` and `--target llvm`);
# every output must satisfy max|ours - ORT| / max|ORT| <= 1e-4. Sequence lengths are a run-time
# input. ORT refuses layout = 1 (batch first); ONNX's own batchwise cases cover it.
# Usage: recurrent_vs_ort.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import check, run_tessel  # noqa: E402

T, B, I, H = 5, 3, 4, 6
TOLERANCE = 1e-4
CASES = [
    ("lstm_bidirectional", "LSTM", "bidirectional", [5, 3, 1], {}),
    ("lstm_reverse_clip_coupled", "LSTM", "reverse", [5, 5, 2], {"clip": 0.8, "input_forget": 1}),
    ("gru_bidirectional_reset_first", "GRU", "bidirectional", [2, 5, 4], {"linear_before_reset": 1}),
    ("gru_reverse", "GRU", "reverse", [5, 3, 1], {}),
    ("gru_activations", "GRU", "bidirectional", [5, 4, 3],
     {"activations": ["HardSigmoid", "LeakyRelu", "ScaledTanh", "Affine"],
      "activation_alpha": [0.3, 0.05, 1.5, 0.7], "activation_beta": [0.4, 0.6, 0.1]}),
    ("rnn_bidirectional", "RNN", "bidirectional", [1, 5, 3], {}),
]


def build(rng, name, op, direction, attrs):
    d = 2 if direction == "bidirectional" else 1
    g = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    inits = [numpy_helper.from_array((rng.standard_normal((d, g * H, I)) * 0.4).astype(np.float32), "w"),
             numpy_helper.from_array((rng.standard_normal((d, g * H, H)) * 0.4).astype(np.float32), "r"),
             numpy_helper.from_array((rng.standard_normal((d, 2 * g * H)) * 0.2).astype(np.float32), "b")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, B, I]),
              helper.make_tensor_value_info("lens", TensorProto.INT32, [B]),
              helper.make_tensor_value_info("h0", TensorProto.FLOAT, [d, B, H])]
    names, outs = ["x", "w", "r", "b", "lens", "h0"], ["y", "y_h"]
    if op == "LSTM":
        inputs.append(helper.make_tensor_value_info("c0", TensorProto.FLOAT, [d, B, H]))
        inits.append(numpy_helper.from_array((rng.standard_normal((d, 3 * H)) * 0.3).astype(np.float32), "p"))
        names += ["c0", "p"]
        outs.append("y_c")
    node = helper.make_node(op, names, outs, hidden_size=H, direction=direction, **attrs)
    graph = helper.make_graph([node], name, inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=7), outs, d


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261206)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, direction, lens, attrs in CASES:
            model, outs, d = build(rng, name, op, direction, attrs)
            feeds = {"x": rng.standard_normal((T, B, I)).astype(np.float32), "lens": np.array(lens, np.int32),
                     "h0": rng.standard_normal((d, B, H)).astype(np.float32)}
            if op == "LSTM":
                feeds["c0"] = rng.standard_normal((d, B, H)).astype(np.float32)
            path, results = run_tessel(tessel, model, feeds, tmp, name)
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
            for mode, got in results.items():
                failures += not check(f"{name} {mode}", got, want, TOLERANCE)
    print(f"{len(CASES) * 2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
