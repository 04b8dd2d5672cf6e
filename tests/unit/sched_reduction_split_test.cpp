// The default schedule's tile over a reduction that an operand reads as
// (k // c, k % c) (attention heads read back as one row of the output
// projection): the reduction runs as two loops and every read is affine in
// them, with no division left in the kernel; it matches the reference. A
// short inner loop (a channel shuffle's groups) is unrolled.
#include <gtest/gtest.h>

#include "ir/graph/op_registry.h"
#include "ir/tensor/printer.h"
#include "src/driver/check_job.h"
#include "src/driver/compile_model.h"
#include "src/driver/run_inputs.h"
#include "src/reference/executor.h"
#include "tests/unit/lower_nn_test_util.h"

namespace tessel {
namespace {

// Node `name` of g, its one output `name`_out with its type inferred.
graph::Value* node(graph::Graph& g, const std::string& op, const std::string& name,
                   std::vector<graph::Value*> in, graph::Attrs attrs = {}) {
  graph::Node* nd = g.add_node(op, name, std::move(in), {name + "_out"}, std::move(attrs));
  graph::infer_node(*nd);
  return nd->outputs[0];
}

// heads [H, T, D] -> Transpose(1, 0, 2) -> Reshape [T, H * D] -> MatMul with a constant [H * D, N].
void build_head_projection(graph::Graph& g, int64_t heads, int64_t tokens, int64_t dim, int64_t n) {
  graph::Value* x = g.add_input("heads", graph::TensorType(DType::kF32, {heads, tokens, dim}));
  graph::Attrs perm;
  perm.set("perm", std::vector<int64_t>{1, 0, 2});
  graph::Value* t = node(g, "Transpose", "transpose", {x}, perm);
  graph::Value* shape = g.add_constant("shape", Tensor::from_i64({tokens, heads * dim}));
  graph::Value* rows = node(g, "Reshape", "reshape", {t, shape});
  graph::Value* w = g.add_constant("w", lower_nn_test::random_tensor(DType::kF32, {heads * dim, n}, 3));
  graph::Value* y = node(g, "MatMul", "proj", {rows, w});
  g.set_outputs({y});
}

TEST(ReductionSplit, AReductionReadAsHeadAndColumnRunsAsTwoLoops) {
  graph::Graph g;
  build_head_projection(g, 4, 16, 32, 96);
  driver::CompiledGraph compiled = driver::compile_graph(g, {});
  ASSERT_EQ(compiled.kernels.size(), 1u);
  std::string text = tir::to_string(compiled.kernels[0].flat);
  EXPECT_EQ(text.find("// 32"), std::string::npos) << text;
  EXPECT_EQ(text.find("% 32"), std::string::npos) << text;
  driver::JitModel model(std::move(compiled));
  std::vector<Tensor> inputs = driver::random_inputs(g, 5);
  EXPECT_LE(driver::error_stats(model.run(inputs)[0], reference::Executor(g).run(inputs)[0]).max_rel, 1e-4);
}

// Concat(a, b) [1, 2C, 7, 7] with its channels shuffled (ShuffleNet: Reshape
// [1, 2, C, 7, 7], Transpose(0, 2, 1, 3, 4), Reshape back), then a 1x1 conv:
// input channel r is read as (r % 2) * C + r // 2, from a or b by r % 2.
void build_shuffled_conv(graph::Graph& g, int64_t c) {
  graph::Value* a = g.add_input("a", graph::TensorType(DType::kF32, {1, c, 7, 7}));
  graph::Value* b = g.add_input("b", graph::TensorType(DType::kF32, {1, c, 7, 7}));
  graph::Attrs axis;
  axis.set("axis", int64_t(1));
  graph::Value* both = node(g, "Concat", "concat", {a, b}, axis);
  graph::Value* groups =
      node(g, "Reshape", "groups", {both, g.add_constant("s1", Tensor::from_i64({1, 2, c, 7, 7}))});
  graph::Attrs perm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1, 3, 4});
  graph::Value* swapped = node(g, "Transpose", "shuffle", {groups}, perm);
  graph::Value* x =
      node(g, "Reshape", "flat", {swapped, g.add_constant("s2", Tensor::from_i64({1, 2 * c, 7, 7}))});
  graph::Value* w = g.add_constant("w", lower_nn_test::random_tensor(DType::kF32, {64, 2 * c, 1, 1}, 3));
  g.set_outputs({node(g, "Conv", "conv", {x, w})});
}

TEST(ReductionSplit, AChannelShufflesGroupsAreUnrolledSoEachReadsOneInput) {
  graph::Graph g;
  build_shuffled_conv(g, 24);
  driver::CompiledGraph compiled = driver::compile_graph(g, {});
  ASSERT_EQ(compiled.kernels.size(), 1u);
  std::string text = tir::to_string(compiled.kernels[0].flat);
  EXPECT_NE(text.find(" in 0..2 unrolled:"), std::string::npos) << text;
  driver::JitModel model(std::move(compiled));
  std::vector<Tensor> inputs = driver::random_inputs(g, 5);
  EXPECT_LE(driver::error_stats(model.run(inputs)[0], reference::Executor(g).run(inputs)[0]).max_rel, 1e-5);
  // Heads of 32 columns: a long inner loop, left rolled.
  graph::Graph heads;
  build_head_projection(heads, 4, 16, 32, 96);
  std::string projection = tir::to_string(driver::compile_graph(heads, {}).kernels[0].flat);
  EXPECT_EQ(projection.find(" in 0..32 unrolled:"), std::string::npos) << projection;
}

}  // namespace
}  // namespace tessel
