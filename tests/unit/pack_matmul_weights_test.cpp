// pack_matmul_weights: a product's constant B becomes column panels read back
// through Transpose + Reshape; the graph computes the same outputs bit for
// bit, and compiled, the unpacking fuses into the product's kernel.
#include <gtest/gtest.h>

#include "ir/graph/op_registry.h"
#include "ir/tensor/printer.h"
#include "schedules/defaults/cpu_defaults.h"
#include "schedules/defaults/cpu_knobs.h"
#include "schedules/schedule.h"
#include "src/driver/check_job.h"
#include "src/driver/compile_model.h"
#include "src/driver/run_inputs.h"
#include "src/passes/pack_matmul_weights.h"
#include "src/reference/executor.h"
#include "tests/unit/graph_build_util.h"

namespace tessel {
namespace {

// W[k, n] = k - n / 7, distinct enough to see where each element went.
Tensor weight(int64_t k, int64_t n) {
  Tensor w(DType::kF32, {k, n});
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) w.data<float>()[r * n + c] = float(r) - float(c) / 7.0f;
  return w;
}

// y = x @ W, and with `twice`, z = relu(x @ W) from a second MatMul of the same W.
graph::Graph matmul_graph(int64_t m, int64_t k, int64_t n, bool twice = false) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {m, k}));
  graph::Value* w = g.add_constant("W", weight(k, n));
  std::vector<graph::Value*> outputs{add(g, "MatMul", {x, w})->outputs[0]};
  if (twice) outputs.push_back(add(g, "Relu", {add(g, "MatMul", {x, w})->outputs[0]})->outputs[0]);
  g.set_outputs(outputs);
  return g;
}

std::vector<std::string> ops_of(const graph::Graph& g) {
  std::vector<std::string> ops;
  for (const graph::Node* n : g.nodes()) ops.push_back(n->op);
  return ops;
}

passes::PanelWidth fixed(int64_t panel) {
  return [panel](int64_t, int64_t) { return panel; };
}

TEST(PackMatmulWeights, BIsReadFromPanelsThroughTransposeAndReshape) {
  graph::Graph g = matmul_graph(3, 5, 48);
  passes::pack_matmul_weights(g, fixed(16));
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Transpose", "Reshape", "MatMul"}));
  const graph::Node* transpose = g.nodes()[0];
  const graph::Value* panels = transpose->inputs[0];
  ASSERT_TRUE(panels->is_constant());
  EXPECT_EQ(panels->constant->shape(), (Dims{3, 5, 16}));
  // W_p[p, k, j] = W[k, 16p + j]
  const float* p = panels->constant->data<float>();
  EXPECT_EQ(p[(2 * 5 + 4) * 16 + 3], float(4) - float(35) / 7.0f);
  EXPECT_EQ(p[(1 * 5 + 0) * 16 + 0], float(0) - float(16) / 7.0f);
  const graph::Value* unpacked = g.nodes()[2]->inputs[1];
  EXPECT_FALSE(unpacked->is_constant()) << "the unpacking must not be folded back into a constant";
  EXPECT_EQ(unpacked->type, graph::TensorType(DType::kF32, {5, 48}));
}

TEST(PackMatmulWeights, OutputsAreBitForBitTheSame) {
  graph::Graph plain = matmul_graph(6, 9, 32, /*twice=*/true);
  graph::Graph packed = matmul_graph(6, 9, 32, /*twice=*/true);
  passes::pack_matmul_weights(packed, fixed(8));
  std::vector<Tensor> inputs = driver::random_inputs(plain, 5);
  std::vector<Tensor> want = reference::Executor(plain).run(inputs);
  std::vector<Tensor> got = reference::Executor(packed).run(inputs);
  ASSERT_EQ(got.size(), 2u);
  for (size_t o = 0; o < 2; ++o)
    for (int64_t i = 0; i < want[o].numel(); ++i)
      ASSERT_EQ(got[o].data<float>()[i], want[o].data<float>()[i]) << "output " << o << " element " << i;
}

TEST(PackMatmulWeights, ASharedWeightIsPackedOnceAndEachProductUnpacksItsOwn) {
  graph::Graph g = matmul_graph(4, 5, 32, /*twice=*/true);
  passes::pack_matmul_weights(g, fixed(16));
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Transpose", "Reshape", "MatMul", "Transpose", "Reshape",
                                                 "MatMul", "Relu"}));
  EXPECT_EQ(g.nodes()[0]->inputs[0], g.nodes()[3]->inputs[0]);
  EXPECT_NE(g.nodes()[2]->inputs[1], g.nodes()[5]->inputs[1]);
}

