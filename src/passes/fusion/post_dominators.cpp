#include "src/passes/fusion/post_dominators.h"

#include <algorithm>

namespace tessel::passes::fusion {

PostDominators::PostDominators(const GraphUses& uses) : uses_(uses) {
  const std::vector<Node*> nodes = uses.graph.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {  // consumers first
    const Node* n = *it;
    const Node* meet = nullptr;
    bool first = true, to_sink = false;
    for (const Value* v : n->outputs) {
      if (!uses.is_live(v)) continue;
      if (uses.is_output(v)) to_sink = true;
      auto users = uses.users.find(v);
      if (users == uses.users.end()) continue;
      for (const Node* u : users->second) {
        meet = first ? u : common_ancestor(meet, u);
        first = false;
      }
    }
    if (to_sink || first) meet = nullptr;
    parent_[n] = meet;
    depth_[n] = meet ? depth_.at(meet) + 1 : 1;
  }
}

const Node* PostDominators::immediate(const Node* n) const {
  auto it = parent_.find(n);
  return it == parent_.end() ? nullptr : it->second;
}

const Node* PostDominators::common_ancestor(const Node* a, const Node* b) const {
  while (a && b && a != b) {
    if (depth_.at(a) >= depth_.at(b)) {
      a = parent_.at(a);
    } else {
      b = parent_.at(b);
    }
  }
  return a == b ? a : nullptr;
}

std::vector<const Node*> PostDominators::region(const Node* from, const Node* to) const {
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> worklist{from};
  while (!worklist.empty()) {
    const Node* n = worklist.back();
    worklist.pop_back();
    if (n == to) continue;
    for (const Value* v : n->outputs) {
      auto users = uses_.users.find(v);
      if (users == uses_.users.end()) continue;
      for (const Node* u : users->second)
        if (seen.insert(u).second) worklist.push_back(u);
    }
  }
  return in_graph_order(uses_.graph, seen);
}

void grow_to_post_dominators(const PostDominators& pdom, const Node* last,
                             const std::function<bool(const Node&)>& may_join, size_t max_nodes,
                             const std::unordered_map<const Node*, int>& assigned,
                             std::unordered_set<const Node*>& members) {
  for (const Node* next = pdom.immediate(last); next; next = pdom.immediate(last)) {
    std::vector<const Node*> region = pdom.region(last, next);
    bool joins = members.size() + region.size() <= max_nodes &&
                 std::all_of(region.begin(), region.end(), [&](const Node* n) {
                   return !assigned.count(n) && !members.count(n) && may_join(*n);
                 });
    if (!joins) return;
    members.insert(region.begin(), region.end());
    last = next;
  }
}

void grow_to_post_dominators(const PostDominators& pdom, const Node* last, OpPattern max_pattern,
                             size_t max_nodes, const std::unordered_map<const Node*, int>& assigned,
                             std::unordered_set<const Node*>& members) {
  grow_to_post_dominators(
      pdom, last, [max_pattern](const Node& n) { return pattern_of(n) <= max_pattern; }, max_nodes, assigned,
      members);
}

void add_anchor_groups(const graph::Graph& g, const GraphUses& uses, const PostDominators& pdom,
                       const std::function<bool(const Node&)>& may_join, const GroupExtension& extend,
                       Partition& partition) {
  for (const Node* n : g.nodes()) {
    if (partition.assigned.count(n) || !is_anchor(*n)) continue;
    std::unordered_set<const Node*> members{n};
    if (n->body) {  // a Scan's loop is a plan structure of its own: no kernel holds it
      partition.add(g, members);
      continue;
    }
    add_leading_data_movement(uses, partition.assigned, members);
    grow_to_post_dominators(pdom, n, may_join, kMaxGroupNodes, partition.assigned, members);
    if (extend) extend(*n, members);
    partition.add(g, members);
  }
}

void add_chain_groups(const graph::Graph& g, const PostDominators& pdom, Partition& partition) {
  for (const Node* n : g.nodes()) {
    if (partition.assigned.count(n)) continue;
    std::unordered_set<const Node*> members{n};
    if (!is_anchor(*n))
      grow_to_post_dominators(pdom, n, OpPattern::kInjective, kMaxGroupNodes, partition.assigned, members);
    partition.add(g, members);
  }
}

}  // namespace tessel::passes::fusion
