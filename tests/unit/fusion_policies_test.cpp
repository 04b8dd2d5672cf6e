// The fusion policies on small graphs that read like the models they come
// from (SiLU, a squeeze-and-excitation gate, residual blocks, a value that
// is a graph output midway), the post-dominator tree they grow along, and
// properties every policy keeps on random graphs: each node in one group,
// groups convex and in dependence order, the interpreter's results those of
// the reference.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "ir/graph/op_registry.h"
#include "src/driver/compile_model.h"
#include "src/driver/conformance.h"
#include "src/driver/tir_runner.h"
#include "src/passes/dead_code.h"
#include "src/passes/fusion.h"
#include "src/passes/fusion/post_dominators.h"
#include "src/reference/executor.h"
#include "tests/unit/fusion_test_util.h"

namespace tessel {
namespace {

using graph::Node;
using graph::TensorType;
using graph::Value;
using passes::FusionPolicy;
using fusion_test::grouped;
using fusion_test::Members;
using fusion_test::random_tensor;

struct Builder {
  graph::Graph g;
  Value* input(const std::string& name, Dims shape) { return g.add_input(name, TensorType(DType::kF32, shape)); }
  Value* op(const std::string& op, const std::string& name, std::vector<Value*> in, graph::Attrs attrs = {}) {
    Node* n = g.add_node(op, name, std::move(in), {name}, std::move(attrs));
    graph::infer_node(*n);
    return n->outputs[0];
  }
  Value* conv(const std::string& name, Value* x, int64_t out_channels, int64_t k, uint32_t seed) {
    int64_t in_channels = x->type.static_dims()[1];
    graph::Attrs a;
    a.set("pads", std::vector<int64_t>(4, (k - 1) / 2));
    Value* w = g.add_constant(name + ".w", random_tensor({out_channels, in_channels, k, k}, seed));
    return op("Conv", name, {x, w}, a);
  }
  Value* silu(const std::string& name, Value* x) { return op("Mul", name, {x, op("Sigmoid", name + "_sig", {x})}); }
};

// conv -> x; y = x * sigmoid(x); conv2(y)
struct SiluNet : Builder {
  SiluNet() {
    Value* x = conv("conv", input("image", {1, 3, 8, 8}), 8, 3, 1);
    g.set_outputs({conv("conv2", silu("act", x), 4, 1, 2)});
  }
};

TEST(FusionPolicies, SiluJoinsItsConvWhereItsTwoPathsMeet) {
  SiluNet net;
  EXPECT_EQ(grouped(net.g, FusionPolicy::kDefault), (Members{{"conv", "act_sig", "act"}, {"conv2"}}));
  EXPECT_EQ(grouped(net.g, FusionPolicy::kSimple), (Members{{"conv"}, {"act_sig"}, {"act"}, {"conv2"}}))
      << "simple stops at a value with two consumers";
  EXPECT_EQ(grouped(net.g, FusionPolicy::kInjective), (Members{{"conv"}, {"act_sig", "act"}, {"conv2"}}));
  EXPECT_EQ(grouped(net.g, FusionPolicy::kNone).size(), 4u);
}

// x -> conv -> relu (a graph output) -> add(relu, x) ...: the epilogue stops
// at a graph output, whose value must be written whole.
TEST(FusionPolicies, AGraphOutputEndsTheEpilogue) {
  Builder b;
  Value* x = b.input("x", {1, 4, 6, 6});
  Value* relu = b.op("Relu", "relu", {b.conv("conv", x, 4, 3, 1)});
  Value* sum = b.op("Add", "add", {relu, x});
  b.g.set_outputs({relu, b.op("Neg", "neg", {sum})});
  EXPECT_EQ(grouped(b.g, FusionPolicy::kDefault), (Members{{"conv", "relu"}, {"add", "neg"}}));
}

// A residual block: conv1 -> relu -> conv2 -> add(., x) -> relu. The
// block's input x is read by conv1 and by the add: no fusion across conv1.
TEST(FusionPolicies, AResidualAddJoinsTheSecondConvNotTheFirst) {
  Builder b;
  Value* x = b.input("x", {1, 4, 6, 6});
  Value* h = b.op("Relu", "relu1", {b.conv("conv1", x, 4, 3, 1)});
  Value* y = b.op("Relu", "relu2", {b.op("Add", "residual", {b.conv("conv2", h, 4, 3, 2), x})});
  b.g.set_outputs({y});
  EXPECT_EQ(grouped(b.g, FusionPolicy::kDefault), (Members{{"conv1", "relu1"}, {"conv2", "residual", "relu2"}}));
}

// Squeeze-and-excitation: x -> pool -> fc1 -> silu -> fc2 -> sigmoid -> x * gate.
// The gate's product is a broadcast epilogue of fc2; the pool is an anchor
// of its own (a reduction between x and the product).
TEST(FusionPolicies, AnExcitationGateEndsInTheProductWithItsInput) {
  Builder b;
  Value* x = b.silu("act", b.conv("conv", b.input("image", {1, 3, 8, 8}), 8, 3, 1));
  Value* pooled = b.op("GlobalAveragePool", "pool", {x});
  Value* gate = b.op("Sigmoid", "gate", {b.conv("fc2", b.silu("fc_act", b.conv("fc1", pooled, 2, 1, 2)), 8, 1, 3)});
  b.g.set_outputs({b.op("Mul", "excite", {x, gate})});
  EXPECT_EQ(grouped(b.g, FusionPolicy::kDefault),
            (Members{{"conv", "act_sig", "act"}, {"pool"}, {"fc1", "fc_act_sig", "fc_act"}, {"fc2", "gate", "excite"}}));
}

TEST(FusionPolicies, AGroupHoldsAtMost64Nodes) {
  Builder b;
  Value* v = b.input("x", {1, 16});
  for (int i = 0; i < 100; ++i) v = b.op("Relu", "r" + std::to_string(i), {v});
  b.g.set_outputs({v});
  for (FusionPolicy p : {FusionPolicy::kDefault, FusionPolicy::kInjective}) {
    Members groups = grouped(b.g, p);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].size(), 64u);
    EXPECT_EQ(groups[1].size(), 36u);
  }
}

