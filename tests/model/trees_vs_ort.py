#!/usr/bin/env python3
# Decision-tree ensembles (ai.onnx.ml) against ONNX Runtime: random forests of TreeEnsembleRegressor
# and TreeEnsembleClassifier (ml opset 3) and TreeEnsemble (ml opset 5) with every branch mode, set membership, missing values
# that take the true branch, every aggregate function, post transforms, base values and several
# votes per leaf, plus Binarizer and ArrayFeatureExtractor. Features and thresholds are small whole
# numbers with NaN among the features, so that samples land exactly on thresholds and set members. Each model runs
# on `tessel run --reference` and `--target llvm`; every output must satisfy
# max|ours - ORT| / max|ORT| <= 1e-5.
# Usage: trees_vs_ort.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import check, run_tessel  # noqa: E402

TOLERANCE = 1e-5
FEATURES = 6
LEGACY_MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


def grid_value(rng):
    # Whole numbers: ONNX Runtime tests set membership on the feature cast to an integer.
    return float(rng.integers(-3, 4))


def random_tree(rng, depth, modes):
    """A nested tuple: ("leaf",) or (mode, feature, threshold or set, missing_true, true, false)."""
    if depth == 0 or (depth < 4 and rng.random() < 0.25):
        return ("leaf",)
    mode = int(rng.choice(modes))
    value = sorted({grid_value(rng) for _ in range(3)}) if mode == 6 else grid_value(rng)
    return (mode, int(rng.integers(FEATURES)), value, int(rng.random() < 0.3),
            random_tree(rng, depth - 1, modes), random_tree(rng, depth - 1, modes))


def votes(rng, targets):
    return [(int(t), float(rng.normal())) for t in rng.choice(targets, size=rng.integers(1, targets + 1),
                                                              replace=False)]


def legacy_regressor(rng, trees, targets, aggregate, post):
    nodes = {k: [] for k in ("treeids", "nodeids", "featureids", "modes", "values", "truenodeids",
                             "falsenodeids", "missing_value_tracks_true")}
    target = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    for t in range(trees):
        queue, next_id = [(random_tree(rng, 5, range(6)), 0)], 1
        while queue:
            tree, node_id = queue.pop(0)
            leaf = tree[0] == "leaf"
            ids = (0, 0) if leaf else (next_id, next_id + 1)
            if not leaf:
                queue += [(tree[4], ids[0]), (tree[5], ids[1])]
                next_id += 2
            for key, value in zip(nodes, (t, node_id, 0 if leaf else tree[1],
                                          "LEAF" if leaf else LEGACY_MODES[tree[0]], 0.0 if leaf else tree[2],
                                          ids[0], ids[1], 0 if leaf else tree[3])):
                nodes[key].append(value)
            # Every leaf votes for every target: ONNX Runtime leaves out the base value of a
            # target that no reached leaf votes for, where ONNX adds it.
            for target_id, weight in [(t, float(rng.normal())) for t in range(targets)] if leaf else []:
                for key, value in zip(target, (t, node_id, target_id, weight)):
                    target[key].append(value)
    attrs = {"nodes_" + k: v for k, v in nodes.items()}
    attrs.update({"target_" + k: v for k, v in target.items()})
    return helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", n_targets=targets,
                            aggregate_function=aggregate, post_transform=post,
                            base_values=[float(v) for v in rng.normal(size=targets)], **attrs)


def legacy_classifier(rng, trees, labels, post, binary):
    """A TreeEnsembleClassifier: a binary model's leaves vote for class id 0 alone (a single
    score, as boosted trees are written); otherwise every leaf votes for every class, as a random
    forest's do (ONNX Runtime leaves a class that no reached leaf votes for out of the arg max)."""
    regressor = legacy_regressor(rng, trees, 1 if binary else len(labels), "SUM", "NONE")
    attrs = {a.name: helper.get_attribute_value(a) for a in regressor.attribute}
    votes = {("class_" + k[len("target_"):] if k.startswith("target_") else k): v for k, v in attrs.items()
             if k.startswith("nodes_") or k.startswith("target_")}
    return helper.make_node("TreeEnsembleClassifier", ["x"], ["label", "y"], domain="ai.onnx.ml",
                            classlabels_int64s=labels, post_transform=post,
                            base_values=[float(v) for v in rng.normal(size=1 if binary else len(labels))],
                            **votes)


