// The aggressive fusion policy on graphs that read like the models they come
// from: attention's scores with their softmax, a LayerNorm written out op by
// op, SqueezeNet's expand pair, and what it must not merge; each grouping
// computes the reference's results on the interpreter and compiled.
#include <gtest/gtest.h>


#include "ir/graph/op_registry.h"
#include "src/driver/compile_model.h"
#include "src/driver/conformance.h"
#include "src/driver/tir_runner.h"
#include "src/lower/lower_group.h"
#include "src/passes/fusion.h"
#include "ir/tensor/printer.h"
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

struct Net {
  graph::Graph g;
  std::vector<Tensor> inputs;

  Value* input(const std::string& name, Dims shape) {
    inputs.push_back(random_tensor(shape, uint32_t(inputs.size() + 1)));
    return g.add_input(name, TensorType(DType::kF32, shape));
  }
  Value* constant(const std::string& name, Tensor t) { return g.add_constant(name, std::move(t)); }
  Value* op(const std::string& op, const std::string& name, std::vector<Value*> in, graph::Attrs attrs = {}) {
    Node* n = g.add_node(op, name, std::move(in), {name}, std::move(attrs));
    graph::infer_node(*n);
    return n->outputs[0];
  }
  Value* conv_relu(const std::string& name, Value* x, int64_t out_channels, int64_t k, uint32_t seed) {
    graph::Attrs a;
    a.set("pads", std::vector<int64_t>(4, (k - 1) / 2));
    int64_t in_channels = x->type.static_dims()[1];
    Value* w = constant(name + ".w", random_tensor({out_channels, in_channels, k, k}, seed));
    return op("Relu", name + "_relu", {op("Conv", name, {x, w}, a)});
  }
};

// The interpreter and the compiled model (default schedule) under the policy
// compute the reference's outputs.
void expect_reference_results(Net& net, FusionPolicy policy) {
  std::vector<Tensor> want = reference::Executor(net.g).run(net.inputs);
  driver::CompileOptions options;
  options.fusion = policy;
  std::vector<std::vector<Tensor>> runs{driver::TirExecutor(net.g, policy).run(net.inputs),
                                        driver::JitModel(driver::compile_graph(net.g, options)).run(net.inputs)};
  for (const std::vector<Tensor>& got : runs) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(driver::compare_tensors(got[i], want[i], {1e-5, 1e-6}), "") << "output " << i;
  }
}

// softmax(q . k^T / 8 + mask) . v: the softmax joins the scores' kernel
// (default stops at it: it is an anchor of its own).
TEST(FusionAggressive, AttentionScoresAndTheirSoftmaxAreOneKernel) {
  Net net;
  Value* q = net.input("q", {2, 16, 8});
  Value* kt = net.input("kt", {2, 8, 16});
  Value* v = net.input("v", {2, 16, 8});
  Value* mask = net.input("mask", {1, 16, 16});
  Value* scores = net.op("MatMul", "scores", {q, kt});
  Value* scaled = net.op("Div", "scale", {scores, net.constant("eight", Tensor::scalar_f64(DType::kF32, 8.0))});
  Value* masked = net.op("Add", "mask_add", {scaled, mask});
  Value* probs = net.op("Softmax", "softmax", {masked});
  net.g.set_outputs({net.op("MatMul", "context", {probs, v})});
  EXPECT_EQ(grouped(net.g, FusionPolicy::kDefault),
            (Members{{"scores", "scale", "mask_add"}, {"softmax"}, {"context"}}));
  EXPECT_EQ(grouped(net.g, FusionPolicy::kAggressive),
            (Members{{"scores", "scale", "mask_add", "softmax"}, {"context"}}));
  expect_reference_results(net, FusionPolicy::kAggressive);
}

// LayerNorm as older exporters write it: both means and everything between
// them are one kernel; the elementwise ops before the first mean (a residual
// add) join it too, as the producers only it reads.
TEST(FusionAggressive, ALayerNormWrittenOutOpByOpIsOneKernel) {
  Net net;
  Value* x = net.input("x", {4, 32});
  Value* residual = net.input("residual", {4, 32});
  Value* sum = net.op("Add", "residual_add", {x, residual});
  Value* last_axis = net.constant("axes", Tensor::from_i64({-1}));
  Value* mean = net.op("ReduceMean", "mean", {sum, last_axis});
  Value* centered = net.op("Sub", "center", {sum, mean});
  Value* squared = net.op("Mul", "square", {centered, centered});
  Value* variance = net.op("ReduceMean", "variance", {squared, last_axis});
  Value* eps = net.constant("eps", Tensor::scalar_f64(DType::kF32, 1e-5));
  Value* std_dev = net.op("Sqrt", "std", {net.op("Add", "add_eps", {variance, eps})});
  Value* normed = net.op("Div", "normalize", {centered, std_dev});
  Value* gamma = net.constant("gamma", random_tensor({32}, 7));
  net.g.set_outputs({net.op("Mul", "scale", {normed, gamma})});
  Members aggressive = grouped(net.g, FusionPolicy::kAggressive);
  ASSERT_EQ(aggressive.size(), 1u) << "default makes " << grouped(net.g, FusionPolicy::kDefault).size();
  EXPECT_EQ(aggressive[0].size(), net.g.nodes().size());
  EXPECT_GT(grouped(net.g, FusionPolicy::kDefault).size(), 2u);
  expect_reference_results(net, FusionPolicy::kAggressive);
}

