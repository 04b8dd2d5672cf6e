// "aggressive": default's algorithm (default.cpp), letting more into a group:
//
//   * Multi-stage kernels. A row-wise stage, an op that reduces or normalises
//     over the trailing axes of its input (Softmax, LayerNormalization,
//     Group/InstanceNormalization, global pooling, a Reduce* over the last
//     axes), may join a group along post-dominators like an elementwise op:
//     matmul -> scale -> mask -> Softmax is one kernel, and so is a
//     LayerNorm written out as ReduceMean, Sub, Pow, ReduceMean, ... A
//     row-wise stage that starts a group also takes the elementwise
//     producers only the group reads: it reads each row a few times, so their
//     arithmetic is recomputed instead of the row going through memory once more.
//   * Residual add and activation after a conv: the epilogue growth, as in default.
//   * Horizontal fusion. Groups whose anchors (convolutions, matmuls) read
//     the same computed value become one kernel when no path leads from one
//     to the other (attention's three projections, SqueezeNet's expand pair).
//
// Every group stays convex and within kMaxGroupNodes.
#include <algorithm>

#include "ir/graph/ops/reduce_axes.h"
#include "src/passes/fusion/grouping_util.h"
#include "src/passes/fusion/policies.h"
#include "src/passes/fusion/post_dominators.h"

namespace tessel::passes::fusion {

namespace {

int input_rank(const Node& n) {
  return n.inputs.empty() || !n.inputs[0] ? -1 : n.inputs[0]->type.rank();
}

// Whether the folded axes of a Reduce* are exactly the last ones.
bool reduces_trailing_axes(const Node& n) {
  int rank = input_rank(n);
  if (rank < 1) return false;
  std::vector<int64_t> axes;
  if (n.inputs.size() > 1 && n.inputs[1]) {
    if (!n.inputs[1]->is_constant()) return false;
    axes = n.inputs[1]->constant->to_i64_vector();
  }
  bool noop = n.attrs.has("noop_with_empty_axes") && n.attrs.get_int("noop_with_empty_axes") != 0;
  std::vector<bool> folded;
  try {
    folded = graph::ops::reduced_axes(axes, rank, noop, n.span());
  } catch (const UserError&) {
    return false;  // lowering reports it
  }
  auto first = std::find(folded.begin(), folded.end(), true);
  return first != folded.end() && std::all_of(first, folded.end(), [](bool f) { return f; });
}

bool is_row_stage(const Node& n) {
  const std::string& op = n.op;
  if (op == "LayerNormalization" || op == "GroupNormalization" || op == "InstanceNormalization" ||
      op == "GlobalAveragePool" || op == "GlobalMaxPool")
    return true;
  if (op == "Softmax" || op == "LogSoftmax") {
    int rank = input_rank(n);
    int64_t axis = n.attrs.has("axis") ? n.attrs.get_int("axis") : -1;
    return rank > 0 && (axis == -1 || axis == rank - 1);
  }
  return op.rfind("Reduce", 0) == 0 && pattern_of(n) == OpPattern::kReduce && reduces_trailing_axes(n);
}

bool may_join_aggressively(const Node& n) {
  return pattern_of(n) <= OpPattern::kBroadcast || is_row_stage(n);
}

bool has_contraction(const std::vector<const Node*>& group) {
  return std::any_of(group.begin(), group.end(),
                     [](const Node* n) { return pattern_of(*n) == OpPattern::kOutElemwiseFusable; });
}

// The computed values (no constants, no graph inputs) the group's contractions read.
std::unordered_set<const Value*> contraction_inputs(const std::vector<const Node*>& group) {
  std::unordered_set<const Value*> read;
  for (const Node* n : group)
    if (pattern_of(*n) == OpPattern::kOutElemwiseFusable)
      for (const Value* v : n->inputs)
        if (v && v->producer) read.insert(v);
  return read;
}

// Merges groups with contractions reading a common value, the earlier group
// taking the later one, while the union stays convex and within the cap.
void merge_siblings(const graph::Graph& g, std::vector<std::vector<const Node*>>& groups) {
  for (size_t i = 0; i < groups.size(); ++i) {
    if (!has_contraction(groups[i])) continue;
    std::unordered_set<const Value*> left = contraction_inputs(groups[i]);
    for (size_t j = i + 1; j < groups.size(); ++j) {
      if (!has_contraction(groups[j]) || groups[i].size() + groups[j].size() > kMaxGroupNodes) continue;
      std::unordered_set<const Value*> right = contraction_inputs(groups[j]);
      bool shared = std::any_of(right.begin(), right.end(), [&](const Value* v) { return left.count(v) > 0; });
      if (!shared) continue;
      std::unordered_set<const Node*> both(groups[i].begin(), groups[i].end());
      both.insert(groups[j].begin(), groups[j].end());
      std::vector<const Node*> merged = in_graph_order(g, both);
      if (!is_convex(g, {"siblings", merged})) continue;
      groups[i] = std::move(merged);
      left.insert(right.begin(), right.end());
      groups.erase(groups.begin() + long(j));
      --j;
    }
  }
}

class AggressiveGrouping final : public GroupingPolicy {
 public:
  std::vector<NodeGroup> group(const graph::Graph& g) const override {
    GraphUses uses(g);
    PostDominators pdom(uses);
    Partition partition;
    add_anchor_groups(g, uses, pdom, may_join_aggressively,
                      [&](const Node& anchor, std::unordered_set<const Node*>& members) {
                        if (!is_row_stage(anchor)) return;
                        add_producers_used_only_inside(
                            uses, partition.assigned, [](OpPattern p) { return p <= OpPattern::kBroadcast; },
                            kMaxGroupNodes, members);
                      },
                      partition);
    add_chain_groups(g, pdom, partition);
    merge_siblings(g, partition.groups);
    return named(topological_order(g, std::move(partition.groups)));
  }
};

}  // namespace

std::unique_ptr<GroupingPolicy> make_aggressive_grouping() {
  return std::make_unique<AggressiveGrouping>();
}

}  // namespace tessel::passes::fusion
