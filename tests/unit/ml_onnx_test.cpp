// The ai.onnx.ml operators (adapters_ml.cpp, ml_tree_ensemble.cpp): tree
// ensembles, Binarizer and ArrayFeatureExtractor worked by hand, on the
// reference executor and compiled through LLVM; malformed trees and what the
// compositions cannot serve refused with a UserError naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "src/driver/compile_model.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

const double kNaN = std::nan("");

// A builder whose model imports ai.onnx.ml at `ml_opset` and no default domain.
ModelBuilder ml_builder(int ml_opset) {
  ModelBuilder b;
  b.model.mutable_opset_import(0)->set_domain("ai.onnx.ml");
  b.model.mutable_opset_import(0)->set_version(ml_opset);
  return b;
}

onnx::NodeProto* ml_node(ModelBuilder& b, const std::string& op, std::vector<std::string> ins) {
  onnx::NodeProto* n = b.node(op, std::move(ins), {"y"}, "ml");
  n->set_domain("ai.onnx.ml");
  return n;
}

void set_tensor(onnx::NodeProto* n, const std::string& name, int type, const std::vector<double>& values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = a->mutable_t();
  t->set_data_type(type);
  t->add_dims(int64_t(values.size()));
  for (double v : values) {
    if (type == onnx::TensorProto::FLOAT)
      t->add_float_data(float(v));
    else
      t->add_int32_data(int32_t(v));  // UINT8 is stored in int32_data
  }
}

void set_floats(onnx::NodeProto* n, const std::string& name, const std::vector<float>& values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float v : values) a->add_floats(v);
}

// The single output on the reference executor, then compiled.
void expect_both(ModelBuilder& b, const std::vector<Tensor>& inputs, const std::vector<double>& want) {
  graph::Graph ref = b.import();
  EXPECT_EQ(reference::Executor(ref).run(inputs)[0].to_f64_vector(), want) << "reference";
  graph::Graph g = b.import();
  driver::JitModel jit(driver::compile_graph(g, {}));
  EXPECT_EQ(jit.run(inputs)[0].to_f64_vector(), want) << "LLVM";
}

// Tree 0: x0 <= 1 (NaN goes true) ? (x1 in {2, 3} ? leaf 0 : leaf 1) : leaf 3.
// Tree 1: node 2, both branches the same leaf: one leaf, the one at the
// root's index (2). Leaves: 0 -> target 0 += 10, 1 -> target 1 += 20,
// 2 -> target 1 += 5, 3 -> target 0 += 30.
onnx::NodeProto* two_trees(ModelBuilder& b, int64_t aggregate) {
  b.input("x", {5, 2});
  onnx::NodeProto* n = ml_node(b, "TreeEnsemble", {"x"});
  ModelBuilder::set_ints(n, "nodes_featureids", {0, 1, 0});
  set_tensor(n, "nodes_modes", onnx::TensorProto::UINT8, {0, 6, 0});
  set_tensor(n, "nodes_splits", onnx::TensorProto::FLOAT, {1, 0, 0});
  set_tensor(n, "membership_values", onnx::TensorProto::FLOAT, {2, 3, kNaN});
  ModelBuilder::set_ints(n, "nodes_missing_value_tracks_true", {1, 0, 0});
  ModelBuilder::set_ints(n, "nodes_truenodeids", {1, 0, 1});
  ModelBuilder::set_ints(n, "nodes_trueleafs", {0, 1, 1});
  ModelBuilder::set_ints(n, "nodes_falsenodeids", {3, 1, 1});
  ModelBuilder::set_ints(n, "nodes_falseleafs", {1, 1, 1});
  ModelBuilder::set_ints(n, "leaf_targetids", {0, 1, 1, 0});
  set_tensor(n, "leaf_weights", onnx::TensorProto::FLOAT, {10, 20, 5, 30});
  ModelBuilder::set_ints(n, "tree_roots", {0, 2});
  ModelBuilder::set_int(n, "n_targets", 2);
  ModelBuilder::set_int(n, "aggregate_function", aggregate);
  b.output("y");
  return n;
}