// SqueezeNet's fire module: the 1x1 and 3x3 expand convs read the squeeze's
// output and become one kernel; the concat of their outputs stays data movement.
TEST(FusionAggressive, SiblingConvsReadingOneValueAreOneKernel) {
  Net net;
  Value* squeeze = net.conv_relu("squeeze", net.input("x", {1, 8, 6, 6}), 4, 1, 1);
  Value* e1 = net.conv_relu("expand1", squeeze, 8, 1, 2);
  Value* e3 = net.conv_relu("expand3", squeeze, 8, 3, 3);
  graph::Attrs channels;
  channels.set("axis", int64_t(1));
  net.g.set_outputs({net.op("Concat", "concat", {e1, e3}, channels)});
  EXPECT_EQ(grouped(net.g, FusionPolicy::kDefault),
            (Members{{"squeeze", "squeeze_relu"}, {"expand1", "expand1_relu"}, {"expand3", "expand3_relu"}, {"concat"}}));
  EXPECT_EQ(grouped(net.g, FusionPolicy::kAggressive),
            (Members{{"squeeze", "squeeze_relu"}, {"expand1", "expand1_relu", "expand3", "expand3_relu"}, {"concat"}}));
  expect_reference_results(net, FusionPolicy::kAggressive);
}

// Two convs reading x, the second also reading the first's output through a
// node outside both: merged, the group would leave and re-enter itself.
TEST(FusionAggressive, SiblingsWithAPathBetweenThemStayApart) {
  Net net;
  Value* x = net.input("x", {1, 4, 5, 5});
  Value* a = net.conv_relu("a", x, 4, 1, 1);
  Value* between = net.op("Transpose", "between", {a}, [] {
    graph::Attrs perm;
    perm.set("perm", std::vector<int64_t>{0, 1, 3, 2});
    return perm;
  }());
  Value* b_in = net.op("Add", "b_in", {x, between});
  Value* w = net.constant("b.w", random_tensor({4, 4, 1, 1}, 5));
  Value* b_conv = net.op("Conv", "b", {x, w});
  net.g.set_outputs({net.op("Add", "out", {b_conv, b_in})});
  for (const std::vector<std::string>& group : grouped(net.g, FusionPolicy::kAggressive)) {
    bool has_a = std::count(group.begin(), group.end(), "a") > 0, has_b = std::count(group.begin(), group.end(), "b") > 0;
    EXPECT_FALSE(has_a && has_b && std::count(group.begin(), group.end(), "between") == 0)
        << "a and b merged without the path between them";
  }
  expect_reference_results(net, FusionPolicy::kAggressive);
}

// An EfficientNet head: conv, SiLU, global pool. The SiLU is a block of its
// own (the conv's epilogue, which the schedule puts in the conv's tile), not
// recomputed inside the pool's reduction for every element it reads.
TEST(FusionAggressive, AConvsEpilogueBeforeItsPoolIsABlockOfItsOwn) {
  Net net;
  Value* x = net.input("x", {1, 8, 5, 5});
  Value* conv = net.op("Conv", "conv", {x, net.constant("w", random_tensor({16, 8, 1, 1}, 9))});
  Value* silu = net.op("Mul", "silu", {conv, net.op("Sigmoid", "sigmoid", {conv})});
  net.g.set_outputs({net.op("GlobalAveragePool", "pool", {silu})});
  std::vector<passes::NodeGroup> groups = passes::make_grouping_policy(FusionPolicy::kAggressive)->group(net.g);
  ASSERT_EQ(groups.size(), 1u);
  std::string ir = tir::to_string(lower::lower_group(net.g, groups[0]));
  size_t epilogue = ir.find("block silu("), pool = ir.find("block pool(");
  ASSERT_NE(epilogue, std::string::npos) << ir;
  ASSERT_NE(pool, std::string::npos) << ir;
  EXPECT_LT(epilogue, pool) << ir;
  EXPECT_EQ(ir.find("sigmoid(", pool), std::string::npos) << "the pool recomputes the SiLU:\n" << ir;
  expect_reference_results(net, FusionPolicy::kAggressive);
}

}  // namespace
}  // namespace tessel
