// "default": TVM's fusion algorithm on op patterns and post-dominators.
//
//   * Every anchor (a node beyond data movement and elementwise arithmetic:
//     conv, matmul, pool, reduction, normalisation), in graph order, takes
//     its injective producers (add_leading_data_movement: pad -> conv) and
//     then its elementwise/broadcast epilogue along post-dominators: where a
//     value has several consumers, the nodes up to where every path meets
//     again join together (conv -> x, sigmoid(x), x * sigmoid(x): one kernel),
//     as long as all of them are elementwise or broadcast.
//   * The nodes no anchor took fuse into chains of elementwise, broadcast and
//     data-movement nodes, grown the same way (post_dominators.h).
//   * A group holds at most kMaxGroupNodes nodes.
//
// Unlike TVM, an arithmetic producer never fuses into an anchor's input:
// inlined there, it would be recomputed at every step of the reduction.
#include "src/passes/fusion/grouping_util.h"
#include "src/passes/fusion/policies.h"
#include "src/passes/fusion/post_dominators.h"

namespace tessel::passes::fusion {

namespace {

class DefaultGrouping final : public GroupingPolicy {
 public:
  std::vector<NodeGroup> group(const graph::Graph& g) const override {
    GraphUses uses(g);
    PostDominators pdom(uses);
    Partition partition;
    auto epilogue = [](const Node& n) { return pattern_of(n) <= OpPattern::kBroadcast; };
    add_anchor_groups(g, uses, pdom, epilogue, nullptr, partition);
    add_chain_groups(g, pdom, partition);  // every node left is no anchor
    return named(topological_order(g, std::move(partition.groups)));
  }
};

}  // namespace

std::unique_ptr<GroupingPolicy> make_default_grouping() {
  return std::make_unique<DefaultGrouping>();
}

}  // namespace tessel::passes::fusion
