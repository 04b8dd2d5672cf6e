// The tree ensembles of ai.onnx.ml opsets 1 and 3, TreeEnsembleRegressor and
// TreeEnsembleClassifier: their nodes and votes named by (tree id, node id),
// read into a TreeModel and composed as TreeEnsemble is (ml_tree_ensemble.h).
#include <algorithm>
#include <map>
#include <set>

#include "src/frontend/onnx/ml_attrs.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

SplitMode legacy_mode(const AdaptContext& c, const std::string& mode) {
  static const std::map<std::string, SplitMode> modes = {
      {"BRANCH_LEQ", SplitMode::kLeq}, {"BRANCH_LT", SplitMode::kLt}, {"BRANCH_GTE", SplitMode::kGte},
      {"BRANCH_GT", SplitMode::kGt},   {"BRANCH_EQ", SplitMode::kEq}, {"BRANCH_NEQ", SplitMode::kNeq}};
  auto it = modes.find(mode);
  TESSEL_USER_CHECK(it != modes.end(), c.span())
      << "nodes_modes entry '" << mode << "' is not a branch mode or LEAF";
  return it->second;
}

int64_t legacy_enum(const AdaptContext& c, const char* attr, const std::string& fallback,
                    const std::vector<std::string>& names) {
  std::string v = c.string_attr(attr, fallback);
  auto it = std::find(names.begin(), names.end(), v);
  TESSEL_USER_CHECK(it != names.end(), c.span()) << attr << " '" << v << "' is not supported";
  return int64_t(it - names.begin());
}

// The trees of TreeEnsembleRegressor/Classifier-1/3: nodes named by (tree
// id, node id), each tree's root its node 0, leaves the nodes of mode LEAF,
// votes by (tree id, node id) in the attributes `<prefix>treeids`,
// `<prefix>nodeids`, `<ids>` and `<prefix>weights`, for `targets` targets.
TreeModel read_trees(AdaptContext& c, int64_t features, const std::string& prefix, const std::string& ids,
                     int64_t targets) {
  std::vector<int64_t> tree_ids = required_ints(c, "nodes_treeids"),
                       node_ids = required_ints(c, "nodes_nodeids");
  size_t n = tree_ids.size();
  std::vector<int64_t> feature_ids = required_ints(c, "nodes_featureids");
  std::vector<int64_t> true_ids = required_ints(c, "nodes_truenodeids"),
                       false_ids = required_ints(c, "nodes_falsenodeids");
  std::vector<std::string> modes = required_strings(c, "nodes_modes");
  std::vector<double> thresholds = floats_or_tensor(c, "nodes_values", "nodes_values_as_tensor");
  std::vector<int64_t> missing = c.ints_attr("nodes_missing_value_tracks_true", std::vector<int64_t>(n, 0));
  for (auto [attr, size] : {std::pair{"nodes_nodeids", node_ids.size()},
                            {"nodes_featureids", feature_ids.size()},
                            {"nodes_truenodeids", true_ids.size()},
                            {"nodes_falsenodeids", false_ids.size()},
                            {"nodes_modes", modes.size()},
                            {"nodes_values", thresholds.size()},
                            {"nodes_missing_value_tracks_true", missing.size()}})
    expect_length(c, attr, size, n);
  TreeModel m;
  m.targets = targets;
  std::map<std::pair<int64_t, int64_t>, int64_t> index;  // (tree id, node id) -> position
  std::map<int64_t, int64_t> tree_number;                // tree id -> tree, in order of appearance
  std::vector<int64_t> split_of(n, -1);
  for (size_t i = 0; i < n; ++i) {
    TESSEL_USER_CHECK(index.emplace(std::pair{tree_ids[i], node_ids[i]}, int64_t(i)).second, c.span())
        << "tree " << tree_ids[i] << " has two nodes " << node_ids[i];
    tree_number.emplace(tree_ids[i], int64_t(tree_number.size()));
    if (modes[i] == "LEAF") continue;
    expect_index(c, "nodes_featureids entry", feature_ids[i], size_t(features));
    split_of[i] = int64_t(m.splits.size());
    m.splits.push_back({feature_ids[i], legacy_mode(c, modes[i]), thresholds[i], {}, missing[i] != 0});
  }
  std::vector<int64_t> vote_trees = required_ints(c, (prefix + "treeids").c_str());
  std::vector<int64_t> vote_nodes = required_ints(c, (prefix + "nodeids").c_str());
  std::vector<int64_t> vote_targets = required_ints(c, ids.c_str());
  std::vector<double> vote_weights =
      floats_or_tensor(c, (prefix + "weights").c_str(), prefix + "weights_as_tensor");
  for (size_t size : {vote_nodes.size(), vote_targets.size(), vote_weights.size()})
    TESSEL_USER_CHECK(size == vote_trees.size(), c.span())
        << "the " << prefix << "* attributes differ in length (" << size << " and " << vote_trees.size()
        << ")";
  std::vector<std::vector<TreeVote>> votes(n);
  for (size_t v = 0; v < vote_trees.size(); ++v) {
    auto it = index.find({vote_trees[v], vote_nodes[v]});
    TESSEL_USER_CHECK(it != index.end(), c.span())
        << "a vote names node " << vote_nodes[v] << " of tree " << vote_trees[v] << ", which does not exist";
    expect_index(c, (ids + " entry").c_str(), vote_targets[v], size_t(targets));
    votes[size_t(it->second)].push_back({vote_targets[v], vote_weights[v]});
  }
  auto node_at = [&](int64_t tree, int64_t id) {
    auto it = index.find({tree, id});
    TESSEL_USER_CHECK(it != index.end(), c.span()) << "tree " << tree << " has no node " << id;
    return std::pair{it->second, modes[size_t(it->second)] == "LEAF"};
  };
  TreeWalker w;
  w.max_depth = int64_t(n);
  w.child = [&](int64_t node, bool branch) {
    return node_at(tree_ids[size_t(node)], branch ? true_ids[size_t(node)] : false_ids[size_t(node)]);
  };
  w.split_of = [&](int64_t node) { return split_of[size_t(node)]; };
  w.votes = [&](int64_t leaf) { return votes[size_t(leaf)]; };
  std::vector<int64_t> in_order(tree_number.size());
  for (const auto& [id, number] : tree_number) in_order[size_t(number)] = id;
  for (int64_t id : in_order) {
    auto [root, leaf] = node_at(id, 0);
    w.walk(c, m.trees++, root, leaf, m);
  }
  return m;
}