TEST(PackMatmulWeights, ProductsThatCannotUsePanelsAreLeftAlone) {
  for (int64_t panel : {0, 12, 32, 64}) {  // none, not a divisor, the whole width, wider
    graph::Graph g = matmul_graph(4, 5, 32);
    passes::pack_matmul_weights(g, fixed(panel));
    EXPECT_EQ(ops_of(g), std::vector<std::string>{"MatMul"}) << "panel " << panel;
  }
  graph::Graph g;  // B not constant
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {4, 5}));
  graph::Value* b = g.add_input("b", graph::TensorType(DType::kF32, {5, 32}));
  g.set_outputs({add(g, "MatMul", {x, b})->outputs[0]});
  passes::pack_matmul_weights(g, fixed(16));
  EXPECT_EQ(ops_of(g), std::vector<std::string>{"MatMul"});
  graph::Graph t;  // Gemm reading B transposed
  graph::Value* tx = t.add_input("x", graph::TensorType(DType::kF32, {4, 5}));
  graph::Attrs trans;
  trans.set("transB", int64_t(1));
  t.set_outputs({add(t, "Gemm", {tx, t.add_constant("W", weight(32, 5))}, trans)->outputs[0]});
  passes::pack_matmul_weights(t, fixed(16));
  EXPECT_EQ(ops_of(t), std::vector<std::string>{"Gemm"});
}

// A [128, 1, K] (a transformer's tokens after a transpose) has rows of one
// element: the tile's rows are its 128, as the schedule sees them.
TEST(PackMatmulWeights, ThePanelWidthIsAskedForTheTileRowsOfABatchedProduct) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {128, 1, 5}));
  g.set_outputs({add(g, "MatMul", {x, g.add_constant("W", weight(5, 48))})->outputs[0]});
  std::vector<int64_t> asked;
  passes::pack_matmul_weights(g, [&](int64_t rows, int64_t columns) {
    asked = {rows, columns};
    return int64_t(16);
  });
  EXPECT_EQ(asked, (std::vector<int64_t>{128, 48}));
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Transpose", "Reshape", "MatMul"}));
}

// Compiled with the default schedule, the panels match the register tile:
// one kernel per product, reading B as [N / panel, K, panel], equal to the
// reference. Rows 8 take the 4-row tile of three vectors, rows 12 the 6 x 2.
TEST(PackMatmulWeights, CompiledProductsReadPanelsAsWideAsTheirTileAndMatchTheReference) {
  int64_t lanes = codegen::host_target().cpu.vector_bits / 32;
  for (int64_t rows : {8, 12}) {
    int64_t columns = 12 * lanes, depth = 40;
    int64_t panel = sched::matmul_tile_columns(rows, columns, lanes);
    ASSERT_EQ(panel, rows == 8 || lanes >= 16 ? 3 * lanes : 2 * lanes);
    graph::Graph g = matmul_graph(rows, depth, columns, /*twice=*/true);
    driver::JitModel model(driver::compile_graph(g, {}));
    ASSERT_EQ(model.compiled_kernels().size(), 2u) << "the unpacking fuses into each product's kernel";
    for (const driver::CompiledKernel& k : model.compiled_kernels()) {
      bool reads_panels = false;
      for (const tir::Buffer& param : k.flat->params())
        reads_panels = reads_panels || param->shape == std::vector<int64_t>{columns / panel, depth, panel};
      EXPECT_TRUE(reads_panels) << tir::to_string(k.flat);
    }
    std::vector<Tensor> inputs = driver::random_inputs(g, 7);
    std::vector<Tensor> want = reference::Executor(g).run(inputs), got = model.run(inputs);
    for (size_t o = 0; o < want.size(); ++o)
      EXPECT_LE(driver::error_stats(got[o], want[o]).max_rel, 1e-5) << "rows " << rows << " output " << o;
  }
}

