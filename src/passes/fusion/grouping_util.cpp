#include "src/passes/fusion/grouping_util.h"

#include <cstdint>
#include <set>
#include <string>

#include "ir/core/diagnostics.h"

namespace tessel::passes::fusion {

UserMap user_map(const graph::Graph& g) {
  UserMap users;
  for (const Node* n : g.nodes())
    for (const Value* v : n->inputs) {
      if (!v) continue;
      std::vector<const Node*>& list = users[v];
      if (list.empty() || list.back() != n) list.push_back(n);
    }
  return users;
}

GraphUses::GraphUses(const graph::Graph& g) : graph(g), users(user_map(g)) {
  for (const Value* v : g.outputs()) outputs.insert(v);
}

bool GraphUses::used_only_by(const Node* n, const std::unordered_set<const Node*>& members) const {
  for (const Value* v : n->outputs) {
    if (!is_live(v)) continue;
    if (is_output(v)) return false;
    for (const Node* u : users.at(v))
      if (!members.count(u)) return false;
  }
  return true;
}

void add_producers_used_only_inside(const GraphUses& uses, const std::unordered_map<const Node*, int>& assigned,
                                   const std::function<bool(OpPattern)>& may_join, size_t max_nodes,
                                   std::unordered_set<const Node*>& members) {
  std::vector<const Node*> worklist(members.begin(), members.end());
  while (!worklist.empty()) {
    const Node* n = worklist.back();
    worklist.pop_back();
    for (const Value* v : n->inputs) {
      const Node* p = v ? v->producer : nullptr;
      if (!p || members.count(p) || assigned.count(p) || !may_join(pattern_of(*p))) continue;
      if (!uses.used_only_by(p, members) || members.size() >= max_nodes) continue;
      members.insert(p);
      worklist.push_back(p);
    }
  }
}

void add_leading_data_movement(const GraphUses& uses, const std::unordered_map<const Node*, int>& assigned,
                               std::unordered_set<const Node*>& members) {
  add_producers_used_only_inside(
      uses, assigned, [](OpPattern p) { return p == OpPattern::kInjective; }, SIZE_MAX, members);
}

std::vector<const Node*> in_graph_order(const graph::Graph& g, const std::unordered_set<const Node*>& members) {
  std::vector<const Node*> ordered;
  for (const Node* n : g.nodes())
    if (members.count(n)) ordered.push_back(n);
  return ordered;
}

void Partition::add(const graph::Graph& g, const std::unordered_set<const Node*>& members) {
  for (const Node* m : members) assigned[m] = int(groups.size());
  groups.push_back(in_graph_order(g, members));
}

std::optional<std::vector<std::vector<const Node*>>> acyclic_order(const graph::Graph& g,
                                                                   std::vector<std::vector<const Node*>> groups) {
  std::unordered_map<const Node*, size_t> group_of, position;
  for (const Node* n : g.nodes()) position[n] = position.size();
  for (size_t i = 0; i < groups.size(); ++i)
    for (const Node* n : groups[i]) group_of[n] = i;
  std::vector<std::set<size_t>> successors(groups.size());
  std::vector<int> pending(groups.size(), 0);
  for (size_t j = 0; j < groups.size(); ++j)
    for (const Node* n : groups[j])
      for (const Value* v : n->inputs) {
        if (!v || !v->producer) continue;
        size_t i = group_of.at(v->producer);
        if (i != j && successors[i].insert(j).second) ++pending[j];
      }
  std::set<std::pair<size_t, size_t>> ready;  // (first node position, group)
  for (size_t i = 0; i < groups.size(); ++i)
    if (pending[i] == 0) ready.insert({position.at(groups[i].front()), i});
  std::vector<std::vector<const Node*>> ordered;
  while (!ready.empty()) {
    size_t i = ready.begin()->second;
    ready.erase(ready.begin());
    for (size_t j : successors[i])
      if (--pending[j] == 0) ready.insert({position.at(groups[j].front()), j});
    ordered.push_back(std::move(groups[i]));
  }
  if (ordered.size() != groups.size()) return std::nullopt;
  return ordered;
}

std::vector<std::vector<const Node*>> topological_order(const graph::Graph& g,
                                                        std::vector<std::vector<const Node*>> groups) {
  auto ordered = acyclic_order(g, std::move(groups));
  TESSEL_ICHECK(ordered.has_value()) << "the groups of " << g.name << " depend on each other in a cycle";
  return std::move(*ordered);
}

std::vector<NodeGroup> named(std::vector<std::vector<const Node*>> groups) {
  std::vector<NodeGroup> out;
  std::set<std::string> used;
  for (auto& nodes : groups) {
    const Node* anchor = nodes.front();
    for (const Node* n : nodes)
      if (is_anchor(*n)) anchor = n;
    std::string base = nodes.size() == 1 ? anchor->name : "fused_" + anchor->name;
    if (base.empty() || base == "fused_") base += anchor->op;
    std::string name = base;
    for (int i = 1; !used.insert(name).second; ++i) name = base + "_" + std::to_string(i);
    out.push_back({std::move(name), std::move(nodes)});
  }
  return out;
}

}  // namespace tessel::passes::fusion
