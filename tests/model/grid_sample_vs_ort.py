#!/usr/bin/env python3
# GridSample against ONNX Runtime beyond ONNX's small cases: every mode, padding mode and
# align_corners on a 2-D X of 2 x 3 x 7 x 9, linear and nearest on a 3-D X, with grid points up to
# 30% outside [-1, 1] so that every padding rule is exercised. Each runs on `tessel run
# --reference` and `--target llvm`; every output must satisfy max|ours - ORT| / max|ORT| <= 1e-4.
# Usage: grid_sample_vs_ort.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import check, run_tessel  # noqa: E402

TOLERANCE = 1e-4
CASES = [(2, mode, padding, align) for mode in ("nearest", "linear", "cubic")
         for padding in ("zeros", "border", "reflection") for align in (0, 1)]
CASES += [(3, mode, padding, align) for mode in ("nearest", "linear")
          for padding in ("zeros", "border", "reflection") for align in (0, 1)]


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261206)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (dims, mode, padding, align) in enumerate(CASES):
            x_shape = [2, 3, 7, 9] if dims == 2 else [2, 3, 4, 5, 6]
            g_shape = [2, 5, 6, 2] if dims == 2 else [2, 3, 4, 5, 3]
            node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=padding,
                                    align_corners=align)
            graph = helper.make_graph([node], f"gs{n}",
                                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
                                       helper.make_tensor_value_info("grid", TensorProto.FLOAT, g_shape)],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
            feeds = {"x": rng.standard_normal(x_shape).astype(np.float32),
                     "grid": rng.uniform(-1.3, 1.3, g_shape).astype(np.float32)}
            path, results = run_tessel(tessel, model, feeds, tmp, f"gs{n}")
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
            for run_mode, got in results.items():
                label = f"{dims}-D {mode} {padding} align_corners={align} {run_mode}"
                failures += not check(label, got, want, TOLERANCE)
    print(f"{len(CASES) * 2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
