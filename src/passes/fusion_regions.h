// Where two groupings of one graph disagree, and a grouping that takes, region
// by region, one side or the other: what the `tuned` fusion policy decides by
// measurement (src/driver/tuned_fusion.h).
//
// A region is a smallest set of nodes that both groupings cover with their
// own groups: the groups that differ, joined while a group of one side
// overlaps a group of the other. Default and aggressive disagree, on a CNN's
// classifier, in one region: {Flatten+Gemm, Softmax} against
// {Flatten+Gemm+Softmax}.
#pragma once

#include <vector>

#include "ir/graph/graph.h"
#include "src/passes/fusion.h"

namespace tessel::passes {

struct FusionRegion {
  std::vector<NodeGroup> base;         // the base grouping's groups over the region, by first node
  std::vector<NodeGroup> alternative;  // the alternative's
};

// The regions where `alternative` groups g's nodes otherwise than `base`, in
// the order of their first nodes. Both must cover every node once.
std::vector<FusionRegion> fusion_regions(const graph::Graph& g, const std::vector<NodeGroup>& base,
                                         const std::vector<NodeGroup>& alternative);

struct CombinedGrouping {
  std::vector<NodeGroup> groups;  // in dependence order, named as the policies name them
  std::vector<bool> alternative;  // per region: whether its alternative groups were taken
};

// The base grouping with the alternative's groups in the regions `take`
// asks for, in region order, except where that would make groups depend on
// each other in a cycle (convex groups can: X reads Y and Y reads X through
// other nodes): that region keeps its base groups.
CombinedGrouping combine_groupings(const graph::Graph& g, const std::vector<NodeGroup>& base,
                                   const std::vector<FusionRegion>& regions, const std::vector<bool>& take);

}  // namespace tessel::passes