// Samples: in the set; not in it; right of the first split; a missing x0
// that goes true; x0 on the threshold with a missing x1, which is in no set.
Tensor five_samples() {
  return f32({0.5, 2, 0.5, 4, 2, 2, kNaN, 3, 1, kNaN}, {5, 2});
}

TEST(MlOps, TreeEnsembleSumsTheLeavesEachSampleReaches) {
  ModelBuilder b = ml_builder(5);
  two_trees(b, 1);
  expect_both(b, {five_samples()}, {10, 5, 0, 25, 30, 5, 10, 5, 0, 25});
}

TEST(MlOps, TreeEnsembleAveragesOverTheTrees) {
  ModelBuilder b = ml_builder(5);
  two_trees(b, 0);
  expect_both(b, {five_samples()}, {5, 2.5, 0, 12.5, 15, 2.5, 5, 2.5, 0, 12.5});
}

// MIN over the trees' votes per target; a target no reached leaf votes for
// keeps the start value, the type's largest (as ONNX defines it).
TEST(MlOps, TreeEnsembleMinimumStartsFromTheLargestFloat) {
  ModelBuilder b = ml_builder(5);
  two_trees(b, 2);
  const double big = std::numeric_limits<float>::max();
  expect_both(b, {five_samples()}, {10, 5, big, 5, 30, 5, 10, 5, big, 5});
}

// One tree: x0 < 0 ? node 1 : node 2, both leaves; node 1 votes for both
// targets; base values added; NaN is not < 0 and goes false.
TEST(MlOps, TreeEnsembleRegressorAddsVotesAndBaseValues) {
  ModelBuilder b = ml_builder(3);
  b.input("x", {3, 1});
  onnx::NodeProto* n = ml_node(b, "TreeEnsembleRegressor", {"x"});
  ModelBuilder::set_ints(n, "nodes_treeids", {7, 7, 7});
  ModelBuilder::set_ints(n, "nodes_nodeids", {0, 1, 2});
  ModelBuilder::set_ints(n, "nodes_featureids", {0, 0, 0});
  ModelBuilder::set_strings(n, "nodes_modes", {"BRANCH_LT", "LEAF", "LEAF"});
  set_floats(n, "nodes_values", {0, 0, 0});
  ModelBuilder::set_ints(n, "nodes_truenodeids", {1, 0, 0});
  ModelBuilder::set_ints(n, "nodes_falsenodeids", {2, 0, 0});
  ModelBuilder::set_ints(n, "target_treeids", {7, 7, 7});
  ModelBuilder::set_ints(n, "target_nodeids", {1, 1, 2});
  ModelBuilder::set_ints(n, "target_ids", {0, 1, 0});
  set_floats(n, "target_weights", {1.5, -1, 2.5});
  set_floats(n, "base_values", {0.5, 0.25});
  ModelBuilder::set_int(n, "n_targets", 2);
  b.output("y");
  expect_both(b, {f32({-1, 0, kNaN}, {3, 1})}, {2, -0.75, 3, 0.25, 3, 0.25});
}

