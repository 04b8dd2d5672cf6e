// pack_conv_weights: a conv's constant weight stored channels-last and read
// back through a Transpose; the graph computes the same outputs bit for bit,
// and compiled, the unpacking fuses into the conv's kernel, which computes
// the conv over its positions with the output channels in the vector lanes.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "ir/graph/op_registry.h"
#include "ir/tensor/printer.h"
#include "schedules/defaults/block_kind.h"
#include "schedules/defaults/cpu_defaults.h"
#include "schedules/defaults/cpu_rules.h"
#include "schedules/schedule.h"
#include "src/codegen/llvm/host_target.h"
#include "src/driver/check_job.h"
#include "src/driver/compile_model.h"
#include "src/driver/run_inputs.h"
#include "src/driver/tir_runner.h"
#include "src/lower/conv_shape.h"
#include "src/passes/pack_conv_weights.h"
#include "src/reference/executor.h"
#include "tests/unit/graph_build_util.h"

namespace tessel {
namespace {

// W[m, c, i, j] = m - c / 8 + (3 i + j) / 64: distinct enough to see where each element went.
Tensor weight(int64_t m, int64_t c, int64_t k) {
  Tensor w(DType::kF32, {m, c, k, k});
  float* p = w.data<float>();
  for (int64_t a = 0; a < m; ++a)
    for (int64_t b = 0; b < c; ++b)
      for (int64_t t = 0; t < k * k; ++t)
        p[(a * c + b) * k * k + t] = float(a) - float(b) / 8 + float(t) / 64;
  return w;
}

// relu(conv(x, W) + b), 3x3 pad 1 over a plane x plane input; with `twice`
// also a second conv of the same W, summed in.
graph::Graph conv_graph(int64_t c, int64_t m, int64_t plane, int64_t group = 1, bool twice = false) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, c, plane, plane}));
  graph::Value* w = g.add_constant("W", weight(m, c / group, 3));
  Tensor bias(DType::kF32, {m});
  for (int64_t i = 0; i < m; ++i) bias.data<float>()[i] = float(i % 5) - 2;
  graph::Value* b = g.add_constant("B", std::move(bias));
  graph::Attrs attrs;
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  attrs.set("group", group);
  graph::Value* y = add(g, "Conv", {x, w, b}, attrs)->outputs[0];
  if (twice) y = add(g, "Add", {y, add(g, "Conv", {x, w, b}, attrs)->outputs[0]})->outputs[0];
  g.set_outputs({add(g, "Relu", {y})->outputs[0]});
  return g;
}

std::vector<std::string> ops_of(const graph::Graph& g) {
  std::vector<std::string> ops;
  for (const graph::Node* n : g.nodes()) ops.push_back(n->op);
  return ops;
}

// One panel of all the output channels: the weight channels-last.
int64_t whole(const graph::Node& conv) {
  return conv.inputs[1]->type.static_dims()[0];
}

TEST(PackConvWeights, TheWeightIsReadChannelsLastThroughATranspose) {
  graph::Graph g = conv_graph(4, 8, 5);
  passes::pack_conv_weights(g, whole);
  ASSERT_EQ(ops_of(g), (std::vector<std::string>{"Transpose", "Conv", "Relu"}));
  const graph::Value* packed = g.nodes()[0]->inputs[0];
  ASSERT_TRUE(packed->is_constant());
  EXPECT_EQ(packed->constant->shape(), (Dims{4, 3, 3, 8}));
  // Wt[c, i, j, m] = W[m, c, i, j]: W[6, 3, 2, 1] = 6 - 3/8 + 7/64.
  EXPECT_EQ(packed->constant->data<float>()[((3 * 3 + 2) * 3 + 1) * 8 + 6], 6.0f - 3.0f / 8 + 7.0f / 64);
  const graph::Node& conv = *g.nodes()[1];
  EXPECT_EQ(conv.inputs[1]->type, graph::TensorType(DType::kF32, {8, 4, 3, 3}));
  EXPECT_TRUE(lower::has_channels_last_weight(conv));
  EXPECT_TRUE(lower::conv_shape_of(conv).weight_channels_last);
}

