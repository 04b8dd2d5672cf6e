// Tests of graph -> tensor IR: grouping policies (membership, convexity,
// order), lower_group's parameters and blocks, and the tensor IR executor
// against the reference executor on random data.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "ir/graph/op_registry.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "schedules/tree_query.h"
#include "src/driver/conformance.h"
#include "src/driver/tir_runner.h"
#include "schedules/defaults/cpu_layouts.h"
#include "src/lower/lower_group.h"
#include "src/reference/executor.h"
#include "tessel/error.h"

namespace tessel {
namespace {

using graph::Node;
using graph::TensorType;
using graph::Value;

Tensor random_tensor(Dims shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dist(rng));
  return t;
}

Node* add(graph::Graph& g, const std::string& op, const std::string& name, std::vector<Value*> inputs,
          graph::Attrs attrs = {}) {
  Node* n = g.add_node(op, name, std::move(inputs), {name + "_out"}, std::move(attrs));
  graph::infer_node(*n);
  return n;
}

graph::Attrs pool_2x2() {
  graph::Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{2, 2});
  a.set("strides", std::vector<int64_t>{2, 2});
  return a;
}

// x: f32[1, 2, 6, 6] -> conv (3x3, 3 filters) -> add bias -> relu -> maxpool 2x2.
struct ConvNet {
  graph::Graph g;
  Node *conv, *bias_add, *relu, *pool;

  ConvNet() {
    Value* x = g.add_input("x", TensorType(DType::kF32, {1, 2, 6, 6}));
    Value* w = g.add_constant("conv.w", random_tensor({3, 2, 3, 3}, 1));
    Value* b = g.add_constant("conv.b", random_tensor({1, 3, 1, 1}, 2));
    conv = add(g, "Conv", "conv", {x, w});
    bias_add = add(g, "Add", "bias_add", {conv->outputs[0], b});
    relu = add(g, "Relu", "relu", {bias_add->outputs[0]});
    pool = add(g, "MaxPool", "pool", {relu->outputs[0]}, pool_2x2());
    g.set_outputs({pool->outputs[0]});
  }
};

std::vector<std::vector<std::string>> members(const std::vector<passes::NodeGroup>& groups) {
  std::vector<std::vector<std::string>> out;
  for (const passes::NodeGroup& group : groups) {
    out.emplace_back();
    for (const Node* n : group.nodes) out.back().push_back(n->name);
  }
  return out;
}

using Members = std::vector<std::vector<std::string>>;

TEST(LowerGroupingTest, NoneMakesOneGroupPerNode) {
  ConvNet net;
  std::vector<passes::NodeGroup> groups = passes::make_grouping_policy(passes::FusionPolicy::kNone)->group(net.g);
  EXPECT_EQ(members(groups), (Members{{"conv"}, {"bias_add"}, {"relu"}, {"pool"}}));
  EXPECT_EQ(groups[0].name, "conv");
}

TEST(LowerGroupingTest, SimpleFusesAnAnchorWithItsElementwiseChain) {
  ConvNet net;
  std::vector<passes::NodeGroup> groups = passes::make_grouping_policy(passes::FusionPolicy::kSimple)->group(net.g);
  // relu feeds another anchor, so the chain stops there; pool is its own group.
  EXPECT_EQ(members(groups), (Members{{"conv", "bias_add", "relu"}, {"pool"}}));
  EXPECT_EQ(groups[0].name, "fused_conv");
  for (const passes::NodeGroup& group : groups) EXPECT_TRUE(passes::is_convex(net.g, group)) << group.name;
}

TEST(LowerGroupingTest, ChainStopsAtAValueUsedTwice) {
  ConvNet net;
  net.g.set_outputs({net.pool->outputs[0], net.bias_add->outputs[0]});  // bias_add is read outside too
  EXPECT_EQ(members(passes::make_grouping_policy(passes::FusionPolicy::kSimple)->group(net.g)),
            (Members{{"conv", "bias_add"}, {"relu"}, {"pool"}}));
}

TEST(LowerGroupingTest, LeadingDataMovementJoinsOnlyWhenNothingElseReadsIt) {
  graph::Graph g;
  Value* x = g.add_input("x", TensorType(DType::kF32, {2, 3}));
  Value* w = g.add_constant("w", random_tensor({2, 4}, 3));
  graph::Attrs perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  Node* t = add(g, "Transpose", "t", {x}, perm);
  Node* mm = add(g, "MatMul", "mm", {t->outputs[0], w});
  g.set_outputs({mm->outputs[0]});
  EXPECT_EQ(members(passes::make_grouping_policy(passes::FusionPolicy::kSimple)->group(g)), (Members{{"t", "mm"}}));

  Node* neg = add(g, "Neg", "neg", {t->outputs[0]});  // a second reader of t
  g.set_outputs({mm->outputs[0], neg->outputs[0]});
  EXPECT_EQ(members(passes::make_grouping_policy(passes::FusionPolicy::kSimple)->group(g)), (Members{{"t"}, {"mm"}, {"neg"}}));
}