// The tile widths a tuner may try for a product reading panels divide the
// panel: a wider tile, or one that does not divide it, would read across
// panels by division (gathers), many times slower than any that does.
TEST(PackMatmulWeights, ATunersTileWidthsDivideThePanel) {
  int64_t lanes = codegen::host_target().cpu.vector_bits / 32;
  int64_t rows = 8, columns = 12 * lanes;
  ASSERT_EQ(sched::matmul_tile_columns(rows, columns, lanes), 3 * lanes);
  graph::Graph g = matmul_graph(rows, 40, columns);
  driver::JitModel model(driver::compile_graph(g, {}));
  ASSERT_EQ(model.compiled_kernels().size(), 1u);
  sched::KnobChoices knobs;
  sched::CpuScheduleOptions options;
  options.vector_lanes = int(lanes);
  options.knobs = &knobs;
  sched::Schedule sch(model.compiled_kernels()[0].group.func);
  sched::apply_default_cpu_schedule(sch, options);
  bool asked = false;
  for (const sched::Knob& k : knobs.knobs()) {
    if (k.key.size() < 5 || k.key.substr(k.key.size() - 5) != ".cols") continue;
    asked = true;
    EXPECT_EQ(k.candidates, (std::vector<int64_t>{lanes, 3 * lanes})) << k.key;
  }
  EXPECT_TRUE(asked) << "no tile width knob";
}

// A matrix-vector product (one row) keeps its weight in place: its tile is
// every column and walks the weight's rows in order, which panels of a few
// vectors would turn into a gather across panels. On two cores, the weight is
// two panels of half the columns, one per thread, each walked in order.
TEST(PackMatmulWeights, AMatrixVectorProductReadsItsWeightInPlaceOrInAPanelPerThread) {
  int64_t lanes = codegen::host_target().cpu.vector_bits / 32;
  int64_t columns = 12 * lanes, depth = 40;
  ASSERT_GT(sched::matmul_tile_columns(1, columns, lanes), 0) << "a width panels would take";
  for (int cores : {1, 2}) {
    SCOPED_TRACE(testing::Message() << cores << " cores");
    int64_t width = columns / cores;
    EXPECT_EQ(sched::matmul_panel_columns(1, columns, lanes, cores), width);
    graph::Graph g = matmul_graph(1, depth, columns);
    driver::CompileOptions options;
    options.target.cpu.cores = cores;
    options.target.cpu.min_parallel_cycles = 1;  // as large a product's would be
    driver::JitModel model(driver::compile_graph(g, options));
    ASSERT_EQ(model.compiled_kernels().size(), 1u);
    const tir::PrimFunc& f = model.compiled_kernels()[0].flat;
    std::vector<int64_t> weight = cores == 1 ? std::vector<int64_t>{depth, columns}
                                             : std::vector<int64_t>{int64_t(cores), depth, width};
    bool read_whole = false;
    for (const tir::Buffer& param : f->params()) read_whole = read_whole || param->shape == weight;
    EXPECT_TRUE(read_whole) << tir::to_string(f);
    std::string text = tir::to_string(f);
    EXPECT_NE(text.find("in 0.." + std::to_string(width) + " vectorized"), std::string::npos) << text;
    EXPECT_EQ(text.find(" parallel") != std::string::npos, cores > 1) << text;
    std::vector<Tensor> inputs = driver::random_inputs(g, 5);
    EXPECT_LE(driver::error_stats(model.run(inputs)[0], reference::Executor(g).run(inputs)[0]).max_rel, 1e-5);
  }
}

// A 1x1 conv over a 28 x 28 plane is a matmul whose B is the input read as a
// flat plane ([c, j // 28, j % 28]): no run-time panel of it (a panel copies
// plain row-major strips only), and the result matches the reference.
TEST(PackMatmulWeights, AFlatPlaneInputGetsNoRunTimePanel) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, 32, 28, 28}));
  Tensor w(DType::kF32, {64, 32, 1, 1});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = float(i % 7) - 3.0f;
  g.set_outputs({add(g, "Conv", {x, g.add_constant("W", w)})->outputs[0]});
  driver::JitModel model(driver::compile_graph(g, {}));
  ASSERT_EQ(model.compiled_kernels().size(), 1u);
  std::string tir = tir::to_string(model.compiled_kernels()[0].flat);
  EXPECT_EQ(tir.find("x_local"), std::string::npos) << tir;
  std::vector<Tensor> inputs = driver::random_inputs(g, 3);
  EXPECT_LE(driver::error_stats(model.run(inputs)[0], reference::Executor(g).run(inputs)[0]).max_rel, 1e-5);
}

}  // namespace
}  // namespace tessel