// Panels of 4 of the 8 output channels: Wp[m / 4, c, i, j, m % 4], read back
// through Transpose, Reshape, Transpose.
TEST(PackConvWeights, PanelsOfATilesChannelsAreReadBackThroughTransposeReshapeTranspose) {
  graph::Graph g = conv_graph(4, 8, 5);
  passes::pack_conv_weights(g, [](const graph::Node&) { return int64_t(4); });
  ASSERT_EQ(ops_of(g), (std::vector<std::string>{"Transpose", "Reshape", "Transpose", "Conv", "Relu"}));
  const graph::Value* packed = g.nodes()[0]->inputs[0];
  ASSERT_TRUE(packed->is_constant());
  EXPECT_EQ(packed->constant->shape(), (Dims{2, 4, 3, 3, 4}));
  // W[6, 3, 2, 1] is in panel 1, lane 2.
  EXPECT_EQ(packed->constant->data<float>()[(((1 * 4 + 3) * 3 + 2) * 3 + 1) * 4 + 2],
            6.0f - 3.0f / 8 + 7.0f / 64);
  const graph::Node& conv = *g.nodes()[3];
  EXPECT_EQ(conv.inputs[1]->type, graph::TensorType(DType::kF32, {8, 4, 3, 3}));
  EXPECT_TRUE(lower::has_channels_last_weight(conv));
  graph::Graph odd = conv_graph(4, 8, 5);  // a width that does not split the channels: no panels
  passes::pack_conv_weights(odd, [](const graph::Node&) { return int64_t(3); });
  EXPECT_EQ(ops_of(odd), (std::vector<std::string>{"Transpose", "Conv", "Relu"}));
}

TEST(PackConvWeights, OutputsAreBitForBitTheSameAndASharedWeightIsPackedOnce) {
  graph::Graph plain = conv_graph(3, 8, 6, 1, /*twice=*/true);
  std::vector<Tensor> inputs = driver::random_inputs(plain, 3);
  Tensor want = reference::Executor(plain).run(inputs)[0];
  for (int64_t width : {8, 2}) {
    SCOPED_TRACE(width);
    graph::Graph packed = conv_graph(3, 8, 6, 1, /*twice=*/true);
    passes::pack_conv_weights(packed, [width](const graph::Node&) { return width; });
    int unpack = width == 8 ? 1 : 3;  // nodes that read the packed weight back
    ASSERT_EQ(packed.num_nodes(), size_t(2 * (unpack + 1) + 2)) << "each conv unpacks its own";
    EXPECT_EQ(packed.nodes()[0]->inputs[0], packed.nodes()[size_t(unpack + 1)]->inputs[0]) << "packed once";
    Tensor got = reference::Executor(packed).run(inputs)[0];
    for (int64_t i = 0; i < want.numel(); ++i) ASSERT_EQ(got.data<float>()[i], want.data<float>()[i]) << i;
  }
}

// A grouped conv's weight [M, C/group, kh, kw] packs as any other: Wt[C/group,
// kh, kw, M], or in panels of a group's channels (never straddling two groups).
TEST(PackConvWeights, AGroupedConvsWeightPacksInPanelsWithinAGroup) {
  graph::Graph g = conv_graph(4, 8, 5, /*group=*/2);
  passes::pack_conv_weights(g, whole);
  ASSERT_EQ(ops_of(g), (std::vector<std::string>{"Transpose", "Conv", "Relu"}));
  EXPECT_EQ(g.nodes()[0]->inputs[0]->constant->shape(), (Dims{2, 3, 3, 8}));
  EXPECT_TRUE(lower::conv_shape_of(*g.nodes()[1]).weight_channels_last);
  for (auto [panel, packed] :
       {std::pair{int64_t(2), Dims{4, 2, 3, 3, 2}}, std::pair{int64_t(8), Dims{2, 3, 3, 8}}}) {
    graph::Graph panels = conv_graph(8, 8, 5, /*group=*/4);  // 2 channels per group
    passes::pack_conv_weights(panels, [panel](const graph::Node&) { return panel; });
    EXPECT_EQ(panels.nodes()[0]->inputs[0]->constant->shape(), packed) << "panels of " << panel;
  }
}

TEST(PackConvWeights, ConvsTheLayoutDoesNotAskForOrCannotTakeAreLeftAlone) {
  graph::Graph refused = conv_graph(4, 8, 5);
  passes::pack_conv_weights(refused, [](const graph::Node&) { return int64_t(0); });
  EXPECT_EQ(ops_of(refused), (std::vector<std::string>{"Conv", "Relu"}));
  graph::Graph g;  // the weight an input
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, 2, 4, 4}));
  graph::Value* w = g.add_input("w", graph::TensorType(DType::kF32, {4, 2, 3, 3}));
  g.set_outputs({add(g, "Conv", {x, w})->outputs[0]});
  passes::pack_conv_weights(g, [](const graph::Node&) { return int64_t(4); });
  EXPECT_EQ(ops_of(g), std::vector<std::string>{"Conv"});
}

