// Where two groupings disagree (src/passes/fusion_regions.h): the tiny CNN's
// classifier is the one region where default and aggressive differ, either
// side can be taken, and a choice that would make kernels depend on each
// other in a cycle keeps the base's groups.
#include "src/passes/fusion_regions.h"

#include <gtest/gtest.h>

#include "ir/graph/op_registry.h"
#include "src/driver/pipeline.h"
#include "tests/unit/fusion_test_util.h"

namespace tessel {
namespace {

using fusion_test::Members;
using passes::FusionPolicy;
using passes::NodeGroup;

Members names(const std::vector<NodeGroup>& groups) {
  Members out;
  for (const NodeGroup& group : groups) {
    out.emplace_back();
    for (const graph::Node* n : group.nodes) out.back().push_back(n->name);
  }
  return out;
}

graph::Graph tiny_cnn() {
  driver::PipelineOptions o;
  o.import.input_shapes["image"] = {1, 1, 28, 28};
  return driver::load_graph(std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx", o);
}

TEST(FusionRegions, DefaultAndAggressiveDifferOnlyAtTheClassifier) {
  graph::Graph g = tiny_cnn();
  std::vector<NodeGroup> base = passes::make_grouping_policy(FusionPolicy::kDefault)->group(g);
  std::vector<NodeGroup> alternative = passes::make_grouping_policy(FusionPolicy::kAggressive)->group(g);
  std::vector<passes::FusionRegion> regions = passes::fusion_regions(g, base, alternative);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(names(regions[0].base), (Members{{"flatten", "fc"}, {"softmax"}}));
  EXPECT_EQ(names(regions[0].alternative), (Members{{"flatten", "fc", "softmax"}}));
  EXPECT_TRUE(passes::fusion_regions(g, base, base).empty());

  passes::CombinedGrouping fused = passes::combine_groupings(g, base, regions, {true});
  EXPECT_EQ(names(fused.groups), names(alternative));
  EXPECT_EQ(fused.alternative, std::vector<bool>{true});
  passes::CombinedGrouping kept = passes::combine_groupings(g, base, regions, {false});
  EXPECT_EQ(names(kept.groups), names(base));
  EXPECT_EQ(kept.alternative, std::vector<bool>{false});
}

// x1 -> y1 and y2 -> x2: {x1, x2} and {y1, y2} are each convex, but together
// X reads Y and Y reads X. The second region asked for keeps its base groups.
TEST(FusionRegions, AChoiceThatWouldMakeACycleKeepsTheBaseGroups) {
  graph::Graph g;
  graph::Value* a = g.add_input("a", graph::TensorType(DType::kF32, Dims{4}));
  auto relu = [&](const std::string& name, graph::Value* in) {
    graph::Node* n = g.add_node("Relu", name, {in}, {name});
    graph::infer_node(*n);
    return n->outputs[0];
  };
  graph::Value* x1 = relu("x1", a);
  graph::Value* y1 = relu("y1", x1);
  graph::Value* y2 = relu("y2", a);
  graph::Value* x2 = relu("x2", y2);
  g.set_outputs({y1, x2});
  std::vector<NodeGroup> singles = passes::make_grouping_policy(FusionPolicy::kNone)->group(g);
  auto node = [&](const std::string& name) {
    for (const graph::Node* n : g.nodes())
      if (n->name == name) return static_cast<const graph::Node*>(n);
    ADD_FAILURE() << "no node " << name;
    return static_cast<const graph::Node*>(nullptr);
  };
  std::vector<NodeGroup> pairs = {{"X", {node("x1"), node("x2")}}, {"Y", {node("y1"), node("y2")}}};
  for (const NodeGroup& group : pairs) EXPECT_TRUE(passes::is_convex(g, group)) << group.name;

  std::vector<passes::FusionRegion> regions = passes::fusion_regions(g, singles, pairs);
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(names(regions[0].alternative), (Members{{"x1", "x2"}}));
  EXPECT_EQ(names(regions[1].alternative), (Members{{"y1", "y2"}}));
  passes::CombinedGrouping both = passes::combine_groupings(g, singles, regions, {true, true});
  EXPECT_EQ(both.alternative, (std::vector<bool>{true, false}));
  EXPECT_EQ(names(both.groups), (Members{{"y2"}, {"x1", "x2"}, {"y1"}}));
  passes::CombinedGrouping second = passes::combine_groupings(g, singles, regions, {false, true});
  EXPECT_EQ(second.alternative, (std::vector<bool>{false, true}));
  EXPECT_EQ(names(second.groups), (Members{{"x1"}, {"y1", "y2"}, {"x2"}}));
}

}  // namespace
}  // namespace tessel
