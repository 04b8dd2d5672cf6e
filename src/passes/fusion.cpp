// Grouping policies. "simple" is a first fusion rule, in TVM's op-pattern terms:
//
//   * An anchor is a node whose pattern is not elemwise, broadcast or injective
//     (Conv, MatMul, Gemm, pools, reductions, softmax, normalisations, ...).
//   * Trailing: from the anchor, the chain of elemwise/broadcast nodes that
//     consume it joins, as long as the value at the end of the chain has exactly
//     one consumer node and is no graph output (conv -> add -> relu).
//   * Leading: a producer of a member whose pattern is exactly injective (data
//     movement: Pad, Reshape, Transpose, ...) joins when every use of its
//     outputs is inside the group (pad -> conv); recursively. Arithmetic
//     elemwise producers do not lead: inlined into a reduction they would be
//     recomputed at every reduction step.
//   * Every node no anchor claims is a group of its own.
//
// Such a group is convex by construction: every value made in it except the
// chain's last is used only inside it, so the only path out starts at the
// end, and nothing inside depends on the end. Groups are then ordered
// topologically (ties in graph order).
#include "src/passes/fusion.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/core/diagnostics.h"
#include "ir/graph/op_registry.h"

namespace tessel::passes {

namespace {

using graph::Node;
using graph::OpPattern;
using graph::Value;

using UserMap = std::unordered_map<const Value*, std::vector<const Node*>>;

// Distinct user nodes of every value, in graph order.
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

OpPattern pattern_of(const Node& n) {
  const graph::OpSchema* schema = graph::OpRegistry::global().find(n.op);
  return schema ? schema->pattern : OpPattern::kOpaque;
}

bool is_anchor(const Node& n) {
  return pattern_of(n) > OpPattern::kInjective;
}

class SimpleGrouper {
 public:
  explicit SimpleGrouper(const graph::Graph& g) : graph_(g), users_(user_map(g)) {
    for (const Value* v : g.outputs()) graph_outputs_.insert(v);
  }

  std::vector<std::vector<const Node*>> run() {
    std::vector<Node*> nodes = graph_.nodes();
    for (const Node* n : nodes)
      if (is_anchor(*n) && !assigned_.count(n)) claim_around(n);
    for (const Node* n : nodes)
      if (!assigned_.count(n)) add_group({n});
    return std::move(groups_);
  }

 private:
  bool is_live(const Value* v) const { return v && (graph_outputs_.count(v) || users_.count(v)); }

  // The node's only live output, or null when it has none or several.
  const Value* single_live_output(const Node* n) const {
    const Value* found = nullptr;
    for (const Value* v : n->outputs) {
      if (!is_live(v)) continue;
      if (found) return nullptr;
      found = v;
    }
    return found;
  }

  bool used_only_by(const Node* n, const std::unordered_set<const Node*>& members) const {
    for (const Value* v : n->outputs) {
      if (!is_live(v)) continue;
      if (graph_outputs_.count(v)) return false;
      for (const Node* u : users_.at(v))
        if (!members.count(u)) return false;
    }
    return true;
  }

  void claim_around(const Node* anchor) {
    std::unordered_set<const Node*> members{anchor};
    std::vector<const Node*> worklist{anchor};
    while (!worklist.empty()) {  // leading data movement, transitively
      const Node* n = worklist.back();
      worklist.pop_back();
      for (const Value* v : n->inputs) {
        const Node* p = v ? v->producer : nullptr;
        if (!p || members.count(p) || assigned_.count(p) || pattern_of(*p) != OpPattern::kInjective) continue;
        if (!used_only_by(p, members)) continue;
        members.insert(p);
        worklist.push_back(p);
      }
    }
    for (const Node* tail = anchor;;) {  // trailing elemwise/broadcast chain
      const Value* out = single_live_output(tail);
      if (!out || graph_outputs_.count(out) || !users_.count(out) || users_.at(out).size() != 1) break;
      const Node* next = users_.at(out).front();
      if (assigned_.count(next) || pattern_of(*next) > OpPattern::kBroadcast) break;
      members.insert(next);
      tail = next;
    }
    std::vector<const Node*> ordered;
    for (const Node* n : graph_.nodes())
      if (members.count(n)) ordered.push_back(n);
    add_group(std::move(ordered));
  }

  void add_group(std::vector<const Node*> nodes) {
    for (const Node* n : nodes) assigned_[n] = int(groups_.size());
    groups_.push_back(std::move(nodes));
  }

  const graph::Graph& graph_;
  UserMap users_;
  std::unordered_set<const Value*> graph_outputs_;
  std::unordered_map<const Node*, int> assigned_;
  std::vector<std::vector<const Node*>> groups_;
};

// Groups in dependence order, ties broken by the position of their first node.
std::vector<std::vector<const Node*>> topological_order(const graph::Graph& g,
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
  TESSEL_ICHECK(ordered.size() == groups.size())
      << "the groups of " << g.name << " depend on each other in a cycle";
  return ordered;
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

class NoGrouping final : public GroupingPolicy {
 public:
  std::vector<NodeGroup> group(const graph::Graph& g) const override {
    std::vector<std::vector<const Node*>> groups;
    for (const Node* n : g.nodes()) groups.push_back({n});
    return named(std::move(groups));
  }
};

class SimpleGrouping final : public GroupingPolicy {
 public:
  std::vector<NodeGroup> group(const graph::Graph& g) const override {
    return named(topological_order(g, SimpleGrouper(g).run()));
  }
};

}  // namespace

GroupingPolicy::~GroupingPolicy() = default;

FusionPolicy parse_fusion_policy(std::string_view name) {
  if (name == "none") return FusionPolicy::kNone;
  TESSEL_USER_CHECK(name == "simple", Span{}) << "unknown fusion policy '" << name << "' (available: none, simple)";
  return FusionPolicy::kSimple;
}

std::string_view fusion_policy_name(FusionPolicy policy) {
  return policy == FusionPolicy::kNone ? "none" : "simple";
}

std::unique_ptr<GroupingPolicy> make_grouping_policy(FusionPolicy policy) {
  if (policy == FusionPolicy::kNone) return std::make_unique<NoGrouping>();
  return std::make_unique<SimpleGrouping>();
}

bool is_convex(const graph::Graph& g, const NodeGroup& group) {
  UserMap users = user_map(g);
  std::unordered_set<const Node*> members(group.nodes.begin(), group.nodes.end());
  // Walk downstream from the group through outside nodes only; reaching a
  // member again means a path left and re-entered.
  std::vector<const Node*> worklist;
  std::unordered_set<const Node*> seen;
  auto push_users = [&](const Node* n) {
    for (const Value* v : n->outputs) {
      auto it = v ? users.find(v) : users.end();
      if (it == users.end()) continue;
      for (const Node* u : it->second)
        if (seen.insert(u).second) worklist.push_back(u);
    }
  };
  for (const Node* n : group.nodes) push_users(n);
  while (!worklist.empty()) {
    const Node* n = worklist.back();
    worklist.pop_back();
    if (members.count(n)) continue;  // inside edges, and re-entries checked below
    push_users(n);
  }
  // A member fed by an outside node that the group reaches: a path re-enters.
  for (const Node* n : group.nodes)
    for (const Value* v : n->inputs) {
      const Node* p = v ? v->producer : nullptr;
      if (p && !members.count(p) && seen.count(p)) return false;
    }
  return true;
}

}  // namespace tessel::passes
