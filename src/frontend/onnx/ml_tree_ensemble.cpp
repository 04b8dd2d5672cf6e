#include "src/frontend/onnx/ml_tree_ensemble.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// Bounds on what the dense path matrices may hold (trees x splits x leaves),
// and on the leaves a tree's links may fan out to: beyond them the tensors
// this composition builds would not fit in memory.
constexpr int64_t kMaxPathCells = int64_t(1) << 26;
constexpr size_t kMaxLeaves = size_t(1) << 22;
// The deepest trees the path-matrix product runs; deeper ones are walked.
constexpr size_t kDeepestMultipliedTree = 3;

}  // namespace

double aggregate_start(const TreeModel& m, DType dtype) {
  bool f32 = dtype == DType::kF32;
  if (m.aggregate == TreeAggregate::kMin)
    return f32 ? double(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max();
  if (m.aggregate == TreeAggregate::kMax)
    return f32 ? double(std::numeric_limits<float>::lowest()) : std::numeric_limits<double>::lowest();
  return 0;
}

Value* compare_split(AdaptContext& c, SplitMode mode, Value* x, Value* threshold) {
  switch (mode) {
    case SplitMode::kLeq: return c.emit("LessOrEqual", {x, threshold})[0];
    case SplitMode::kLt: return c.emit("Less", {x, threshold})[0];
    case SplitMode::kGte: return c.emit("GreaterOrEqual", {x, threshold})[0];
    case SplitMode::kGt: return c.emit("Greater", {x, threshold})[0];
    case SplitMode::kEq: return c.emit("Equal", {x, threshold})[0];
    case SplitMode::kNeq: return c.emit("Not", {c.emit("Equal", {x, threshold})[0]})[0];
    case SplitMode::kMember: break;
  }
  TESSEL_ICHECK(false) << "set membership is not a comparison";
  return nullptr;
}

namespace {

Value* bool_mask(AdaptContext& c, const std::vector<bool>& bits) {
  Tensor t(DType::kBool, {int64_t(bits.size())});
  for (size_t i = 0; i < bits.size(); ++i) t.set_i64(int64_t(i), bits[i] ? 1 : 0);
  return c.constant(std::move(t));
}

Value* features(AdaptContext& c, Value* x, const TreeModel& m, const std::vector<int64_t>& splits) {
  std::vector<int64_t> ids;
  for (int64_t s : splits) ids.push_back(m.splits[size_t(s)].feature);
  return c.emit("Gather", {x, c.i64_vector(ids)}, one_attr("axis", int64_t(1)))[0];
}

// The outcome [N, len(splits)] of threshold splits: one comparison per mode
// that occurs, each selected where its splits are.
Value* threshold_outcomes(AdaptContext& c, Value* x, const TreeModel& m, const std::vector<int64_t>& splits) {
  Value* xs = features(c, x, m, splits);
  Tensor thresholds(x->type.dtype, {int64_t(splits.size())});
  for (size_t i = 0; i < splits.size(); ++i)
    thresholds.set_f64(int64_t(i), m.splits[size_t(splits[i])].value);
  Value* threshold = c.constant(std::move(thresholds));
  Value* outcome = nullptr;
  for (SplitMode mode :
       {SplitMode::kLeq, SplitMode::kLt, SplitMode::kGte, SplitMode::kGt, SplitMode::kEq, SplitMode::kNeq}) {
    std::vector<bool> has(splits.size());
    for (size_t i = 0; i < splits.size(); ++i) has[i] = m.splits[size_t(splits[i])].mode == mode;
    if (std::none_of(has.begin(), has.end(), [](bool b) { return b; })) continue;
    Value* cmp = compare_split(c, mode, xs, threshold);
    outcome = outcome ? c.emit("Where", {bool_mask(c, has), cmp, outcome})[0] : cmp;
  }
  return outcome;
}

// The outcome [N, len(splits)] of set-membership splits: the feature equals
// one of its set's values (sets padded with NaN, which equals nothing).
Value* member_outcomes(AdaptContext& c, Value* x, const TreeModel& m, const std::vector<int64_t>& splits) {
  size_t widest = 1;
  for (int64_t s : splits) widest = std::max(widest, m.splits[size_t(s)].members.size());
  Tensor sets(x->type.dtype, {int64_t(splits.size()), int64_t(widest)});
  for (size_t i = 0; i < splits.size(); ++i) {
    const std::vector<double>& members = m.splits[size_t(splits[i])].members;
    for (size_t k = 0; k < widest; ++k)
      sets.set_f64(int64_t(i * widest + k), k < members.size() ? members[k] : std::nan(""));
  }
  Value* xs = c.emit("Unsqueeze", {features(c, x, m, splits), c.i64_vector({2})})[0];
  Value* hits = c.cast(c.emit("Equal", {xs, c.constant(std::move(sets))})[0], DType::kF32);
  Value* any = c.emit("ReduceMax", {hits, c.i64_vector({2})}, one_attr("keepdims", int64_t(0)))[0];
  return c.emit("Greater", {any, c.scalar(DType::kF32, 0.0)})[0];
}

// The outcome [N, S] of every split, columns in `order` (thresholds, then sets).
Value* split_outcomes(AdaptContext& c, Value* x, const TreeModel& m, std::vector<int64_t>& order) {
  std::vector<int64_t> thresholds, members;
  for (size_t s = 0; s < m.splits.size(); ++s)
    (m.splits[s].mode == SplitMode::kMember ? members : thresholds).push_back(int64_t(s));
  std::vector<Value*> parts;
  if (!thresholds.empty()) parts.push_back(threshold_outcomes(c, x, m, thresholds));
  if (!members.empty()) parts.push_back(member_outcomes(c, x, m, members));
  order = thresholds;
  order.insert(order.end(), members.begin(), members.end());
  Value* outcome = parts.size() == 1 ? parts[0] : c.emit("Concat", parts, one_attr("axis", int64_t(1)))[0];
  std::vector<bool> missing;
  for (int64_t s : order) missing.push_back(m.splits[size_t(s)].missing_goes_true);
  if (std::none_of(missing.begin(), missing.end(), [](bool b) { return b; })) return outcome;
  Value* nan = c.emit("IsNaN", {features(c, x, m, order)})[0];
  return c.emit("Or", {outcome, c.emit("And", {nan, bool_mask(c, missing)})[0]})[0];
}

struct PathTables {
  int64_t widest_tree = 1, most_leaves = 1;
  std::vector<int64_t> columns;  // [trees, widest_tree]: outcome column of each tree's splits
  Tensor path;                   // [trees, widest_tree, most_leaves]: +1 true branch, -1 false
  Tensor needed;                 // [trees, 1, most_leaves]: true branches on the path; -1 pads
  std::vector<int64_t> slot;     // leaf index -> tree * most_leaves + position
};

PathTables path_tables(AdaptContext& c, const TreeModel& m, const std::vector<int64_t>& order) {
  std::vector<int64_t> column(m.splits.size());
  for (size_t k = 0; k < order.size(); ++k) column[size_t(order[k])] = int64_t(k);
  std::vector<std::map<int64_t, int64_t>> tree_splits(size_t(m.trees));  // split -> row within the tree
  std::vector<int64_t> leaves_of(size_t(m.trees), 0);
  PathTables t;
  for (const TreeLeaf& leaf : m.leaves) {
    for (const auto& [s, branch] : leaf.steps) tree_splits[size_t(leaf.tree)].emplace(s, 0);
    t.most_leaves = std::max(t.most_leaves, ++leaves_of[size_t(leaf.tree)]);
  }
  for (auto& rows : tree_splits) {
    int64_t r = 0;
    for (auto& [s, row] : rows) row = r++;
    t.widest_tree = std::max(t.widest_tree, r);
  }
  TESSEL_USER_CHECK(m.trees * t.widest_tree * t.most_leaves <= kMaxPathCells, c.span())
      << "the ensemble is too large to run as dense tensors: " << m.trees << " trees of up to "
      << t.widest_tree << " splits and " << t.most_leaves << " leaves";
  t.columns.assign(size_t(m.trees * t.widest_tree), 0);
  for (int64_t tree = 0; tree < m.trees; ++tree)
    for (const auto& [s, row] : tree_splits[size_t(tree)])
      t.columns[size_t(tree * t.widest_tree + row)] = column[size_t(s)];
  t.path = Tensor(DType::kF32, {m.trees, t.widest_tree, t.most_leaves});
  t.needed = Tensor(DType::kF32, {m.trees, 1, t.most_leaves});
  for (int64_t i = 0; i < t.needed.numel(); ++i) t.needed.set_f64(i, -1);
  std::fill(leaves_of.begin(), leaves_of.end(), 0);
  for (const TreeLeaf& leaf : m.leaves) {
    int64_t pos = leaves_of[size_t(leaf.tree)]++;
    int64_t needed = 0;
    for (const auto& [s, branch] : leaf.steps) {
      int64_t row = tree_splits[size_t(leaf.tree)].at(s);
      int64_t cell = (leaf.tree * t.widest_tree + row) * t.most_leaves + pos;
      t.path.set_f64(cell, t.path.get_f64(cell) + (branch ? 1 : -1));
      needed += branch ? 1 : 0;
    }
    t.needed.set_f64(leaf.tree * t.most_leaves + pos, double(needed));
    t.slot.push_back(leaf.tree * t.most_leaves + pos);
  }
  return t;
}

// [N, trees * most_leaves]: whether each sample reaches each leaf slot.
Value* reached_leaves(AdaptContext& c, Value* outcome, const TreeModel& m, const PathTables& t) {
  Value* taken = c.cast(outcome, DType::kF32);
  Value* per_tree =
      c.emit("Gather", {taken, c.constant(Tensor::from_i64(t.columns, {m.trees, t.widest_tree}))},
             one_attr("axis", int64_t(1)))[0];
  Value* by_tree = c.transpose(per_tree, {1, 0, 2});
  Value* agree = c.emit("MatMul", {by_tree, c.constant(t.path)})[0];
  Value* hit = c.transpose(c.emit("Equal", {agree, c.constant(t.needed)})[0], {1, 0, 2});
  return c.emit("Reshape", {hit, c.i64_vector({-1, m.trees * t.most_leaves})})[0];
}

Value* aggregate(AdaptContext& c, Value* hit, const TreeModel& m, const PathTables& t, DType dtype) {
  int64_t slots = m.trees * t.most_leaves;
  bool extreme = m.aggregate == TreeAggregate::kMin || m.aggregate == TreeAggregate::kMax;
  double scale = m.aggregate == TreeAggregate::kAverage ? 1.0 / double(m.trees) : 1.0;
  Tensor weights(dtype, {slots, m.targets});
  Tensor voted(DType::kBool, {slots, m.targets});
  for (size_t l = 0; l < m.leaves.size(); ++l)
    for (const TreeVote& v : m.leaves[l].votes) {
      int64_t cell = t.slot[l] * m.targets + v.target;
      weights.set_f64(cell, weights.get_f64(cell) + v.weight * scale);
      voted.set_i64(cell, 1);
    }
  if (!extreme) return c.emit("MatMul", {c.cast(hit, dtype), c.constant(std::move(weights))})[0];
  bool is_min = m.aggregate == TreeAggregate::kMin;
  double start = aggregate_start(m, dtype);
  Value* pick =
      c.emit("And", {c.emit("Unsqueeze", {hit, c.i64_vector({2})})[0], c.constant(std::move(voted))})[0];
  Value* values = c.emit("Where", {pick, c.constant(std::move(weights)), c.scalar(dtype, start)})[0];
  return c.emit(is_min ? "ReduceMin" : "ReduceMax", {values, c.i64_vector({1})},
                one_attr("keepdims", int64_t(0)))[0];
}

// Deep trees are walked: the path-matrix product grows with splits x leaves
// per tree (4^depth for a full tree), the walk with the depth alone. Set
// membership is compared by the product only.
bool walks_the_trees(const TreeModel& m) {
  size_t depth = 0;
  for (const TreeLeaf& leaf : m.leaves) depth = std::max(depth, leaf.steps.size());
  bool sets = std::any_of(m.splits.begin(), m.splits.end(),
                          [](const TreeSplit& s) { return s.mode == SplitMode::kMember; });
  return depth > kDeepestMultipliedTree && !sets;
}

}  // namespace

void TreeWalker::walk(AdaptContext& c, int64_t tree, int64_t root, bool root_is_leaf, TreeModel& m) const {
  struct Frame {
    int64_t node;
    bool leaf;
    std::vector<std::pair<int64_t, bool>> steps;
  };
  std::vector<Frame> stack{{root, root_is_leaf, {}}};
  while (!stack.empty()) {
    Frame f = std::move(stack.back());
    stack.pop_back();
    if (f.leaf) {
      TESSEL_USER_CHECK(m.leaves.size() < kMaxLeaves, c.span())
          << "the trees reach more than " << kMaxLeaves << " leaves";
      m.leaves.push_back({tree, std::move(f.steps), votes(f.node)});
      continue;
    }
    TESSEL_USER_CHECK(int64_t(f.steps.size()) < max_depth, c.span())
        << "tree " << tree << " has a cycle: a path from its root visits more than its " << max_depth
        << " nodes";
    int64_t split = split_of(f.node);
    for (bool branch : {false, true}) {
      auto [next, is_leaf] = child(f.node, branch);
      std::vector<std::pair<int64_t, bool>> steps = f.steps;
      steps.push_back({split, branch});
      stack.push_back({next, is_leaf, std::move(steps)});
    }
  }
}

Value* compose_tree_ensemble(AdaptContext& c, Value* x, const TreeModel& m, DType out) {
  TESSEL_USER_CHECK(m.trees > 0 && m.targets > 0, c.span()) << "the ensemble needs a tree and a target";
  DType compute = out == DType::kF64 ? DType::kF64 : DType::kF32;
  Value* xc = c.cast(x, compute);
  TreeModel model = m;
  if (model.splits.empty()) model.splits.push_back({});  // a column for trees that are one leaf
  Value* y = nullptr;
  if (walks_the_trees(model)) {
    y = traverse_tree_ensemble(c, xc, model, compute);
  } else {
    std::vector<int64_t> order;
    Value* outcome = split_outcomes(c, xc, model, order);
    PathTables tables = path_tables(c, model, order);
    y = aggregate(c, reached_leaves(c, outcome, model, tables), model, tables, compute);
  }
  if (!m.base_values.empty()) {
    Tensor base(compute, {m.targets});
    for (int64_t t = 0; t < m.targets; ++t) base.set_f64(t, m.base_values[size_t(t)]);
    y = c.emit("Add", {y, c.constant(std::move(base))})[0];
  }
  if (m.post == TreePostTransform::kSoftmax) y = c.emit("Softmax", {y}, one_attr("axis", int64_t(-1)))[0];
  if (m.post == TreePostTransform::kLogistic) y = c.emit("Sigmoid", {y})[0];
  return c.cast(y, out);
}

}  // namespace tessel::onnx_frontend