TEST(LowerGroupingTest, GroupsRunAfterTheGroupsTheyRead) {
  // conv_a claims the add, which also reads conv_b: conv_b must come first
  // although conv_a comes first in the graph.
  graph::Graph g;
  Value* x = g.add_input("x", TensorType(DType::kF32, {1, 2, 5, 5}));
  Value* w = g.add_constant("w", random_tensor({2, 2, 3, 3}, 4));
  Node* conv_a = add(g, "Conv", "conv_a", {x, w});
  Node* conv_b = add(g, "Conv", "conv_b", {x, w});
  Node* sum = add(g, "Add", "sum", {conv_a->outputs[0], conv_b->outputs[0]});
  g.set_outputs({sum->outputs[0]});
  EXPECT_EQ(members(passes::make_grouping_policy(passes::FusionPolicy::kSimple)->group(g)),
            (Members{{"conv_b"}, {"conv_a", "sum"}}));
}

TEST(LowerGroupingTest, ConvexityFindsAPathThatLeavesAndReenters) {
  ConvNet net;
  EXPECT_FALSE(passes::is_convex(net.g, {"conv_and_relu", {net.conv, net.relu}}));  // via bias_add
  EXPECT_TRUE(passes::is_convex(net.g, {"add_and_relu", {net.bias_add, net.relu}}));
}

TEST(LowerGroupingTest, UnknownPolicyIsAUserError) {
  try {
    passes::parse_fusion_policy("greedy");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown fusion policy 'greedy' (available: none, injective, simple, default, aggressive, tuned)"),
              std::string::npos)
        << e.what();
  }
}

std::vector<const tir::BlockNode*> blocks_of(const tir::PrimFunc& f) {
  std::vector<const tir::BlockNode*> blocks;
  tir::walk(f->body, [&](const tir::Stmt& s) {
    if (const auto* b = s.as<tir::BlockNode>(); b && !s.same_as(f->body)) blocks.push_back(b);
    return true;
  });
  return blocks;
}

std::vector<std::string> names_of(const std::vector<tir::Buffer>& buffers) {
  std::vector<std::string> names;
  for (const tir::Buffer& b : buffers) names.push_back(b->name);
  return names;
}

TEST(LowerGroupTest, FusedConvBiasReluIsAReductionAndAnOutputBlock) {
  ConvNet net;
  passes::NodeGroup group{"fused_conv", {net.conv, net.bias_add, net.relu}};
  lower::LoweredGroup lowered = lower::lower_group_with_bindings(net.g, group, sched::default_cpu_layouts({}));
  const tir::PrimFunc& f = lowered.func;
  EXPECT_EQ(f->name, "fused_conv");
  EXPECT_EQ(names_of(f->inputs), (std::vector<std::string>{"x", "conv_w", "conv_b"}));
  EXPECT_EQ(names_of(f->outputs), (std::vector<std::string>{"relu_out"}));
  EXPECT_EQ(f->outputs[0]->shape, (std::vector<int64_t>{1, 3, 4, 4}));
  ASSERT_EQ(lowered.inputs.size(), 3u);
  EXPECT_EQ(lowered.inputs[1]->name, "conv.w");
  EXPECT_EQ(lowered.outputs, (std::vector<const Value*>{net.relu->outputs[0]}));
  // The conv's input re-laid out (its rows are short: computed flat), the
  // reduction, then the bias add and the relu as index maps inlined into the output block.
  std::vector<const tir::BlockNode*> blocks = blocks_of(f);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_FALSE(blocks[0]->is_reduction());
  EXPECT_TRUE(blocks[1]->is_reduction());
  EXPECT_FALSE(blocks[2]->is_reduction());
  EXPECT_EQ(blocks[2]->writes.at(0).buffer.get(), f->outputs[0].get());
}

void expect_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(driver::compare_tensors(got[i], want[i], {1e-5, 1e-6}), "") << "output " << i;
}

TEST(LowerGroupTest, InterpretedGraphMatchesTheReferenceExecutor) {
  ConvNet net;
  std::vector<Tensor> inputs{random_tensor({1, 2, 6, 6}, 7)};
  std::vector<Tensor> want = reference::Executor(net.g).run(inputs);
  for (const char* fusion : {"none", "simple"}) {
    SCOPED_TRACE(fusion);
    driver::TirExecutor exec(net.g, passes::parse_fusion_policy(fusion));
    EXPECT_EQ(exec.groups().size(), std::string(fusion) == "none" ? 4u : 2u);
    expect_same(exec.run(inputs), want);
  }
}

