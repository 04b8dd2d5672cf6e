// The ai.onnx.ml operators the importer takes, each a composition of graph
// ops: Binarizer, ArrayFeatureExtractor and the tree ensembles (TreeEnsemble
// of ml opset 5; TreeEnsembleRegressor and TreeEnsembleClassifier of opsets
// 1 and 3 in adapters_ml_legacy.cpp).
#include <cmath>
#include <map>
#include <set>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/ml_attrs.h"
#include "src/frontend/onnx/ml_tree_ensemble.h"

namespace tessel::onnx_frontend {

void expect_outputs(const AdaptContext& c, size_t count) {
  TESSEL_USER_CHECK(c.output_names.size() == count, c.span())
      << "expects " << count << " output" << (count == 1 ? "" : "s") << ", got " << c.output_names.size();
}

std::vector<double> tensor_attr_values(const AdaptContext& c, const char* attr, bool required) {
  const graph::AttrValue* v = c.attrs.find(attr);
  TESSEL_USER_CHECK(v || !required, c.span()) << "missing required attribute '" << attr << "'";
  if (!v) return {};
  const Tensor* t = std::get_if<Tensor>(v);
  TESSEL_USER_CHECK(t != nullptr, c.span()) << "attribute '" << attr << "' must be a tensor";
  return t->to_f64_vector();
}

static std::vector<double> floats_attr(const AdaptContext& c, const char* attr) {
  const graph::AttrValue* v = c.attrs.find(attr);
  if (!v) return {};
  if (const auto* f = std::get_if<std::vector<double>>(v)) return *f;
  const auto* empty = std::get_if<std::vector<int64_t>>(v);
  TESSEL_USER_CHECK(empty && empty->empty(), c.span())
      << "attribute '" << attr << "' must be a list of floats";
  return {};
}

// A list given either as floats or as a tensor (the opset-3 "_as_tensor" form).
std::vector<double> floats_or_tensor(const AdaptContext& c, const char* attr, const std::string& as_tensor) {
  std::vector<double> t = tensor_attr_values(c, as_tensor.c_str(), false);
  return t.empty() ? floats_attr(c, attr) : t;
}

std::vector<int64_t> required_ints(const AdaptContext& c, const char* attr) {
  TESSEL_USER_CHECK(c.attrs.has(attr), c.span()) << "missing required attribute '" << attr << "'";
  return c.ints_attr(attr, {});
}

std::vector<std::string> required_strings(const AdaptContext& c, const char* attr) {
  const graph::AttrValue* v = c.attrs.find(attr);
  TESSEL_USER_CHECK(v != nullptr, c.span()) << "missing required attribute '" << attr << "'";
  const auto* strings = std::get_if<std::vector<std::string>>(v);
  TESSEL_USER_CHECK(strings != nullptr, c.span()) << "attribute '" << attr << "' must be a list of strings";
  return *strings;
}

void expect_length(const AdaptContext& c, const char* attr, size_t got, size_t want) {
  TESSEL_USER_CHECK(got == want, c.span())
      << "attribute '" << attr << "' has " << got << " entries, the nodes are " << want;
}

void expect_index(const AdaptContext& c, const char* what, int64_t i, size_t size) {
  TESSEL_USER_CHECK(i >= 0 && size_t(i) < size, c.span())
      << what << " " << i << " is out of range [0, " << size << ")";
}

graph::Value* features_input(AdaptContext& c, int64_t& features) {
  graph::Value* x = c.required_input(0, "X");
  TESSEL_USER_CHECK(x->type.rank_known && x->type.rank() == 2, c.span())
      << "X must be [N, features], got " << x->type.str();
  features = c.static_dim(x, 1, "the number of features");
  return x;
}

void expect_transform(const AdaptContext& c, TreeModel& m, int64_t aggregate, int64_t post) {
  TESSEL_USER_CHECK(aggregate >= 0 && aggregate <= 3, c.span())
      << "aggregate_function " << aggregate << " is not AVERAGE, SUM, MIN or MAX";
  TESSEL_USER_CHECK(post >= 0 && post <= 2, c.span())
      << "post_transform " << post << " is not supported (NONE, SOFTMAX and LOGISTIC are)";
  m.aggregate = TreeAggregate(aggregate);
  m.post = TreePostTransform(post);
}

namespace {

using graph::Value;

void adapt_binarizer(AdaptContext& c) {
  expect_outputs(c, 1);
  Value* x = c.required_input(0, "X");
  DType t = x->type.dtype;
  // An integer input is compared in f64 so that a fractional threshold keeps its meaning.
  DType compared = is_float(t) ? t : DType::kF64;
  Value* above =
      c.emit("Greater", {c.cast(x, compared), c.scalar(compared, c.float_attr("threshold", 0.0))})[0];
  c.results = c.emit("Where", {above, c.scalar(t, 1.0), c.scalar(t, 0.0)});
}

// Y's indices pick along X's last axis; a 1-D X reads as one row. An index
// outside [0, features) stops the run (Gather's check): a negative one, which
// Gather would count from the back, is moved past the end first.
void adapt_array_feature_extractor(AdaptContext& c) {
  expect_outputs(c, 1);
  Value* x = c.required_input(0, "X");
  Value* y = c.required_input(1, "Y");
  TESSEL_USER_CHECK(y->type.dtype == DType::kI64, c.span()) << "Y must be int64, got " << y->type.str();
  TESSEL_USER_CHECK(x->type.rank_known && x->type.rank() >= 1, c.span())
      << "X must have a known rank of at least 1, got " << x->type.str();
  if (x->type.rank() == 1) x = c.emit("Unsqueeze", {x, c.i64_vector({0})})[0];
  Value* indices = c.emit("Reshape", {y, c.i64_vector({-1})})[0];
  Value* features = c.emit("Gather", {c.emit("Shape", {x})[0], c.constant(Tensor::from_i64({-1}, {}))})[0];
  Value* negative = c.emit("Less", {indices, c.constant(Tensor::from_i64({0}, {}))})[0];
  indices = c.emit("Where", {negative, features, indices})[0];
  c.results = c.emit("Gather", {x, indices}, one_attr("axis", int64_t(-1)));
}

// The NaN-separated sets of membership_values, one per kMember split in order.
void assign_members(const AdaptContext& c, TreeModel& m, const std::vector<double>& values) {
  size_t next = 0;
  for (TreeSplit& s : m.splits) {
    if (s.mode != SplitMode::kMember) continue;
    TESSEL_USER_CHECK(next < values.size(), c.span())
        << "membership_values has fewer sets than set-membership nodes";
    for (; next < values.size() && !std::isnan(values[next]); ++next) s.members.push_back(values[next]);
    ++next;  // the NaN that ends the set
  }
}

void adapt_tree_ensemble(AdaptContext& c) {
  expect_outputs(c, 1);
  int64_t features = 0;
  Value* x = features_input(c, features);
  TESSEL_USER_CHECK(is_float(x->type.dtype), c.span()) << "X must be a float tensor, got " << x->type.str();
  std::vector<int64_t> feature_ids = required_ints(c, "nodes_featureids");
  size_t n = feature_ids.size();
  std::vector<int64_t> true_ids = required_ints(c, "nodes_truenodeids"),
                       false_ids = required_ints(c, "nodes_falsenodeids");
  std::vector<int64_t> true_leaf = required_ints(c, "nodes_trueleafs"),
                       false_leaf = required_ints(c, "nodes_falseleafs");
  std::vector<double> thresholds = tensor_attr_values(c, "nodes_splits", true);
  std::vector<double> modes = tensor_attr_values(c, "nodes_modes", true);
  std::vector<int64_t> missing = c.ints_attr("nodes_missing_value_tracks_true", std::vector<int64_t>(n, 0));
  for (auto [attr, size] : {std::pair{"nodes_truenodeids", true_ids.size()},
                            {"nodes_falsenodeids", false_ids.size()},
                            {"nodes_trueleafs", true_leaf.size()},
                            {"nodes_falseleafs", false_leaf.size()},
                            {"nodes_splits", thresholds.size()},
                            {"nodes_modes", modes.size()},
                            {"nodes_missing_value_tracks_true", missing.size()}})
    expect_length(c, attr, size, n);
  std::vector<int64_t> leaf_targets = required_ints(c, "leaf_targetids");
  std::vector<double> leaf_weights = tensor_attr_values(c, "leaf_weights", true);
  expect_length(c, "leaf_weights", leaf_weights.size(), leaf_targets.size());
  TreeModel m;
  m.targets = c.int_attr("n_targets", 0);
  TESSEL_USER_CHECK(m.targets > 0, c.span()) << "n_targets must be positive, got " << m.targets;
  expect_transform(c, m, c.int_attr("aggregate_function", 1), c.int_attr("post_transform", 0));
  for (size_t i = 0; i < n; ++i) {
    expect_index(c, "nodes_featureids entry", feature_ids[i], size_t(features));
    TESSEL_USER_CHECK(modes[i] >= 0 && modes[i] <= 6, c.span())
        << "nodes_modes entry " << modes[i] << " is not a mode";
    m.splits.push_back({feature_ids[i], SplitMode(int(modes[i])), thresholds[i], {}, missing[i] != 0});
  }
  assign_members(c, m, tensor_attr_values(c, "membership_values", false));
  TreeWalker w;
  w.max_depth = int64_t(n);
  w.child = [&](int64_t node, bool branch) {
    int64_t next = branch ? true_ids[size_t(node)] : false_ids[size_t(node)];
    bool leaf = (branch ? true_leaf[size_t(node)] : false_leaf[size_t(node)]) != 0;
    expect_index(c, leaf ? "leaf" : "node", next, leaf ? leaf_targets.size() : n);
    return std::pair{next, leaf};
  };
  w.split_of = [](int64_t node) { return node; };
  w.votes = [&](int64_t leaf) {
    expect_index(c, "leaf_targetids entry", leaf_targets[size_t(leaf)], size_t(m.targets));
    return std::vector<TreeVote>{{leaf_targets[size_t(leaf)], leaf_weights[size_t(leaf)]}};
  };
  for (int64_t root : required_ints(c, "tree_roots")) {
    expect_index(c, "tree_roots entry", root, n);
    // A tree that is one leaf: both branches of its root name the same leaf;
    // the leaf is then the one at the root's own index (as ONNX's reference
    // and ONNX Runtime read it).
    bool one_leaf = true_leaf[size_t(root)] && false_leaf[size_t(root)] &&
                    true_ids[size_t(root)] == false_ids[size_t(root)];
    if (one_leaf) expect_index(c, "leaf", root, leaf_targets.size());
    w.walk(c, m.trees++, root, one_leaf, m);
  }
  c.results = std::vector<Value*>{compose_tree_ensemble(c, x, m, x->type.dtype)};
}

}  // namespace

const AdapterTable& ml_adapters() {
  static const AdapterTable table = [] {
    AdapterTable t;
    t["Binarizer"] = adapt_binarizer;
    t["ArrayFeatureExtractor"] = adapt_array_feature_extractor;
    t["TreeEnsemble"] = adapt_tree_ensemble;
    register_ml_legacy_tree_adapters(t);
    return t;
  }();
  return table;
}

int ml_op_since(const std::string& op) {
  static const std::map<std::string, int> since = {{"ArrayFeatureExtractor", 1},
                                                   {"Binarizer", 1},
                                                   {"TreeEnsemble", 5},
                                                   {"TreeEnsembleClassifier", 1},
                                                   {"TreeEnsembleRegressor", 1}};
  auto it = since.find(op);
  return it == since.end() ? 0 : it->second;
}

}  // namespace tessel::onnx_frontend
