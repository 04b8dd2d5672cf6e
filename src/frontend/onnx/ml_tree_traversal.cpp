// The traversal strategy of compose_tree_ensemble (ml_tree_ensemble.h): every
// sample walks every tree one level per step, its position a node index per
// tree; a step gathers each position's feature, threshold and children and
// picks a child. Leaves lead to themselves, so after the deepest path's
// number of steps every position is a leaf, whose votes are gathered and
// aggregated. The work per sample is trees x depth gathers instead of the
// path-matrix product's trees x splits x leaves multiply-adds.
#include <algorithm>
#include <map>

#include "src/frontend/onnx/ml_tree_ensemble.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// The most cells of the table of every node's votes (nodes x targets).
constexpr int64_t kMaxVoteCells = int64_t(1) << 26;

// The trees as node tables: one row per split node or leaf, trees' roots first.
struct NodeTables {
  std::vector<int64_t> feature, true_child, false_child, mode;
  std::vector<double> threshold;
  std::vector<bool> missing_goes_true;
  std::vector<int64_t> leaf;  // the TreeLeaf a row is, -1 for a split
  int64_t depth = 0;

  int64_t add(int64_t split, const TreeModel& m) {
    const TreeSplit* s = split >= 0 ? &m.splits[size_t(split)] : nullptr;
    int64_t row = int64_t(feature.size());
    feature.push_back(s ? s->feature : 0);
    threshold.push_back(s ? s->value : 0);
    mode.push_back(s ? int64_t(s->mode) : int64_t(SplitMode::kLeq));
    missing_goes_true.push_back(s && s->missing_goes_true);
    true_child.push_back(row);
    false_child.push_back(row);
    leaf.push_back(-1);
    return row;
  }
};

// Rebuilds each tree from its root-to-leaf paths (a trie over the steps).
NodeTables node_tables(const TreeModel& m) {
  NodeTables t;
  std::vector<int64_t> root(size_t(m.trees), -1);
  for (const TreeLeaf& leaf : m.leaves)
    if (root[size_t(leaf.tree)] < 0)
      root[size_t(leaf.tree)] = t.add(leaf.steps.empty() ? -1 : leaf.steps[0].first, m);
  for (size_t l = 0; l < m.leaves.size(); ++l) {
    const TreeLeaf& leaf = m.leaves[l];
    int64_t at = root[size_t(leaf.tree)];
    for (size_t k = 0; k < leaf.steps.size(); ++k) {
      std::vector<int64_t>& children = leaf.steps[k].second ? t.true_child : t.false_child;
      if (children[size_t(at)] == at) {
        int64_t child = t.add(k + 1 < leaf.steps.size() ? leaf.steps[k + 1].first : -1, m);
        children[size_t(at)] = child;  // after add, which may move the tables
      }
      at = children[size_t(at)];
    }
    t.leaf[size_t(at)] = int64_t(l);
    t.depth = std::max(t.depth, int64_t(leaf.steps.size()));
  }
  return t;
}

template <typename T>
Value* table(AdaptContext& c, DType dtype, const std::vector<T>& values) {
  Tensor t(dtype, {int64_t(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.set_f64(int64_t(i), double(values[i]));
  return c.constant(std::move(t));
}

// One step: positions [N, trees] (or the roots [trees]) to their children.
Value* step(AdaptContext& c, Value* x, Value* at, const NodeTables& t, DType dtype,
            const std::vector<SplitMode>& modes) {
  auto pick = [&](Value* values) { return c.emit("Gather", {values, at})[0]; };
  Value* feature = pick(table(c, DType::kI64, t.feature));
  Value* xs = at->type.rank() == 1 ? c.emit("Gather", {x, feature}, one_attr("axis", int64_t(1)))[0]
                                   : c.emit("GatherElements", {x, feature}, one_attr("axis", int64_t(1)))[0];
  Value* threshold = pick(table(c, dtype, t.threshold));
  Value* taken = compare_split(c, modes[0], xs, threshold);
  if (modes.size() > 1) {
    Value* mode = pick(table(c, DType::kI64, t.mode));
    for (size_t k = 1; k < modes.size(); ++k) {
      Value* here = c.emit("Equal", {mode, c.constant(Tensor::from_i64({int64_t(modes[k])}, {}))})[0];
      taken = c.emit("Where", {here, compare_split(c, modes[k], xs, threshold), taken})[0];
    }
  }
  if (std::find(t.missing_goes_true.begin(), t.missing_goes_true.end(), true) != t.missing_goes_true.end()) {
    Value* tracks = pick(table(c, DType::kBool, t.missing_goes_true));
    taken = c.emit("Or", {taken, c.emit("And", {c.emit("IsNaN", {xs})[0], tracks})[0]})[0];
  }
  return c.emit("Where", {taken, pick(table(c, DType::kI64, t.true_child)),
                          pick(table(c, DType::kI64, t.false_child))})[0];
}

}  // namespace

Value* traverse_tree_ensemble(AdaptContext& c, Value* x, const TreeModel& m, DType dtype) {
  NodeTables t = node_tables(m);
  std::vector<SplitMode> modes;
  for (const TreeSplit& s : m.splits)
    if (std::find(modes.begin(), modes.end(), s.mode) == modes.end()) modes.push_back(s.mode);
  if (modes.empty()) modes.push_back(SplitMode::kLeq);
  std::vector<int64_t> roots;
  for (int64_t r = 0; r < m.trees; ++r) roots.push_back(r);
  Value* at = c.constant(Tensor::from_i64(roots));
  // A forest of single leaves still takes one step, to give positions per sample.
  for (int64_t d = 0; d < std::max<int64_t>(t.depth, 1); ++d) at = step(c, x, at, t, dtype, modes);
  bool extreme = m.aggregate == TreeAggregate::kMin || m.aggregate == TreeAggregate::kMax;
  bool is_min = m.aggregate == TreeAggregate::kMin;
  double start = aggregate_start(m, dtype),
         scale = m.aggregate == TreeAggregate::kAverage ? 1.0 / double(m.trees) : 1.0;
  int64_t rows = int64_t(t.leaf.size());
  TESSEL_USER_CHECK(rows * m.targets <= kMaxVoteCells, c.span())
      << "the ensemble is too large to run as tensors: " << rows << " nodes voting for " << m.targets
      << " targets";
  Tensor votes(dtype, {rows, m.targets});
  std::vector<bool> voted(size_t(rows * m.targets), false);
  for (int64_t r = 0; r < rows; ++r)
    for (const TreeVote& v :
         t.leaf[size_t(r)] >= 0 ? m.leaves[size_t(t.leaf[size_t(r)])].votes : std::vector<TreeVote>{}) {
      int64_t cell = r * m.targets + v.target;
      votes.set_f64(cell, (voted[size_t(cell)] ? votes.get_f64(cell) : 0) + v.weight * scale);
      voted[size_t(cell)] = true;
    }
  for (int64_t cell = 0; cell < rows * m.targets; ++cell)
    if (!voted[size_t(cell)]) votes.set_f64(cell, start);
  Value* reached = c.emit("Gather", {c.constant(std::move(votes)), at})[0];  // [N, trees, targets]
  const char* reduce = !extreme ? "ReduceSum" : is_min ? "ReduceMin" : "ReduceMax";
  return c.emit(reduce, {reached, c.i64_vector({1})}, one_attr("keepdims", int64_t(0)))[0];
}

}  // namespace tessel::onnx_frontend