TEST(LowerGroupTest, InputsThatNoStageReadsAreNoParameters) {
  graph::Graph g;
  Value* x = g.add_input("x", TensorType(DType::kF32, {2, 6}));
  Value* shape = g.add_constant("shape", Tensor::from_i64({3, 4}));
  Node* reshape = add(g, "Reshape", "reshape", {x, shape});
  g.set_outputs({reshape->outputs[0]});
  lower::LoweredGroup lowered = lower::lower_graph(g, *passes::make_grouping_policy(passes::FusionPolicy::kNone)).at(0);
  EXPECT_EQ(names_of(lowered.func->inputs), (std::vector<std::string>{"x"}));
  EXPECT_EQ(lowered.inputs, (std::vector<const Value*>{x}));
  std::vector<Tensor> inputs{random_tensor({2, 6}, 8)};
  expect_same(driver::TirExecutor(g, passes::FusionPolicy::kNone).run(inputs), reference::Executor(g).run(inputs));
}

TEST(LowerGroupTest, TwoOutputsBackedByOneBuffer) {
  ConvNet net;
  Node* copy = add(net.g, "Identity", "copy", {net.conv->outputs[0]});
  net.g.set_outputs({net.pool->outputs[0], copy->outputs[0]});
  lower::LoweredGroup lowered = lower::lower_group_with_bindings(net.g, {"conv_and_copy", {net.conv, copy}});
  // conv_out leaves the group for bias_add, copy_out as a graph output.
  EXPECT_EQ(names_of(lowered.func->outputs), (std::vector<std::string>{"conv_out", "copy_out"}));
  Tensor x = random_tensor({1, 2, 6, 6}, 9);
  const Tensor& w = *net.conv->inputs[1]->constant;
  Tensor want = reference::evaluate_node(*net.conv, {&x, &w}).at(0);
  expect_same(tir::interpret(lowered.func, {x, w}), {want, want});
}

// Attention's q . k^T: a Transpose of a runtime value as MatMul's B joins the
// matmul's group, and lowering computes it into a block first (mm_b), so that
// the product's vector loop over B's columns reads in order instead of a
// gather of elements a row apart. B read in order stays inlined, also when it
// is scaled by a value per row (whose address does not move along a row).
TEST(LowerGroupTest, ATransposedMatMulOperandIsComputedInOrderFirst) {
  for (const char* form : {"transposed", "in order", "scaled per row"}) {
    SCOPED_TRACE(form);
    bool transposed = std::string(form) == "transposed", scaled = std::string(form) == "scaled per row";
    graph::Graph g;
    Dims k_shape = transposed ? Dims{2, 5, 4} : Dims{2, 4, 5};
    Value* q = g.add_input("q", TensorType(DType::kF32, {2, 3, 4}));
    Value* k = g.add_input("k", TensorType(DType::kF32, k_shape));
    std::vector<Tensor> inputs{random_tensor({2, 3, 4}, 11), random_tensor(k_shape, 12)};
    Value* b = k;
    if (transposed) {
      graph::Attrs perm;
      perm.set("perm", std::vector<int64_t>{0, 2, 1});
      b = add(g, "Transpose", "t", {k}, perm)->outputs[0];
    }
    if (scaled) {
      Value* per_row = g.add_input("scale", TensorType(DType::kF32, {2, 4, 1}));
      inputs.push_back(random_tensor({2, 4, 1}, 13));
      b = add(g, "Mul", "scale_rows", {k, per_row})->outputs[0];
    }
    Node* mm = add(g, "MatMul", "mm", {q, b});
    g.set_outputs({mm->outputs[0]});
    std::vector<const Node*> nodes;
    for (const Node* n : g.nodes()) nodes.push_back(n);
    lower::LoweredGroup lowered = lower::lower_group_with_bindings(g, {"all", nodes});
    EXPECT_EQ(sched::find_block(lowered.func, "mm_b").defined(), transposed) << tir::to_string(lowered.func);
    std::vector<Tensor> params;
    for (const Value* v : lowered.inputs)
      for (size_t i = 0; i < g.inputs().size(); ++i)
        if (g.inputs()[i] == v) params.push_back(inputs[i]);
    expect_same(tir::interpret(lowered.func, params), reference::Executor(g).run(inputs));
  }
}

TEST(LowerGroupTest, GraphInputsAndConstantsPassStraightThrough) {
  ConvNet net;
  Value* w = net.conv->inputs[1];
  net.g.set_outputs({net.g.inputs()[0], net.pool->outputs[0], w});
  std::vector<Tensor> inputs{random_tensor({1, 2, 6, 6}, 10)};
  std::vector<Tensor> got = driver::TirExecutor(net.g, passes::FusionPolicy::kSimple).run(inputs);
  expect_same(got, reference::Executor(net.g).run(inputs));
}

}  // namespace
}  // namespace tessel
