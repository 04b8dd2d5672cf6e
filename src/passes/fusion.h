// Graph-level grouping (fusion): which nodes become one PrimFunc, by a
// policy behind an interface, so that lowering and the runners take any.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph/graph.h"

namespace tessel::passes {

// Nodes that lower to one PrimFunc. `nodes` is in topological (graph) order;
// the set is convex: no path leaves the group and re-enters it.
struct NodeGroup {
  std::string name;
  std::vector<const graph::Node*> nodes;
};

class GroupingPolicy {
 public:
  virtual ~GroupingPolicy();
  // Every node of g in exactly one group; groups in an order in which each
  // runs after the groups it reads from. Group names are unique.
  virtual std::vector<NodeGroup> group(const graph::Graph& g) const = 0;
};

// "none": one group per node; "injective": chains of elementwise, broadcast
// and data-movement nodes only; "simple": an anchor with its injective
// producers and its single-consumer elementwise chain; "default": TVM's
// algorithm on post-dominators (fusion/default.cpp); "aggressive": default
// plus multi-stage kernels (row-wise reductions and normalisations join) and
// horizontal fusion of contractions reading one value. One file each in fusion/.
// "tuned": default's groups, or aggressive's where they disagree and a tuning
// log measured aggressive's faster (src/driver/tuned_fusion.h): it has no
// grouping of its own here.
enum class FusionPolicy { kNone, kInjective, kSimple, kDefault, kAggressive, kTuned };
// A user error listing the policies for any other name.
FusionPolicy parse_fusion_policy(std::string_view name);
std::string_view fusion_policy_name(FusionPolicy policy);
// A user error for tuned, which needs a tuning log.
std::unique_ptr<GroupingPolicy> make_grouping_policy(FusionPolicy policy);

// Whether no path of g leaves the group and comes back into it.
bool is_convex(const graph::Graph& g, const NodeGroup& group);

}  // namespace tessel::passes
