// The default schedule's tile over a reduction that an operand reads as
// (k // c, k % c) (attention heads read back as one row of the output
// projection): the reduction runs as two loops and every read is affine in
// them, with no division left in the kernel; it matches the reference.
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

// heads [H, T, D] -> Transpose(1, 0, 2) -> Reshape [T, H * D] -> MatMul with a constant [H * D, N].
void build_head_projection(graph::Graph& g, int64_t heads, int64_t tokens, int64_t dim, int64_t n) {
  auto node = [&](const std::string& op, const std::string& name, std::vector<graph::Value*> in,
                  graph::Attrs attrs = {}) {
    graph::Node* nd = g.add_node(op, name, std::move(in), {name + "_out"}, std::move(attrs));
    graph::infer_node(*nd);
    return nd->outputs[0];
  };
  graph::Value* x = g.add_input("heads", graph::TensorType(DType::kF32, {heads, tokens, dim}));
  graph::Attrs perm;
  perm.set("perm", std::vector<int64_t>{1, 0, 2});
  graph::Value* t = node("Transpose", "transpose", {x}, perm);
  graph::Value* shape = g.add_constant("shape", Tensor::from_i64({tokens, heads * dim}));
  graph::Value* rows = node("Reshape", "reshape", {t, shape});
  graph::Value* w = g.add_constant("w", lower_nn_test::random_tensor(DType::kF32, {heads * dim, n}, 3));
  graph::Value* y = node("MatMul", "proj", {rows, w});
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

}  // namespace
}  // namespace tessel
