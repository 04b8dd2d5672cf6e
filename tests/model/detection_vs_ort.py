#!/usr/bin/env python3
# Outputs whose extent the data decides, against ONNX Runtime: a detection head (convolutions, a
# linear Resize, anchors plus regressed offsets, sigmoid class scores) ending in
# NonMaxSuppression and a Gather of the kept boxes and scores; and a mask head (NonZero of a
# thresholded map, Compress of the rows whose score passes). Several random inputs give several
# numbers of kept boxes from one compiled model. Each runs on `tessel run --reference` and
# `--target llvm`: indices must equal ORT's, floats satisfy max|ours - ORT| / max|ORT| <= 1e-4.
# An input whose boxes or scores lie within rounding of a threshold decides nothing about NMS
# (either answer is right), so such inputs are skipped, and said so.
# Usage: detection_vs_ort.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import compare_with_ort  # noqa: E402

TOLERANCE = 1e-4
CLASSES, GRID, IOU, SCORE = 3, 12, 0.3, 0.6
BOXES = GRID * GRID
MARGIN = 1e-5  # how far from a threshold a decision must be to test NMS (rounding: ~1e-7)


def weight(rng, name, shape, scale):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def detection_head(rng):
    """x [1, 8, 6, 6] -> conv, relu, 2x linear resize -> boxes [1, 144, 4] and scores [1, 3, 144]."""
    cells = (np.arange(GRID, dtype=np.float32) + 0.5) / GRID
    cy, cx = np.meshgrid(cells, cells, indexing="ij")
    anchors = np.stack([cy - 0.08, cx - 0.08, cy + 0.08, cx + 0.08], -1).reshape(1, BOXES, 4)
    inits = [weight(rng, "w1", [16, 8, 3, 3], 0.3), weight(rng, "wb", [4, 16, 1, 1], 0.02),
             weight(rng, "wc", [CLASSES, 16, 1, 1], 0.4), numpy_helper.from_array(anchors.astype(np.float32), "anchors"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
             numpy_helper.from_array(np.array([1, 4, BOXES], np.int64), "box_shape"),
             numpy_helper.from_array(np.array([1, CLASSES, BOXES], np.int64), "score_shape"),
             numpy_helper.from_array(np.array([30], np.int64), "most"),
             numpy_helper.from_array(np.array([IOU], np.float32), "iou"),
             numpy_helper.from_array(np.array([SCORE], np.float32), "least"),
             numpy_helper.from_array(np.array(2, np.int64), "two"),
             numpy_helper.from_array(np.array(BOXES, np.int64), "per_class"),
             numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array([0], np.int64), "zero")]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Resize", ["r1", "", "scales"], ["up"], mode="linear",
                              coordinate_transformation_mode="half_pixel"),
             helper.make_node("Conv", ["up", "wb"], ["deltas"]),
             helper.make_node("Reshape", ["deltas", "box_shape"], ["d3"]),
             helper.make_node("Transpose", ["d3"], ["offsets"], perm=[0, 2, 1]),
             helper.make_node("Add", ["anchors", "offsets"], ["boxes"]),
             helper.make_node("Conv", ["up", "wc"], ["logits"]),
             helper.make_node("Reshape", ["logits", "score_shape"], ["l3"]),
             helper.make_node("Sigmoid", ["l3"], ["scores"]),
             helper.make_node("NonMaxSuppression", ["boxes", "scores", "most", "iou", "least"], ["selected"]),
             # The kept boxes and their scores: class * boxes + box indexes the flat scores.
             helper.make_node("Gather", ["selected", "two"], ["box_index"], axis=1),
             helper.make_node("Gather", ["selected", "one"], ["class_index"], axis=1),
             helper.make_node("Squeeze", ["boxes", "zero"], ["boxes2"]),
             helper.make_node("Gather", ["boxes2", "box_index"], ["kept_boxes"]),
             helper.make_node("Mul", ["class_index", "per_class"], ["class_base"]),
             helper.make_node("Add", ["class_base", "box_index"], ["flat_index"]),
             helper.make_node("Reshape", ["scores", "flat_shape"], ["flat_scores"]),
             helper.make_node("Gather", ["flat_scores", "flat_index"], ["kept_scores"])]
    inits.append(numpy_helper.from_array(np.array([CLASSES * BOXES], np.int64), "flat_shape"))
    outputs = [helper.make_tensor_value_info(n, t, None) for n, t in
               [("selected", TensorProto.INT64), ("kept_boxes", TensorProto.FLOAT),
                ("kept_scores", TensorProto.FLOAT), ("boxes", TensorProto.FLOAT), ("scores", TensorProto.FLOAT)]]
    graph = helper.make_graph(nodes, "detection_head",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6, 6])], outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def mask_head():
    """NonZero of map > 0.5 ([2, k] coordinates) and Compress of the rows of `rows` whose score passes."""
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    nodes = [helper.make_node("Greater", ["map", "half"], ["hot"]),
             helper.make_node("NonZero", ["hot"], ["where"]),
             helper.make_node("Transpose", ["where"], ["points"], perm=[1, 0]),
             helper.make_node("Greater", ["score", "half"], ["keep"]),
             helper.make_node("Compress", ["rows", "keep"], ["kept_rows"], axis=0),
             helper.make_node("Exp", ["kept_rows"], ["kept_exp"])]
    graph = helper.make_graph(nodes, "mask_head",
                              [helper.make_tensor_value_info("map", TensorProto.FLOAT, [7, 9]),
                               helper.make_tensor_value_info("score", TensorProto.FLOAT, [20]),
                               helper.make_tensor_value_info("rows", TensorProto.FLOAT, [20, 5])],
                              [helper.make_tensor_value_info("points", TensorProto.INT64, None),
                               helper.make_tensor_value_info("kept_exp", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def iou_matrix(b):
    lo, hi = np.minimum(b[:, :2], b[:, 2:]), np.maximum(b[:, :2], b[:, 2:])
    area = np.prod(hi - lo, 1)
    inter = np.prod(np.clip(np.minimum(hi[:, None], hi[None]) - np.maximum(lo[:, None], lo[None]), 0, None), 2)
    return inter / np.maximum(area[:, None] + area[None] - inter, 1e-12)


def borderline(boxes, scores):
    """Whether any decision of NMS lies within MARGIN of its threshold (or two scores tie)."""
    iou = iou_matrix(boxes[0].astype(np.float64))
    ties = min(np.diff(np.sort(per_class)).min() for per_class in scores[0])
    return np.abs(iou - IOU).min() < MARGIN or np.abs(scores - SCORE).min() < MARGIN or ties < MARGIN


def compare(tessel, model, feeds, tmp, name, float_outputs):
    ok, want = compare_with_ort(tessel, model, feeds, tmp, name, float_outputs, TOLERANCE)
    return ok, [w.shape for w in want]


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261207)
    model = detection_head(rng)
    failures = runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        tried = 0
        while runs < 4 and tried < 20:
            tried += 1
            feeds = {"x": rng.standard_normal([1, 8, 6, 6]).astype(np.float32)}
            with open(os.path.join(tmp, "probe.onnx"), "wb") as f:
                f.write(model.SerializeToString())
            boxes, scores = ort.InferenceSession(os.path.join(tmp, "probe.onnx"),
                                                 providers=["CPUExecutionProvider"]).run(["boxes", "scores"], feeds)
            if borderline(boxes, scores):
                print(f"skip input {tried}: a box or score within {MARGIN} of a threshold")
                continue
            ok, shapes = compare(tessel, model, feeds, tmp, f"detect{tried}",
                                 {"kept_boxes", "kept_scores", "boxes", "scores"})
            print(f"  input {tried}: {shapes[0][0]} boxes kept")
            failures += not ok
            runs += 1
        failures += runs < 4
        mask = mask_head()
        for n in range(3):
            feeds = {"map": rng.random([7, 9]).astype(np.float32), "score": rng.random(20).astype(np.float32),
                     "rows": rng.standard_normal([20, 5]).astype(np.float32)}
            ok, shapes = compare(tessel, mask, feeds, tmp, f"mask{n}", {"kept_exp"})
            print(f"  mask input {n}: {shapes[0][0]} points, {shapes[1][0]} rows")
            failures += not ok
    print(f"{runs + 3 - failures} of {runs + 3} inputs passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
