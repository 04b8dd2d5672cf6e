// What the grouping policies share: the consumers of every value, op
// patterns, and turning node sets into ordered, named groups.
#pragma once

#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph/graph.h"
#include "ir/graph/op_registry.h"
#include "src/passes/fusion.h"

namespace tessel::passes::fusion {

using graph::Node;
using graph::OpPattern;
using graph::Value;

using UserMap = std::unordered_map<const Value*, std::vector<const Node*>>;

// Distinct user nodes of every value, in graph order.
UserMap user_map(const graph::Graph& g);

using graph::pattern_of;

// Conv, MatMul, pools, reductions, normalisations: anything beyond data
// movement and elementwise arithmetic.
inline bool is_anchor(const Node& n) { return pattern_of(n) > OpPattern::kInjective; }

// The graph's nodes and their uses, as every policy reads them.
struct GraphUses {
  explicit GraphUses(const graph::Graph& g);

  bool is_output(const Value* v) const { return outputs.count(v) > 0; }
  bool is_live(const Value* v) const { return v && (is_output(v) || users.count(v)); }
  // Whether every use of n's live outputs is a node of `members` (no graph output).
  bool used_only_by(const Node* n, const std::unordered_set<const Node*>& members) const;

  const graph::Graph& graph;
  UserMap users;
  std::unordered_set<const Value*> outputs;
};

// Adds to `members`, transitively, the producers of members whose pattern is
// exactly injective (Pad, Reshape, Transpose, ...) and whose every use is in
// the group, unless `assigned` holds them. Arithmetic producers do not lead:
// inlined into a reduction they would be recomputed at every step.
void add_leading_data_movement(const GraphUses& uses, const std::unordered_map<const Node*, int>& assigned,
                               std::unordered_set<const Node*>& members);
// The same for the producers whose pattern `may_join` accepts, while the
// members stay within max_nodes.
void add_producers_used_only_inside(const GraphUses& uses, const std::unordered_map<const Node*, int>& assigned,
                                   const std::function<bool(OpPattern)>& may_join, size_t max_nodes,
                                   std::unordered_set<const Node*>& members);

// Groups being formed: the group of each node so far, and the groups in the
// order they were made.
struct Partition {
  std::unordered_map<const Node*, int> assigned;
  std::vector<std::vector<const Node*>> groups;
  void add(const graph::Graph& g, const std::unordered_set<const Node*>& members);
};

// The members in graph order.
std::vector<const Node*> in_graph_order(const graph::Graph& g, const std::unordered_set<const Node*>& members);

// Groups in dependence order, ties broken by the position of their first node;
// nullopt when they depend on each other in a cycle.
std::optional<std::vector<std::vector<const Node*>>> acyclic_order(const graph::Graph& g,
                                                                   std::vector<std::vector<const Node*>> groups);
// The same, a cycle being an internal error.
std::vector<std::vector<const Node*>> topological_order(const graph::Graph& g,
                                                        std::vector<std::vector<const Node*>> groups);

// Named groups: a single node by its name, a group by its last anchor
// ("fused_conv1"), made unique.
std::vector<NodeGroup> named(std::vector<std::vector<const Node*>> groups);

}  // namespace tessel::passes::fusion
