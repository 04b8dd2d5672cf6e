// "injective": only elementwise, broadcast and data-movement nodes are fused,
// into chains that grow along post-dominators (post_dominators.h), so a
// value with several consumers fuses where they meet again; every anchor
// (conv, matmul, reduction, ...) is a kernel of its own. It shows what fusing
// the cheap nodes alone buys.
#include "src/passes/fusion/grouping_util.h"
#include "src/passes/fusion/policies.h"
#include "src/passes/fusion/post_dominators.h"

namespace tessel::passes::fusion {

namespace {

class InjectiveGrouping final : public GroupingPolicy {
 public:
  std::vector<NodeGroup> group(const graph::Graph& g) const override {
    GraphUses uses(g);
    Partition partition;
    add_chain_groups(g, PostDominators(uses), partition);
    return named(topological_order(g, std::move(partition.groups)));
  }
};

}  // namespace

std::unique_ptr<GroupingPolicy> make_injective_grouping() {
  return std::make_unique<InjectiveGrouping>();
}

}  // namespace tessel::passes::fusion