// One tree, x0 <= 0 ? node 1 : node 2, both leaves; `votes` per leaf as
// (class id, weight) lists.
onnx::NodeProto* one_tree_classifier(ModelBuilder& b, const std::vector<int64_t>& labels,
                                     const std::vector<std::vector<std::pair<int64_t, float>>>& votes) {
  b.input("x", {2, 1});
  onnx::NodeProto* n = b.node("TreeEnsembleClassifier", {"x"}, {"label", "scores"}, "ml");
  n->set_domain("ai.onnx.ml");
  ModelBuilder::set_ints(n, "nodes_treeids", {0, 0, 0});
  ModelBuilder::set_ints(n, "nodes_nodeids", {0, 1, 2});
  ModelBuilder::set_ints(n, "nodes_featureids", {0, 0, 0});
  ModelBuilder::set_strings(n, "nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"});
  set_floats(n, "nodes_values", {0, 0, 0});
  ModelBuilder::set_ints(n, "nodes_truenodeids", {1, 0, 0});
  ModelBuilder::set_ints(n, "nodes_falsenodeids", {2, 0, 0});
  std::vector<int64_t> trees, nodes, ids;
  std::vector<float> weights;
  for (size_t leaf = 0; leaf < votes.size(); ++leaf)
    for (const auto& [id, weight] : votes[leaf]) {
      trees.push_back(0), nodes.push_back(int64_t(leaf) + 1), ids.push_back(id), weights.push_back(weight);
    }
  ModelBuilder::set_ints(n, "class_treeids", trees);
  ModelBuilder::set_ints(n, "class_nodeids", nodes);
  ModelBuilder::set_ints(n, "class_ids", ids);
  set_floats(n, "class_weights", weights);
  ModelBuilder::set_ints(n, "classlabels_int64s", labels);
  b.output("label");
  b.output("scores");
  return n;
}

void expect_labels_and_scores(ModelBuilder& b, const std::vector<double>& labels,
                              const std::vector<double>& scores) {
  Tensor x = f32({-1, 1}, {2, 1});
  graph::Graph ref = b.import();
  std::vector<Tensor> want = reference::Executor(ref).run({x});
  graph::Graph g = b.import();
  std::vector<Tensor> got = driver::JitModel(driver::compile_graph(g, {})).run({x});
  for (const auto& out : {want, got}) {
    EXPECT_EQ(out[0].dtype(), DType::kI64);
    EXPECT_EQ(out[0].to_f64_vector(), labels);
    EXPECT_EQ(out[1].to_f64_vector(), scores);
  }
}

// Three classes: each leaf scores every class; the label is the largest's.
TEST(MlOps, TreeEnsembleClassifierLabelsTheLargestScore) {
  ModelBuilder b = ml_builder(3);
  one_tree_classifier(b, {7, 8, 9},
                      {{{0, 0.25f}, {1, 0.5f}, {2, 0.25f}}, {{0, 0.625f}, {1, 0.125f}, {2, 0.25f}}});
  expect_labels_and_scores(b, {8, 7}, {0.25, 0.5, 0.25, 0.625, 0.125, 0.25});
}

// A binary model's single score s (class id 0 alone, plus the one base
// value) becomes [-s, s]: class 1 where s > 0, as ONNX Runtime reads it.
TEST(MlOps, TreeEnsembleClassifierSplitsABinaryScore) {
  ModelBuilder b = ml_builder(3);
  set_floats(one_tree_classifier(b, {0, 1}, {{{0, -1.5f}}, {{0, 2.0f}}}), "base_values", {0.5});
  expect_labels_and_scores(b, {0, 1}, {1, -1, -2.5, 2.5});
}

// A chain deeper than the path-matrix product takes, so walked: node i
// (0..4) is x0 <= i ? leaf i : node i + 1, the last node's false branch leaf
// 5; leaf k votes k. Node 2 sends a missing x0 to its true branch.
TEST(MlOps, ADeepTreeIsWalkedToItsLeaf) {
  ModelBuilder b = ml_builder(3);
  b.input("x", {5, 1});
  onnx::NodeProto* n = ml_node(b, "TreeEnsembleRegressor", {"x"});
  std::vector<int64_t> ids, truths, falses, missing, zeros(11, 0), votes;
  std::vector<std::string> modes;
  std::vector<float> values, weights;
  for (int64_t i = 0; i < 5; ++i) {
    ids.push_back(i), truths.push_back(10 + i), falses.push_back(i < 4 ? i + 1 : 15);
    modes.push_back("BRANCH_LEQ"), values.push_back(float(i)), missing.push_back(i == 2);
  }
  for (int64_t k = 0; k < 6; ++k) {
    ids.push_back(10 + k), truths.push_back(0), falses.push_back(0), modes.push_back("LEAF");
    values.push_back(0), missing.push_back(0), votes.push_back(10 + k), weights.push_back(float(k));
  }
  ModelBuilder::set_ints(n, "nodes_treeids", zeros);
  ModelBuilder::set_ints(n, "nodes_nodeids", ids);
  ModelBuilder::set_ints(n, "nodes_featureids", zeros);
  ModelBuilder::set_strings(n, "nodes_modes", modes);
  set_floats(n, "nodes_values", values);
  ModelBuilder::set_ints(n, "nodes_truenodeids", truths);
  ModelBuilder::set_ints(n, "nodes_falsenodeids", falses);
  ModelBuilder::set_ints(n, "nodes_missing_value_tracks_true", missing);
  ModelBuilder::set_ints(n, "target_treeids", std::vector<int64_t>(6, 0));
  ModelBuilder::set_ints(n, "target_nodeids", votes);
  ModelBuilder::set_ints(n, "target_ids", std::vector<int64_t>(6, 0));
  set_floats(n, "target_weights", weights);
  b.output("y");
  expect_both(b, {f32({2.5, 9, -1, kNaN, 4}, {5, 1})}, {3, 5, 0, 2, 4});
}