def tree_ensemble(rng, trees, targets, aggregate, post):
    nodes = {k: [] for k in ("featureids", "modes", "splits", "truenodeids", "trueleafs", "falsenodeids",
                             "falseleafs", "missing_value_tracks_true")}
    leaf_targets, leaf_weights, members, roots = [], [], [], []

    def add(tree):
        if tree[0] == "leaf":
            target_id, weight = votes(rng, targets)[0]
            leaf_targets.append(target_id)
            leaf_weights.append(weight)
            return len(leaf_targets) - 1, 1
        index = len(nodes["featureids"])
        for key in nodes:
            nodes[key].append(0)
        if tree[0] == 6:
            members.extend(tree[2] + [np.nan])
        nodes["featureids"][index], nodes["modes"][index] = tree[1], tree[0]
        nodes["splits"][index] = 0.0 if tree[0] == 6 else tree[2]
        nodes["missing_value_tracks_true"][index] = tree[3]
        nodes["truenodeids"][index], nodes["trueleafs"][index] = add(tree[4])
        nodes["falsenodeids"][index], nodes["falseleafs"][index] = add(tree[5])
        return index, 0

    for _ in range(trees):
        tree = random_tree(rng, 5, range(7))
        while tree[0] == "leaf":
            tree = random_tree(rng, 5, range(7))
        roots.append(add(tree)[0])
    attrs = {"nodes_" + k: v for k, v in nodes.items() if k not in ("modes", "splits")}
    count = len(nodes["modes"])
    attrs["nodes_modes"] = helper.make_tensor("modes", TensorProto.UINT8, [count], nodes["modes"])
    attrs["nodes_splits"] = helper.make_tensor("splits", TensorProto.FLOAT, [count], nodes["splits"])
    attrs["leaf_weights"] = helper.make_tensor("weights", TensorProto.FLOAT, [len(leaf_weights)], leaf_weights)
    if members:
        attrs["membership_values"] = helper.make_tensor("members", TensorProto.FLOAT, [len(members)], members)
    return helper.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", n_targets=targets,
                            aggregate_function=aggregate, post_transform=post, leaf_targetids=leaf_targets,
                            tree_roots=roots, **attrs)


def model_of(node, x_shape, ml_opset, extra_inputs=()):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape), *extra_inputs]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if node.op_type == "TreeEnsembleClassifier":
        outputs.insert(0, helper.make_tensor_value_info("label", TensorProto.INT64, None))
    graph = helper.make_graph([node], node.op_type, inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", ml_opset)], ir_version=8)


def samples(rng, n):
    x = np.array([[grid_value(rng) for _ in range(FEATURES)] for _ in range(n)], np.float32)
    x[rng.random(x.shape) < 0.1] = np.nan
    return x


def cases(rng):
    for aggregate in range(4):
        for post in range(3):
            yield (f"TreeEnsembleRegressor aggregate {aggregate} post {post}", 3,
                   legacy_regressor(rng, 4, 3, ["AVERAGE", "SUM", "MIN", "MAX"][aggregate],
                                    ["NONE", "SOFTMAX", "LOGISTIC"][post]))
        # TreeEnsemble against ONNX Runtime without a post transform (ORT 1.26 reads 1 as
        # LOGISTIC and 2 as SOFTMAX, the reverse of ONNX's definition; the regressor above runs
        # the same transforms), and MIN and MAX with one target, which every tree votes for (ORT
        # gives 0 where no tree votes; ONNX starts from the type's largest or lowest value).
        targets = 1 if aggregate >= 2 else 3
        yield f"TreeEnsemble aggregate {aggregate}", 5, tree_ensemble(rng, 4, targets, aggregate, 0)
    for post in ("NONE", "SOFTMAX", "LOGISTIC"):
        yield f"TreeEnsembleClassifier 3 classes {post}", 3, legacy_classifier(rng, 5, [10, 20, 30], post, False)
    for post in ("NONE", "LOGISTIC"):
        yield f"TreeEnsembleClassifier binary {post}", 3, legacy_classifier(rng, 5, [0, 1], post, True)
    yield "TreeEnsembleRegressor 60 trees", 3, legacy_regressor(rng, 60, 1, "SUM", "NONE")
    yield "TreeEnsemble 60 trees", 5, tree_ensemble(rng, 60, 2, 1, 0)


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261207)
    failures = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        runs = list(cases(rng))
        runs.append(("Binarizer", 1, helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=0.5)))
        extractor = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")
        for n, (label, ml_opset, node) in enumerate(runs):
            model = model_of(node, [40, FEATURES], ml_opset)
            # ONNX Runtime's Binarizer refuses NaN.
            feeds = {"x": np.nan_to_num(samples(rng, 40)) if label == "Binarizer" else samples(rng, 40)}
            path, results = run_tessel(tessel, model, feeds, tmp, f"m{n}")
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
            for run_mode, got in results.items():
                total += 1
                failures += not check(f"{label} {run_mode}", got, want, TOLERANCE)
        model = model_of(extractor, [40, FEATURES], 1, [helper.make_tensor_value_info("i", TensorProto.INT64, [4])])
        feeds = {"x": np.nan_to_num(samples(rng, 40)), "i": np.array([5, 0, 0, 3], np.int64)}
        path, results = run_tessel(tessel, model, feeds, tmp, "extractor")
        want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
        for run_mode, got in results.items():
            total += 1
            failures += not check(f"ArrayFeatureExtractor {run_mode}", got, want, None)
    print(f"{total - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
