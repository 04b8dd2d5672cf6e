#!/usr/bin/env python3
# Operators Tessel imports as compositions of other ops, against ONNX Runtime on inputs larger
# than ONNX's own cases: LRN (windows of 3 to 7 channels, default and other alpha, beta, bias;
# ORT refuses even windows), GlobalLpPool (p = 1, 2, 3), CenterCropPad (crop and pad on one
# tensor), Det (batched 3x3, 5x5), Col2Im (strides, pads, dilations), TfIdfVectorizer (uni-, bi-
# and trigrams with skips, TF, IDF and TFIDF with weights, int32 rows and an int64 vector). Each
# runs on `tessel run --reference` and `--target llvm`; every output must satisfy
# max|ours - ORT| / max|ORT| <= 1e-4.
# Usage: composites_vs_ort.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import check, run_tessel  # noqa: E402

TOLERANCE = 1e-4
X = [2, 7, 5, 6]
CASES = [
    ("lrn_size3", "LRN", {"size": 3}, 13, []),
    ("lrn_size5_custom", "LRN", {"size": 5, "alpha": 0.01, "beta": 0.5, "bias": 2.0}, 13, []),
    ("lrn_size7", "LRN", {"size": 7}, 13, []),
    ("global_lp_pool_p1", "GlobalLpPool", {"p": 1}, 13, []),
    ("global_lp_pool_p2", "GlobalLpPool", {"p": 2}, 13, []),
    ("global_lp_pool_p3", "GlobalLpPool", {"p": 3}, 13, []),
    ("center_crop_pad", "CenterCropPad", {}, 18, [np.array([3, 9, 4, 8], np.int64)]),
    ("det_3x3_batched", "Det", {}, 13, [], [4, 2, 3, 3]),
    ("det_5x5", "Det", {}, 13, [], [5, 5]),
    ("col2im_strides_pads_dilations", "Col2Im", {"strides": [2, 1], "pads": [1, 0, 1, 2], "dilations": [1, 2]},
     18, [np.array([9, 10], np.int64), np.array([3, 2], np.int64)], [2, 12, 50]),
]

# Unigrams 1, 4, 5; bigrams (1, 2), (3, 3), (5, 0); trigrams (0, 1, 2), (2, 2, 4); output slots
# in another order than the pool's.
TFIDF_POOL = {"pool_int64s": [1, 4, 5, 1, 2, 3, 3, 5, 0, 0, 1, 2, 2, 2, 4], "ngram_counts": [0, 3, 9],
              "ngram_indexes": [7, 0, 3, 1, 6, 2, 5, 4], "max_gram_length": 3}
TFIDF_WEIGHTS = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 2.5]
TFIDF_CASES = [
    ("tfidf_tf_rows", {"min_gram_length": 1, "max_skip_count": 2, "mode": "TF"}, TensorProto.INT32, [3, 20]),
    ("tfidf_idf_rows", {"min_gram_length": 2, "max_skip_count": 1, "mode": "IDF", "weights": TFIDF_WEIGHTS},
     TensorProto.INT32, [3, 20]),
    ("tfidf_tfidf_vector", {"min_gram_length": 1, "max_skip_count": 3, "mode": "TFIDF", "weights": TFIDF_WEIGHTS},
     TensorProto.INT64, [30]),
]


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261206)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, attrs, opset, constants, *shape in CASES:
            x_shape = shape[0] if shape else X
            inits = [numpy_helper.from_array(v, f"c{i}") for i, v in enumerate(constants)]
            node = helper.make_node(op, ["x"] + [t.name for t in inits], ["y"], **attrs)
            graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
            feeds = {"x": rng.standard_normal(x_shape).astype(np.float32)}
            path, results = run_tessel(tessel, model, feeds, tmp, name)
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
            for mode, got in results.items():
                failures += not check(f"{name} {mode}", got, want, TOLERANCE)
        for name, attrs, dtype, shape in TFIDF_CASES:
            node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **TFIDF_POOL, **attrs)
            graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", dtype, shape)],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
            numpy_type = np.int32 if dtype == TensorProto.INT32 else np.int64
            feeds = {"x": rng.integers(0, 6, shape).astype(numpy_type)}
            path, results = run_tessel(tessel, model, feeds, tmp, name)
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
            for mode, got in results.items():
                failures += not check(f"{name} {mode}", got, want, TOLERANCE)
    print(f"{(len(CASES) + len(TFIDF_CASES)) * 2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