// The rows of the register tile a kernel accumulates in ("alloc
// Conv0_local: f32[1, rows, columns] local"); 0 when there is none.
int64_t register_tile_rows(const std::string& text) {
  std::smatch m;
  static const std::regex tile(R"(f32\[1, (\d+), \d+\] local)");
  return std::regex_search(text, m, tile) ? std::stoll(m[1]) : 0;
}

// Compiled for this CPU: a 3x3 conv with 64 output channels over a 13 x 13
// plane (a flat plane would be 13 x 15, the taps' reach 13% of it) is
// computed channels-last, its 169 positions padded to whole register tiles
// (rows of 8 with AVX-512's 32 registers, of 6 with AVX2's 16); over a 7 x 7
// plane, 49 positions (rows of 7 with AVX-512). One kernel each (the
// unpacking fused), reading the weight in panels as wide as its tile, and
// matching the reference.
TEST(PackConvWeights, ASmallPlanesConvIsCompiledChannelsLastAndMatchesTheReference) {
  int64_t lanes = codegen::host_target().cpu.vector_bits / 32;
  for (int64_t plane : {13, 7}) {
    SCOPED_TRACE(plane);
    graph::Graph g = conv_graph(16, 64, plane);
    driver::JitModel model(driver::compile_graph(g, {}));
    ASSERT_EQ(model.compiled_kernels().size(), 1u);
    const driver::CompiledKernel& k = model.compiled_kernels()[0];
    std::string text = tir::to_string(k.flat);
    int64_t rows = register_tile_rows(text);
    ASSERT_GE(rows, 2) << text;
    int64_t positions = (plane * plane + rows - 1) / rows * rows;
    int64_t panel = sched::matmul_tile_columns(positions, 64, lanes);
    ASSERT_GT(panel, 0);
    bool reads_packed = false;
    for (const tir::Buffer& param : k.flat->params())
      reads_packed = reads_packed || param->shape == std::vector<int64_t>{64 / panel, 16, 3, 3, panel};
    EXPECT_TRUE(reads_packed) << text;
    // Over 7 x 7 the panels of output channels are the outer loop, and the
    // positions computed are a panel's.
    std::string computed =
        "f32[1, " + std::to_string(positions) + ", " + std::to_string(plane == 13 ? 64 : panel) + "]";
    EXPECT_NE(text.find(computed), std::string::npos) << text;
    // The register tile: rows of positions unrolled, output channels vectorized.
    EXPECT_NE(text.find("in 0.." + std::to_string(rows) + " unrolled"), std::string::npos) << text;
    std::vector<Tensor> inputs = driver::random_inputs(g, 11);
    Tensor want = reference::Executor(g).run(inputs)[0], got = model.run(inputs)[0];
    EXPECT_LE(driver::error_stats(got, want).max_rel, 1e-5);
  }
}

// Every geometry lowered channels-last (the weight packed, whole or in
// panels) computes the reference on the tensor IR interpreter: strides,
// dilations, asymmetric pads, a non-square window, a strided 1x1, positions
// padded to whole tiles, groups. A grouped conv computes [n, group, position,
// channel of the group]; a strided one reads its padded input in place, not
// split into stride phases.
TEST(PackConvWeights, EveryGeometryLoweredChannelsLastMatchesTheReference) {
  struct Case {
    int64_t c, m, h, w, kh, kw;
    std::vector<int64_t> strides, dilations, pads;
    int64_t panel, align, group = 1;
  };
  std::vector<Case> cases = {
      {3, 8, 9, 9, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, 4, 8},
      {4, 8, 10, 7, 3, 3, {1, 1}, {2, 2}, {2, 1, 0, 2}, 8, 1},
      {2, 6, 7, 11, 2, 5, {1, 2}, {1, 1}, {0, 2, 1, 0}, 2, 4},
      {5, 4, 9, 8, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, 4, 8},
      {6, 8, 9, 9, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, 4, 8, 2},
      {6, 9, 8, 7, 3, 2, {1, 2}, {1, 1}, {1, 0, 1, 1}, 9, 1, 3},
      {5, 8, 7, 7, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, 8, 6},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    SCOPED_TRACE(i);
    graph::Graph g;
    graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, k.c, k.h, k.w}));
    Tensor wk(DType::kF32, {k.m, k.c / k.group, k.kh, k.kw});
    for (int64_t e = 0; e < wk.numel(); ++e) wk.data<float>()[e] = float(e % 13) / 8 - 0.7f;
    graph::Attrs attrs;
    attrs.set("strides", k.strides);
    attrs.set("dilations", k.dilations);
    attrs.set("pads", k.pads);
    attrs.set("group", k.group);
    graph::Value* y = add(g, "Conv", {x, g.add_constant("W", std::move(wk))}, attrs)->outputs[0];
    Dims out = y->type.static_dims();
    int64_t positions = (out[2] * out[3] + k.align - 1) / k.align * k.align;
    g.set_outputs({add(g, "Relu", {y})->outputs[0]});
    std::vector<Tensor> inputs = driver::random_inputs(g, 5);
    std::vector<Tensor> want = driver::run_reference(g, inputs);
    passes::pack_conv_weights(g, [&](const graph::Node&) { return k.panel; });
    lower::LayoutChoices channels_last{[&](const lower::ConvShape&) {
      return lower::ConvLayout{lower::ConvForm::kChannelsLast, k.align};
    }};
    driver::TirExecutor tir(g, passes::FusionPolicy::kDefault, channels_last);
    ASSERT_EQ(tir.groups().size(), 1u) << "the unpacking joins the conv's group";
    std::string text = tir::to_string(tir.groups()[0].func);
    std::string positions_by_channels =
        k.group == 1 ? "f32[1, " + std::to_string(positions) + ", " + std::to_string(k.m) + "]"
                     : "f32[1, " + std::to_string(k.group) + ", " + std::to_string(positions) + ", " +
                           std::to_string(k.m / k.group) + "]";
    EXPECT_NE(text.find(positions_by_channels), std::string::npos) << text;
    EXPECT_EQ(text.find("_phases"), std::string::npos) << text;
    // A 1x1 window without padding reads the input in place, its padding
    // positions clamped to the last one: no copy of the input with rows added.
    bool pointwise = k.kh == 1 && k.kw == 1 && k.pads == std::vector<int64_t>{0, 0, 0, 0};
    if (pointwise) EXPECT_EQ(text.find("_pad"), std::string::npos) << text;
    std::vector<Tensor> got = tir.run(inputs);
    EXPECT_LE(driver::error_stats(got[0], want[0]).max_rel, 1e-5);
  }
}

