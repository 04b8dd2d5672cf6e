// The default schedule's weight prefetch on whole compiled graphs: a conv
// whose weight panels do not stay in L2 and are each walked once by several
// row tiles asks for the next panel while computing on this one; a weight
// that fits in L2, or one read once (a matrix-vector product), is not
// prefetched. Every form matches the reference.
#include <gtest/gtest.h>

#include <functional>

#include "ir/graph/op_registry.h"
#include "ir/tensor/printer.h"
#include "src/codegen/llvm/host_target.h"
#include "src/driver/check_job.h"
#include "src/driver/compile_model.h"
#include "src/driver/run_inputs.h"
#include "src/reference/executor.h"
#include "tests/unit/lower_nn_test_util.h"

namespace tessel {
namespace {

using lower_nn_test::random_tensor;

// x [1, C, 7, 7] -> 3x3 conv (pad 1) to C channels, a constant weight.
void build_conv(graph::Graph& g, int64_t channels) {
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, channels, 7, 7}));
  graph::Value* w = g.add_constant("w", random_tensor(DType::kF32, {channels, channels, 3, 3}, 5));
  graph::Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{3, 3});
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  graph::Node* conv = g.add_node("Conv", "conv", {x, w}, {"y"}, a);
  graph::infer_node(*conv);
  g.set_outputs({conv->outputs[0]});
}

// x [1, K] x a constant [K, N]: one row.
void build_matrix_vector(graph::Graph& g, int64_t k, int64_t n) {
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, k}));
  graph::Value* w = g.add_constant("w", random_tensor(DType::kF32, {k, n}, 7));
  graph::Node* mm = g.add_node("MatMul", "mm", {x, w}, {"y"}, {});
  graph::infer_node(*mm);
  g.set_outputs({mm->outputs[0]});
}

// The kernel's flat tensor IR, after checking that it computes what the reference does.
std::string compiled_text(const std::function<void(graph::Graph&)>& build, int64_t l2_bytes) {
  graph::Graph g;
  build(g);
  driver::CompileOptions options;
  options.target.cpu.l2_bytes = l2_bytes;
  driver::CompiledGraph compiled = driver::compile_graph(g, options);
  EXPECT_EQ(compiled.kernels.size(), 1u);
  std::string text = compiled.kernels.empty() ? "" : tir::to_string(compiled.kernels[0].flat);
  driver::JitModel model(std::move(compiled));
  std::vector<Tensor> inputs = driver::random_inputs(g, 3);
  EXPECT_LE(driver::error_stats(model.run(inputs)[0], reference::Executor(g).run(inputs)[0]).max_rel, 1e-4);
  return text;
}

TEST(WeightPrefetch, PanelsThatLeaveL2AndServeSeveralRowTilesAreAskedForAhead) {
  auto conv = [](graph::Graph& g) { build_conv(g, 128); };  // 128 x 128 x 9 floats: 576 KiB
  std::string text = compiled_text(conv, int64_t(1) << 20);
  EXPECT_NE(text.find("prefetch(w"), std::string::npos) << text;
  // With a core's L2 of 8 MiB the weight stays there between runs.
  EXPECT_EQ(compiled_text(conv, int64_t(8) << 20).find("prefetch("), std::string::npos);
}

TEST(WeightPrefetch, AWeightReadOnceIsLeftToTheHardwarePrefetcher) {
  auto matrix_vector = [](graph::Graph& g) { build_matrix_vector(g, 512, 1024); };  // 2 MiB
  EXPECT_EQ(compiled_text(matrix_vector, int64_t(1) << 20).find("prefetch("), std::string::npos);
}

}  // namespace
}  // namespace tessel
