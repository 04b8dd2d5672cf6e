// Post-dominators of the graph's nodes, TVM's tool for fusing across values
// with several consumers: where every path from a node meets again.
//
//   conv -> x;  x -> sigmoid -> s;  mul(x, s)   ipdom(conv) = mul, region {sigmoid, mul}
//   relu -> y;  y is a graph output             ipdom(relu) = none (the outputs' sink)
#pragma once

#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "src/passes/fusion/grouping_util.h"

namespace tessel::passes::fusion {

class PostDominators {
 public:
  explicit PostDominators(const GraphUses& uses);

  // The first node that every path from n to a graph output passes through;
  // null when the paths first meet at the outputs (n's value, or a value
  // between n and the meeting point, is a graph output) or n has no live output.
  const Node* immediate(const Node* n) const;

  // The nodes on the paths from `from` to `to` = immediate(from): `to` and
  // every node between, `from` not; in graph order.
  std::vector<const Node*> region(const Node* from, const Node* to) const;

 private:
  const Node* common_ancestor(const Node* a, const Node* b) const;

  const GraphUses& uses_;
  std::unordered_map<const Node*, const Node*> parent_;
  std::unordered_map<const Node*, int> depth_;  // 1 under the sink
};

// The most nodes a policy puts into one group (TVM caps its depth too): a
// chain of hundreds of elementwise nodes is split rather than inlined whole.
inline constexpr size_t kMaxGroupNodes = 64;

// Grows a group downstream from its last node: while the region up to the
// next post-dominator holds only unassigned nodes whose pattern is at most
// max_pattern and the group stays within max_nodes, the region joins and
// its post-dominator becomes the last node. A group grown so is convex: every
// path out of a region passes through its post-dominator.
void grow_to_post_dominators(const PostDominators& pdom, const Node* last, OpPattern max_pattern,
                             size_t max_nodes, const std::unordered_map<const Node*, int>& assigned,
                             std::unordered_set<const Node*>& members);
// The same with the nodes a region may hold decided by `may_join`.
void grow_to_post_dominators(const PostDominators& pdom, const Node* last,
                             const std::function<bool(const Node&)>& may_join, size_t max_nodes,
                             const std::unordered_map<const Node*, int>& assigned,
                             std::unordered_set<const Node*>& members);

// Every anchor no group holds yet, in graph order, starts a group: its
// leading data movement (add_leading_data_movement), then the regions along
// its post-dominators whose nodes may_join allows; `extend`, when given, may
// add more to the members before they become a group.
using GroupExtension = std::function<void(const Node& anchor, std::unordered_set<const Node*>& members)>;
void add_anchor_groups(const graph::Graph& g, const GraphUses& uses, const PostDominators& pdom,
                       const std::function<bool(const Node&)>& may_join, const GroupExtension& extend,
                       Partition& partition);

// Every node no group holds yet, in graph order, starts a group; one that is
// not an anchor grows along post-dominators through elementwise, broadcast
// and data-movement nodes (an anchor stays alone).
void add_chain_groups(const graph::Graph& g, const PostDominators& pdom, Partition& partition);

}  // namespace tessel::passes::fusion
