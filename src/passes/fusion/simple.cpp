// "simple", a first fusion rule in TVM's op-pattern terms:
//
//   * An anchor is a node whose pattern is not elemwise, broadcast or injective
//     (Conv, MatMul, Gemm, pools, reductions, softmax, normalisations, ...).
//   * Trailing: from the anchor, the chain of elemwise/broadcast nodes that
//     consume it joins, as long as the value at the end of the chain has exactly
//     one consumer node and is no graph output (conv -> add -> relu).
//   * Leading: injective producers (add_leading_data_movement: pad -> conv).
//   * Every node no anchor claims is a group of its own.
//
// Such a group is convex by construction: every value made in it except the
// chain's last is used only inside it, so the only path out starts at the
// end, and nothing inside depends on the end. Groups are then ordered
// topologically (ties in graph order).
#include "src/passes/fusion/grouping_util.h"
#include "src/passes/fusion/policies.h"

namespace tessel::passes::fusion {

namespace {

class SimpleGrouper {
 public:
  explicit SimpleGrouper(const graph::Graph& g) : uses_(g) {}

  std::vector<std::vector<const Node*>> run() {
    std::vector<Node*> nodes = uses_.graph.nodes();
    for (const Node* n : nodes)
      if (is_anchor(*n) && !assigned_.count(n)) n->body ? add_group({n}) : claim_around(n);
    for (const Node* n : nodes)
      if (!assigned_.count(n)) add_group({n});
    return std::move(groups_);
  }

 private:
  // The node's only live output, or null when it has none or several.
  const Value* single_live_output(const Node* n) const {
    const Value* found = nullptr;
    for (const Value* v : n->outputs) {
      if (!uses_.is_live(v)) continue;
      if (found) return nullptr;
      found = v;
    }
    return found;
  }

  void claim_around(const Node* anchor) {
    std::unordered_set<const Node*> members{anchor};
    add_leading_data_movement(uses_, assigned_, members);
    for (const Node* tail = anchor;;) {  // trailing elemwise/broadcast chain
      const Value* out = single_live_output(tail);
      if (!out || uses_.is_output(out) || !uses_.users.count(out) || uses_.users.at(out).size() != 1) break;
      const Node* next = uses_.users.at(out).front();
      if (assigned_.count(next) || pattern_of(*next) > OpPattern::kBroadcast) break;
      members.insert(next);
      tail = next;
    }
    add_group(in_graph_order(uses_.graph, members));
  }

  void add_group(std::vector<const Node*> nodes) {
    for (const Node* n : nodes) assigned_[n] = int(groups_.size());
    groups_.push_back(std::move(nodes));
  }

  GraphUses uses_;
  std::unordered_map<const Node*, int> assigned_;
  std::vector<std::vector<const Node*>> groups_;
};

class SimpleGrouping final : public GroupingPolicy {
 public:
  std::vector<NodeGroup> group(const graph::Graph& g) const override {
    return named(topological_order(g, SimpleGrouper(g).run()));
  }
};

}  // namespace

std::unique_ptr<GroupingPolicy> make_simple_grouping() {
  return std::make_unique<SimpleGrouping>();
}

}  // namespace tessel::passes::fusion