TEST(MlOps, BinarizerIsOneAboveTheThreshold) {
  ModelBuilder b = ml_builder(1);
  b.input("x", {4});
  ModelBuilder::set_float(ml_node(b, "Binarizer", {"x"}), "threshold", 0.5f);
  b.output("y");
  expect_both(b, {f32({-1, 0.5, 0.75, 3}, {4})}, {0, 0, 1, 1});
}

TEST(MlOps, ArrayFeatureExtractorPicksAlongTheLastAxisAndChecksIndices) {
  ModelBuilder b = ml_builder(1);
  b.input("x", {2, 3});
  b.input("i", {3}, onnx::TensorProto::INT64);
  ml_node(b, "ArrayFeatureExtractor", {"x", "i"});
  b.output("y");
  Tensor x = f32({0, 1, 2, 3, 4, 5}, {2, 3});
  expect_both(b, {x, Tensor::from_i64({2, 0, 2}, {3})}, {2, 0, 2, 5, 3, 5});
  graph::Graph g = b.import();
  driver::JitModel jit(driver::compile_graph(g, {}));
  graph::Graph ref = b.import();
  for (int64_t bad : {3, -1}) {  // past the last feature; negative (not counted from the back)
    std::vector<Tensor> inputs = {x, Tensor::from_i64({0, bad, 1}, {3})};
    for (int compiled = 0; compiled < 2; ++compiled) {
      try {
        compiled ? jit.run(inputs) : reference::Executor(ref).run(inputs);
        ADD_FAILURE() << "index " << bad << " ran " << (compiled ? "compiled" : "on the reference");
      } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(MlOps, MalformedEnsemblesAreRefused) {
  {
    ModelBuilder b = ml_builder(5);
    onnx::NodeProto* n = two_trees(b, 1);
    n->mutable_attribute(5)->set_ints(1, 0);  // node 1's true branch back to node 0, not a leaf
    n->mutable_attribute(6)->set_ints(1, 0);
    expect_import_error(b, "has a cycle");
  }
  {
    ModelBuilder b = ml_builder(5);
    two_trees(b, 1)->mutable_attribute(0)->set_ints(1, 2);  // feature 2 of 2
    expect_import_error(b, "nodes_featureids entry 2 is out of range [0, 2)");
  }
  {
    ModelBuilder b = ml_builder(5);
    ModelBuilder::set_int(two_trees(b, 1), "post_transform", 4);
    expect_import_error(b, "post_transform 4 is not supported");
  }
  {
    ModelBuilder b = ml_builder(3);
    two_trees(b, 1);
    expect_import_error(b, "op TreeEnsemble does not exist at ai.onnx.ml opset 3 (it was added in opset 5)");
  }
  {
    ModelBuilder b(17);
    two_trees(b, 1);
    expect_import_error(b, "uses domain ai.onnx.ml but does not import it");
  }
}

}  // namespace
}  // namespace tessel::onnx_test