// The channels-last conv block as the schedule sees it: a conv whose tile
// rows are the positions (read by the input alone) and whose vector is the
// output channels (read by the weight alone), walking its channel tiles
// outside its position tiles so that each strip of the weight stays in cache
// for every position tile instead of the whole weight streaming through once
// per position tile.
TEST(PackConvWeights, AChannelsLastConvTilesPositionsByChannelsAndWalksChannelTilesOutside) {
  graph::Graph g = conv_graph(16, 64, 7);
  driver::JitModel model(driver::compile_graph(g, {}));
  ASSERT_EQ(model.compiled_kernels().size(), 1u);
  const tir::PrimFunc& lowered = model.compiled_kernels()[0].group.func;
  std::vector<sched::BlockInfo> blocks = sched::classify_blocks(lowered);
  auto conv = std::find_if(blocks.begin(), blocks.end(),
                           [](const sched::BlockInfo& b) { return b.kind == sched::BlockKind::kConv; });
  ASSERT_NE(conv, blocks.end()) << lowered;
  EXPECT_TRUE(conv->channels_in_lanes);
  // The 49 positions, padded to whole register tiles (on AVX2: 9 rows of 6).
  EXPECT_GE(conv->extents[size_t(conv->unroll_loop)], 49);
  EXPECT_LT(conv->extents[size_t(conv->unroll_loop)], 49 + 8);
  EXPECT_EQ(conv->extents[size_t(conv->vector_loop)], 64);
  sched::Schedule sch(lowered);
  EXPECT_TRUE(sched::cpu_rules::columns_first_by_default(sch, *conv, 32, 7));
}

// Without fusion of producers (none) the weight stays in place: the Transpose
// would be a kernel of its own, run every time. The conv is computed flat.
TEST(PackConvWeights, WithoutProducerFusionTheConvIsComputedFlat) {
  graph::Graph g = conv_graph(16, 64, 7);
  driver::CompileOptions options;
  options.fusion = passes::FusionPolicy::kNone;
  driver::JitModel model(driver::compile_graph(g, options));
  ASSERT_EQ(model.compiled_kernels().size(), 2u);  // conv + bias, relu
  for (const driver::CompiledKernel& k : model.compiled_kernels())
    for (const tir::Buffer& param : k.flat->params()) {
      EXPECT_NE(param->shape.size(), 5u) << "no panels";
      EXPECT_NE(param->shape, (std::vector<int64_t>{16, 3, 3, 64})) << "no channels-last weight";
    }
  std::vector<Tensor> inputs = driver::random_inputs(g, 2);
  Tensor want = reference::Executor(g).run(inputs)[0], got = model.run(inputs)[0];
  EXPECT_LE(driver::error_stats(got, want).max_rel, 1e-5);
}

}  // namespace
}  // namespace tessel
