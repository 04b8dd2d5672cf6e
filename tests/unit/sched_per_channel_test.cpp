// The default schedule's per-channel rule (depthwise convs, pools) on whole
// compiled graphs: the form of its tile, checked against the reference.
#include <gtest/gtest.h>

#include "ir/graph/op_registry.h"
#include "ir/tensor/printer.h"
#include "src/codegen/llvm/host_target.h"
#include "src/driver/check_job.h"
#include "src/driver/compile_model.h"
#include "src/driver/run_inputs.h"
#include "src/reference/executor.h"

namespace tessel {
namespace {

// A window's row shorter than a vector and read in order (a 3x3 max pool at
// stride 1 over 14 columns on 16 lanes) runs its taps inside one masked
// vector; at stride 2 (columns read two apart) or over rows of two vectors,
// the taps stay outside. Inside, each output vector is written straight to
// the output (a local buffer there was a masked store read back narrower),
// with an elementwise op after the pool as well. Every form matches the
// reference.
TEST(PerChannelTaps, ARowShorterThanAVectorRunsItsTapsInsideOneMaskedVector) {
  struct Case {
    int64_t width, stride;
    bool inside, relu;
  };
  int64_t lanes = codegen::host_target().cpu.vector_bits / 32;
  for (Case c : {Case{lanes - 2, 1, true, false}, Case{lanes - 2, 1, true, true},
                 Case{lanes - 2, 2, false, false}, Case{2 * lanes, 1, false, false}}) {
    SCOPED_TRACE(testing::Message() << "width " << c.width << ", stride " << c.stride << ", relu " << c.relu);
    graph::Graph g;
    graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, 4, 14, c.width}));
    graph::Attrs a;
    a.set("kernel_shape", std::vector<int64_t>{3, 3});
    a.set("strides", std::vector<int64_t>{c.stride, c.stride});
    a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    graph::Node* pool = g.add_node("MaxPool", "pool", {x}, {"y"}, a);
    graph::infer_node(*pool);
    graph::Value* out = pool->outputs[0];
    if (c.relu) {
      graph::Node* relu = g.add_node("Relu", "relu", {out}, {"z"}, {});
      graph::infer_node(*relu);
      out = relu->outputs[0];
    }
    g.set_outputs({out});
    driver::CompiledGraph compiled = driver::compile_graph(g, {});
    ASSERT_EQ(compiled.kernels.size(), 1u);
    std::string text = tir::to_string(compiled.kernels[0].flat);
    EXPECT_EQ(text.find("masked_tail") != std::string::npos && text.find("unrolled") != std::string::npos,
              c.inside)
        << text;
    if (c.inside) {
      EXPECT_EQ(text.find("] local"), std::string::npos) << text;
    }
    driver::JitModel model(std::move(compiled));
    std::vector<Tensor> inputs = driver::random_inputs(g, 3);
    EXPECT_LE(driver::error_stats(model.run(inputs)[0], reference::Executor(g).run(inputs)[0]).max_rel, 0.0);
  }
}

}  // namespace
}  // namespace tessel