TEST(PostDominators, WherePathsMeetAndWhereTheyLeaveThroughOutputs) {
  SiluNet net;
  passes::fusion::GraphUses uses(net.g);
  passes::fusion::PostDominators pdom(uses);
  auto node = [&](const std::string& name) -> const Node* {
    for (const Node* n : net.g.nodes())
      if (n->name == name) return n;
    return nullptr;
  };
  EXPECT_EQ(pdom.immediate(node("conv")), node("act"));
  EXPECT_EQ(pdom.immediate(node("act_sig")), node("act"));
  EXPECT_EQ(pdom.immediate(node("act")), node("conv2"));
  EXPECT_EQ(pdom.immediate(node("conv2")), nullptr) << "its value is the graph's output";
  std::vector<const Node*> region = pdom.region(node("conv"), node("act"));
  EXPECT_EQ(region, (std::vector<const Node*>{node("act_sig"), node("act")}));
}

// Random DAGs of convs, matmul-free elementwise and data movement, several
// consumers per value and outputs midway: every policy's groups are convex,
// cover each node once, come in dependence order, and interpret (and, for
// some, compile) to the reference's results.
graph::Graph random_graph(uint32_t seed) {
  std::mt19937 rng(seed);
  Builder b;
  std::vector<Value*> values{b.input("x", {1, 4, 5, 5})};
  const char* unary[] = {"Relu", "Sigmoid", "Neg", "Abs", "Softmax"};
  for (int i = 0; i < 14; ++i) {
    std::string name = "n" + std::to_string(i);
    Value* a = values[rng() % values.size()];
    Value* c = values[rng() % values.size()];
    switch (rng() % 5) {
      case 0: values.push_back(b.conv(name, a, 4, 1 + 2 * int64_t(rng() % 2), seed + i)); break;
      case 1: values.push_back(b.op("Add", name, {a, c})); break;
      case 2: values.push_back(b.op("Mul", name, {a, c})); break;
      case 3: values.push_back(b.op(unary[rng() % 5], name, {a})); break;
      default: {
        graph::Attrs perm;
        perm.set("perm", std::vector<int64_t>{0, 1, 3, 2});
        values.push_back(b.op("Transpose", name, {a}, perm));
      }
    }
  }
  b.g.set_outputs({values.back(), values[values.size() / 2]});
  passes::eliminate_dead_code(b.g);  // as load_graph does before any policy
  return std::move(b.g);
}