// The comparisons run in x's type when it is f64, else in f32.
DType compared_type(const graph::Value* x) {
  return x->type.dtype == DType::kF64 ? DType::kF64 : DType::kF32;
}

void adapt_tree_regressor(AdaptContext& c) {
  expect_outputs(c, 1);
  int64_t features = 0;
  Value* x = features_input(c, features);
  int64_t targets = c.int_attr("n_targets", 1);
  TESSEL_USER_CHECK(targets > 0, c.span()) << "n_targets must be positive, got " << targets;
  TreeModel m = read_trees(c, features, "target_", "target_ids", targets);
  expect_transform(c, m, legacy_enum(c, "aggregate_function", "SUM", {"AVERAGE", "SUM", "MIN", "MAX"}),
                   legacy_enum(c, "post_transform", "NONE", {"NONE", "SOFTMAX", "LOGISTIC"}));
  m.base_values = floats_or_tensor(c, "base_values", "base_values_as_tensor");
  TESSEL_USER_CHECK(m.base_values.empty() || int64_t(m.base_values.size()) == m.targets, c.span())
      << "base_values has " << m.base_values.size() << " entries for " << m.targets << " targets";
  c.results = std::vector<Value*>{c.cast(compose_tree_ensemble(c, x, m, compared_type(x)), DType::kF32)};
}

// TreeEnsembleClassifier-1/3: per class the base value plus the votes; when
// every vote is for one class id (a binary model's single score s), the
// scores are [-s, s]; then the post transform, and the label of the first
// largest score. Without a transform ONNX's reference makes that [1 - s, s]
// (class 1 above 0.5) where ONNX Runtime keeps [-s, s] (class 1 above 0);
// the specification says neither, and the models in use are checked
// against ONNX Runtime.
void adapt_tree_classifier(AdaptContext& c) {
  expect_outputs(c, 2);
  int64_t features = 0;
  Value* x = features_input(c, features);
  TESSEL_USER_CHECK(!c.attrs.has("classlabels_strings"), c.span())
      << "string class labels are not supported (string tensors are not); use classlabels_int64s";
  std::vector<int64_t> labels = required_ints(c, "classlabels_int64s");
  int64_t classes = int64_t(labels.size());
  TESSEL_USER_CHECK(classes >= 2, c.span())
      << "classlabels_int64s must name at least 2 classes, got " << classes;
  TreeModel m = read_trees(c, features, "class_", "class_ids", classes);
  int64_t post = legacy_enum(c, "post_transform", "NONE", {"NONE", "SOFTMAX", "LOGISTIC"});
  expect_transform(c, m, 1, 0);
  std::vector<double> base = floats_or_tensor(c, "base_values", "base_values_as_tensor");
  TESSEL_USER_CHECK(base.empty() || base.size() == 1 || int64_t(base.size()) == classes, c.span())
      << "base_values has " << base.size() << " entries for " << classes << " classes";
  if (!base.empty()) m.base_values = base.size() == 1 ? std::vector<double>(size_t(classes), base[0]) : base;
  std::set<int64_t> voted;
  for (const TreeLeaf& leaf : m.leaves)
    for (const TreeVote& v : leaf.votes) voted.insert(v.target);
  DType t = compared_type(x);
  Value* scores = compose_tree_ensemble(c, x, m, t);
  if (voted.size() == 1 && classes == 2) {
    Value* s = c.emit("Slice", {scores, c.i64_vector({0}), c.i64_vector({1}), c.i64_vector({1})})[0];
    scores = c.emit("Concat", {c.emit("Neg", {s})[0], s}, one_attr("axis", int64_t(1)))[0];
  }
  if (post == 1) scores = c.emit("Softmax", {scores}, one_attr("axis", int64_t(-1)))[0];
  if (post == 2) scores = c.emit("Sigmoid", {scores})[0];
  graph::Attrs along_classes;
  along_classes.set("axis", int64_t(1));
  along_classes.set("keepdims", int64_t(0));
  Value* best = c.emit("ArgMax", {scores}, along_classes)[0];
  Value* label = c.emit("Gather", {c.constant(Tensor::from_i64(labels)), best})[0];
  c.results = std::vector<Value*>{label, c.cast(scores, DType::kF32)};
}

}  // namespace

void register_ml_legacy_tree_adapters(AdapterTable& t) {
  t["TreeEnsembleRegressor"] = adapt_tree_regressor;
  t["TreeEnsembleClassifier"] = adapt_tree_classifier;
}

}  // namespace tessel::onnx_frontend
