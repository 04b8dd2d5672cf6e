#!/usr/bin/env python3
# RoiAlign against ONNX Runtime: two images, boxes inside, crossing the border, outside and
# smaller than a pixel, a spatial scale of 0.5, both coordinate transformations, average and
# max, sampling ratios 1 and 3, batch indices given at run time. MaxRoiPool on the same kinds of
# boxes (its batch index in each box), two pooled shapes and spatial scales. Each runs on `tessel
# run --reference` and `--target llvm`; every output must satisfy max|ours - ORT| / max|ORT| <= 1e-4.
# Usage: roi_align_vs_ort.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import check, run_tessel  # noqa: E402

TOLERANCE = 1e-4
CASES = [(mode, transform, ratio) for mode in ("avg", "max") for transform in ("half_pixel", "output_half_pixel")
         for ratio in (1, 3)]
ROIS = np.array([[2, 3, 15, 12], [-4, -2, 6, 5], [10, 14, 30, 26], [40, 40, 50, 50], [5.2, 5.3, 5.6, 5.5]],
                np.float32)

# Batch index, x1, y1, x2, y2: inside, crossing the border, outside (every bin empty: zeros), a
# box of one pixel. No coordinate lands on a half after scaling, where rounding conventions differ.
POOL_ROIS = np.array([[0, 2.2, 3.1, 15.3, 12.9], [1, -4.2, -2.3, 6.2, 5.1], [1, 10.1, 14.3, 30.2, 26.7],
                      [0, 40.3, 40.1, 50.2, 50.3], [1, 5.2, 5.3, 5.6, 5.4]], np.float32)
POOLS = [([3, 4], 0.5), ([2, 2], 1.0)]


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261206)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (mode, transform, ratio) in enumerate(CASES):
            node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], mode=mode,
                                    coordinate_transformation_mode=transform, sampling_ratio=ratio,
                                    output_height=3, output_width=4, spatial_scale=0.5)
            graph = helper.make_graph([node], f"roi{n}",
                                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 14, 16]),
                                       helper.make_tensor_value_info("rois", TensorProto.FLOAT, [5, 4]),
                                       helper.make_tensor_value_info("batch", TensorProto.INT64, [5])],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8)
            feeds = {"x": rng.standard_normal([2, 3, 14, 16]).astype(np.float32), "rois": ROIS,
                     "batch": np.array([0, 1, 1, 0, 1], np.int64)}
            path, results = run_tessel(tessel, model, feeds, tmp, f"roi{n}")
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
            for run_mode, got in results.items():
                failures += not check(f"{mode} {transform} ratio {ratio} {run_mode}", got, want, TOLERANCE)
        for n, (pooled, scale) in enumerate(POOLS):
            node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=pooled, spatial_scale=scale)
            graph = helper.make_graph([node], f"pool{n}",
                                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 14, 16]),
                                       helper.make_tensor_value_info("rois", TensorProto.FLOAT, [5, 5])],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8)
            feeds = {"x": rng.standard_normal([2, 3, 14, 16]).astype(np.float32), "rois": POOL_ROIS}
            path, results = run_tessel(tessel, model, feeds, tmp, f"pool{n}")
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
            for run_mode, got in results.items():
                failures += not check(f"MaxRoiPool {pooled} scale {scale} {run_mode}", got, want, TOLERANCE)
    total = (len(CASES) + len(POOLS)) * 2
    print(f"{total - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