TEST(FusionPolicies, EveryPolicyIsAConvexOrderedPartitionThatComputesTheReference) {
  int default_fused_more = 0;  // graphs where default fused across a value with several consumers
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    graph::Graph g = random_graph(seed);
    std::vector<Tensor> inputs{random_tensor({1, 4, 5, 5}, seed)};
    std::vector<Tensor> want = reference::Executor(g).run(inputs);
    for (FusionPolicy p : {FusionPolicy::kNone, FusionPolicy::kInjective, FusionPolicy::kSimple, FusionPolicy::kDefault,
                           FusionPolicy::kAggressive}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " policy " + std::string(passes::fusion_policy_name(p)));
      std::vector<passes::NodeGroup> groups = passes::make_grouping_policy(p)->group(g);
      if (p == FusionPolicy::kDefault && groups.size() < grouped(g, FusionPolicy::kSimple).size()) ++default_fused_more;
      std::map<const Node*, size_t> group_of;
      for (size_t i = 0; i < groups.size(); ++i) {
        EXPECT_TRUE(passes::is_convex(g, groups[i])) << groups[i].name;
        for (const Node* n : groups[i].nodes) EXPECT_TRUE(group_of.emplace(n, i).second) << n->name << " twice";
      }
      EXPECT_EQ(group_of.size(), g.nodes().size());
      for (const Node* n : g.nodes())
        for (const Value* v : n->inputs)
          if (v && v->producer) {
            EXPECT_LE(group_of.at(v->producer), group_of.at(n)) << n->name << " before its input";
          }
      std::vector<std::vector<Tensor>> runs{driver::TirExecutor(g, p).run(inputs)};
      if (seed <= 4 && p != FusionPolicy::kNone) {  // compiled with the default schedule too
        driver::CompileOptions options;
        options.fusion = p;
        runs.push_back(driver::JitModel(driver::compile_graph(g, options)).run(inputs));
      }
      for (const std::vector<Tensor>& got : runs) {
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i)
          EXPECT_EQ(driver::compare_tensors(got[i], want[i], {1e-5, 1e-6}), "") << "output " << i;
      }
    }
  }
  EXPECT_GE(default_fused_more, 3) << "the random graphs should exercise post-dominator fusion";
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// Packed weights are read back through a Transpose + Reshape that only a
// policy joining injective producers to their anchor fuses into the matmul:
// under injective they would be a copy of the weights every run. Nor does
// lowering copy them as a transposed operand (mm_b).
TEST(FusionPolicies, WeightsArePackedOnlyWhereTheUnpackingJoinsTheMatmul) {
  for (FusionPolicy p : {FusionPolicy::kNone, FusionPolicy::kInjective, FusionPolicy::kSimple, FusionPolicy::kDefault,
                         FusionPolicy::kAggressive}) {
    SCOPED_TRACE(std::string(passes::fusion_policy_name(p)));
    Builder b;
    Value* x = b.input("x", {12, 64});
    Value* w = b.g.add_constant("w", random_tensor({64, 96}, 3));
    b.g.set_outputs({b.op("Relu", "relu", {b.op("MatMul", "mm", {x, w})})});
    driver::CompileOptions options;
    options.fusion = p;
    driver::CompiledGraph compiled = driver::compile_graph(b.g, options);
    // none and injective: the relu is a kernel of its own, and no third copies the weights
    size_t expected = p == FusionPolicy::kNone || p == FusionPolicy::kInjective ? 2 : 1;
    EXPECT_EQ(compiled.kernels.size(), expected);
    // The packed panels are read in place: along a panel's row, the columns are contiguous.
    for (const driver::CompiledKernel& k : compiled.kernels)
      EXPECT_EQ(driver::kernel_text(k).find("mm_b"), std::string::npos) << driver::kernel_text(k);
  }
}

}  // namespace
}  // namespace tessel
