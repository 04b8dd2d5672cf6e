// "none": one kernel per node, the baseline every report compares with.
#include "src/passes/fusion/grouping_util.h"
#include "src/passes/fusion/policies.h"

namespace tessel::passes::fusion {

namespace {

class NoGrouping final : public GroupingPolicy {
 public:
  std::vector<NodeGroup> group(const graph::Graph& g) const override {
    std::vector<std::vector<const Node*>> groups;
    for (const Node* n : g.nodes()) groups.push_back({n});
    return named(std::move(groups));
  }
};

}  // namespace

std::unique_ptr<GroupingPolicy> make_no_grouping() {
  return std::make_unique<NoGrouping>();
}

}  // namespace tessel::passes::fusion
