// Compute definitions of Conv, ConvTranspose, MatMul, Gemm and the pools:
// each lowered on its own, interpreted on random data and compared with the
// reference executor; the block structure the schedules rely on is checked too.
#include "schedules/defaults/block_kind.h"
#include "schedules/defaults/cpu_defaults.h"
#include "schedules/tree_query.h"
#include "tests/unit/lower_nn_test_util.h"

namespace tessel::lower_nn_test {
namespace {

using std::vector;

// ---- Conv

TEST(LowerNnConv, PlainConvIsOneReductionBlockAndBiasComposes) {
  // Output rows of 32 (not short: see ShortRowsAreComputedFlat).
  LoweredNode n = check_op("Conv", "conv1", {f32_arg({1, 2, 5, 34}), f32_arg({3, 2, 3, 3}), f32_arg({3})});
  // n, oc, oh, ow spatial; ic, kh, kw reduced; the bias lands in the output's block.
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"conv1: S S S S R R R", "out0: S S S S"}));
  EXPECT_EQ(n.text().find("select"), std::string::npos) << "no padding, no bounds check:\n" << n.text();
}

// Padding and strides re-lay out the input into its stride phases ([n, c,
// phase h, phase w, h, w]); the reduction reads them without a guard and with
// unit stride along the output row. Output rows longer than a vector copy
// them in one stage, the border guarded (partition_vector_loops splits the
// guards off each row); shorter ones in two: the zero border, guarded, then
// the phases from the padded copy, unguarded (a row's middle would be
// shorter than a vector, and scalar).
TEST(LowerNnConv, StridedAndPaddedReadARelaidInput) {
  LoweredNode wide = check_op("Conv", "conv1", {f32_arg({1, 2, 6, 64}), f32_arg({2, 2, 3, 3})},
                              attrs(kv("strides", ints({2, 2})), kv("pads", ints({1, 1, 1, 1}))));
  EXPECT_EQ(block_shapes(wide.func),
            (vector<std::string>{"conv1_phases_1: S S S S S S", "conv1: S S S S R R R"}));
  std::string text = wide.text();
  size_t conv = text.find("block conv1(");
  ASSERT_NE(conv, std::string::npos) << text;
  EXPECT_NE(
      text.find(
          "v5 * 2 + v3 - 1 < 64, in0[max(min(v0, 0), 0), max(min(v1, 1), 0), max(min(v4 * 2 + v2 - 1, 5), "
          "0), max(min(v5 * 2 + v3 - 1, 63), 0)]"),
      std::string::npos)
      << "each phase reads every other element of the input, guarded:\n"
      << text;
  EXPECT_EQ(text.find("select", conv), std::string::npos) << "the reduction reads unguarded:\n" << text;
  EXPECT_NE(text.find("conv1_phases_1[v0_1, r0, r1 % 2, r2 % 2, v2_1 + r1 // 2, v3_1 + r2 // 2]", conv),
            std::string::npos)
      << "the phase of the tap:\n"
      << text;

  LoweredNode narrow = check_op("Conv", "conv1", {f32_arg({1, 2, 6, 24}), f32_arg({2, 2, 3, 3})},
                                attrs(kv("strides", ints({2, 2})), kv("pads", ints({1, 1, 1, 1}))));
  EXPECT_EQ(block_shapes(narrow.func),
            (vector<std::string>{"conv1_pad_1: S S S S", "conv1_phases_1: S S S S S S", "conv1: S S S R R R",
                                 "out0: S S S S"}));
  text = narrow.text();
  size_t phases = text.find("block conv1_phases_1(");
  ASSERT_NE(phases, std::string::npos) << text;
  EXPECT_NE(text.substr(0, phases).find("select"), std::string::npos) << "the border is guarded:\n" << text;
  EXPECT_EQ(text.find("select", phases), std::string::npos) << "phases and reduction read unguarded:\n" << text;
  EXPECT_NE(text.find("conv1_pad_1[v0_1, v1_1, v4 * 2 + v2_1, v5 * 2 + v3_1]", phases), std::string::npos)
      << "each phase reads every other element of the padded copy:\n" << text;
  EXPECT_NE(text.find("block conv1("), std::string::npos) << text;
}

// Strides without padding (a 2x2 patchify conv) need no border: one phase stage.
TEST(LowerNnConv, StridedUnpaddedSplitsPhasesInOneStage) {
  LoweredNode n = check_op("Conv", "ds", {f32_arg({1, 2, 6, 64}), f32_arg({2, 2, 2, 2})},
                           attrs(kv("strides", ints({2, 2}))));
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"ds_phases_1: S S S S S S", "ds: S S S S R R R"}));
  EXPECT_EQ(n.text().find("select"), std::string::npos) << n.text();
}

TEST(LowerNnConv, PaddingAloneKeepsTheLayout) {
  LoweredNode n = check_op("Conv", "c", {f32_arg({1, 2, 5, 40}), f32_arg({2, 2, 3, 3})},
                           attrs(kv("pads", ints({1, 1, 1, 1}))));
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"c_pad_1: S S S S", "c: S S S S R R R"}));
}

// Output rows shorter than 32, or not a multiple of 8, are computed flat over
// the re-laid-out plane (here 6 wide: 4 outputs and the padding), padded to a
// multiple of 16, so the vector loop runs over whole vectors; the output
// reads it back by row.
TEST(LowerNnConv, ShortRowsAreComputedFlat) {
  LoweredNode n = check_op("Conv", "c", {f32_arg({1, 2, 4, 4}), f32_arg({3, 2, 3, 3}), f32_arg({3})},
                           attrs(kv("pads", ints({1, 1, 1, 1}))));
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"c_pad_1: S S S S", "c: S S S R R R", "out0: S S S S"}));
  std::string text = n.text();
  EXPECT_NE(text.find("alloc c: f32[1, 3, 32]"), std::string::npos) << "4 rows of 6, padded to 32:\n" << text;
  EXPECT_NE(text.find("alloc c_pad_1: f32[1, 2, 8, 6]"), std::string::npos) << "6 rows, 2 of zeros below for the reads of f >= 24:\n" << text;
  LoweredNode ragged = check_op("Conv", "r", {f32_arg({1, 2, 3, 37}), f32_arg({2, 2, 3, 3})},
                                attrs(kv("pads", ints({1, 1, 1, 1}))));
  EXPECT_EQ(block_shapes(ragged.func), (vector<std::string>{"r_pad_1: S S S S", "r: S S S R R R", "out0: S S S S"}));
  // Strided, dilated and grouped short rows, checked against the reference by check_op.
  check_op("Conv", "s", {f32_arg({1, 4, 9, 11}), f32_arg({6, 2, 3, 3})},
           attrs(kv("strides", ints({2, 3})), kv("pads", ints({1, 0, 2, 1})), kv("group", int64_t(2)),
                 kv("dilations", ints({2, 1}))));
}

// With 16 output channels or more, rows of whole vectors are computed flat
// too (room for a wide register tile); a depthwise conv keeps its rows.
TEST(LowerNnConv, WideConvsAreFlatAndDepthwiseKeepsRows) {
  LoweredNode wide = check_op("Conv", "c", {f32_arg({1, 2, 4, 32}), f32_arg({16, 2, 3, 3})},
                              attrs(kv("pads", ints({1, 1, 1, 1}))));
  EXPECT_EQ(block_shapes(wide.func), (vector<std::string>{"c_pad_1: S S S S", "c: S S S R R R", "out0: S S S S"}));
  // 4 rows of 34 = 136 positions (more than 512 would pad to a multiple of 48).
  EXPECT_NE(wide.text().find("alloc c: f32[1, 16, 144]"), std::string::npos) << wide.text();
  LoweredNode dw = check_op("Conv", "d", {f32_arg({1, 16, 4, 32}), f32_arg({16, 1, 3, 3})},
                            attrs(kv("pads", ints({1, 1, 1, 1})), kv("group", int64_t(16))));
  EXPECT_EQ(block_shapes(dw.func), (vector<std::string>{"d_pad_1: S S S S", "d: S S S S R R R"}));
}

// Scheduled by default, the head's part of a flat pointwise conv's output
// (the bias of 160 of 13 x 13 positions) is computed in the conv's
// register tile, while its results are in registers, not in a pass of its own
// over the plane afterwards; the tail's part follows the tail.
TEST(LowerNnConv, APointwiseConvsEpilogueJoinsTheHeadsTile) {
  LoweredNode n = check_op("Conv", "p", {f32_arg({1, 8, 13, 13}), f32_arg({32, 8, 1, 1}), f32_arg({32})});
  sched::Schedule sch(n.func);
  sched::apply_default_cpu_schedule(sch, sched::CpuScheduleOptions{});
  auto loops_of = [&](const std::string& block) {
    tir::Stmt b = sched::find_block(sch.func(), block);
    EXPECT_TRUE(b.defined()) << block << "\n" << sch.func();
    return b.defined() ? sched::loops_above(sch.func(), b.get()) : std::vector<tir::Stmt>{};
  };
  std::vector<tir::Stmt> head = loops_of("p"), epilogue = loops_of("out0");
  ASSERT_GE(head.size(), 2u);
  ASSERT_GE(epilogue.size(), 2u);
  EXPECT_TRUE(epilogue[0].same_as(head[0]) && epilogue[1].same_as(head[1])) << sch.func();
  std::vector<Tensor> got = tir::interpret(sch.func(), n.values), want = n.reference();
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], want[0], 1e-5, "scheduled");
}

// A 1x1 conv with short rows is a matmul over the flat plane, read in place:
// 7 x 7 = 49 columns as a block of 48 (whole tiles) and a tail of 1, whose
// column of X is copied first with the channels innermost (p_tail_input
// [n, j, c]: the tail's products then read it in order). Its output (with
// the bias) is written over the flat plane too, out0[n, c, f // 7, f % 7],
// by two blocks: the head's 48 positions (which can join the matmul's tile)
// and the tail's one, each reading only its own part.
TEST(LowerNnConv, ShortPointwiseRowsAreAFlatMatmulAndATail) {
  LoweredNode n = check_op("Conv", "p", {f32_arg({1, 5, 7, 7}), f32_arg({3, 5, 1, 1}), f32_arg({3})});
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"p: S S S R", "p_tail_input: S S S", "p_tail: S S S R",
                                                       "out0: S S S", "out0_tail: S S S"}));
  EXPECT_NE(n.text().find("block out0(v0_3: spatial[1] = i0_3, v1_3: spatial[3] = i1_3, v2_3: spatial[48]"),
            std::string::npos)
      << n.text();
  EXPECT_NE(n.text().find("reads p[v0_3, v1_3, v2_3], in2[v1_3]\n"), std::string::npos) << n.text();
  EXPECT_NE(n.text().find("alloc p_tail_input: f32[1, 1, 5]"), std::string::npos) << n.text();
  std::string text = n.text();
  EXPECT_NE(text.find("alloc p: f32[1, 3, 48]"), std::string::npos) << text;
  EXPECT_NE(text.find("alloc p_tail: f32[1, 3, 1]"), std::string::npos) << text;
  EXPECT_EQ(text.find("_pad"), std::string::npos) << "the input is read in place:\n" << text;
  // A plane of whole tiles has no tail; a strided 1x1 conv (a downsample)
  // copies its subsampled plane first (4 x 7 of 8 x 14); a padded one keeps the general form.
  LoweredNode whole = check_op("Conv", "w", {f32_arg({1, 2, 4, 12}), f32_arg({3, 2, 1, 1})});
  EXPECT_EQ(block_shapes(whole.func), (vector<std::string>{"w: S S S R", "out0: S S S"}));
  LoweredNode strided = check_op("Conv", "s", {f32_arg({1, 2, 8, 14}), f32_arg({3, 2, 1, 1})},
                                 attrs(kv("strides", ints({2, 2}))));
  EXPECT_EQ(block_shapes(strided.func),
            (vector<std::string>{"s_subsample: S S S S", "s: S S S R", "s_tail_input: S S S",
                                 "s_tail: S S S R", "out0: S S S", "out0_tail: S S S"}));
  EXPECT_NE(strided.text().find("alloc s_subsample: f32[1, 2, 4, 7]"), std::string::npos) << strided.text();
  LoweredNode padded = check_op("Conv", "q", {f32_arg({1, 2, 8, 14}), f32_arg({3, 2, 1, 1})},
                                attrs(kv("pads", ints({1, 1, 1, 1}))));
  EXPECT_EQ(block_shapes(padded.func), (vector<std::string>{"q_pad_1: S S S S", "q: S S S S R R R"}));
}

TEST(LowerNnConv, AsymmetricPadsAndAutoPad) {
  check_op("Conv", "c", {f32_arg({1, 1, 5, 6}), f32_arg({2, 1, 3, 3})},
           attrs(kv("strides", ints({2, 1})), kv("pads", ints({1, 0, 2, 1}))));
  check_op("Conv", "c", {f32_arg({1, 2, 5, 5}), f32_arg({2, 2, 2, 3})},
           attrs(kv("auto_pad", std::string("SAME_UPPER")), kv("strides", ints({2, 2}))));
  check_op("Conv", "c", {f32_arg({1, 2, 5, 5}), f32_arg({2, 2, 2, 2})},
           attrs(kv("auto_pad", std::string("SAME_LOWER"))));
}

TEST(LowerNnConv, Dilated) {
  check_op("Conv", "c", {f32_arg({1, 2, 7, 7}), f32_arg({2, 2, 3, 3}), f32_arg({2})},
           attrs(kv("dilations", ints({2, 2})), kv("pads", ints({2, 1, 2, 1}))));
}

TEST(LowerNnConv, GroupedAndDepthwise) {
  check_op("Conv", "grouped", {f32_arg({1, 4, 5, 5}), f32_arg({6, 2, 3, 3}), f32_arg({6})},
           attrs(kv("group", int64_t(2)), kv("pads", ints({1, 1, 1, 1}))));
  LoweredNode dw =
      check_op("Conv", "dw", {f32_arg({2, 4, 6, 64}), f32_arg({4, 1, 3, 3})},
               attrs(kv("group", int64_t(4)), kv("strides", ints({2, 2})), kv("pads", ints({1, 1, 1, 1}))));
  // Strided, it reads its padded input in place: no copy split into phases.
  EXPECT_EQ(block_shapes(dw.func), (vector<std::string>{"dw_pad_1: S S S S", "dw: S S S S R R R"}));
  // Depthwise with a channel multiplier: 2 outputs per input channel.
  check_op("Conv", "dw2", {f32_arg({1, 3, 4, 4}), f32_arg({6, 1, 2, 2})}, attrs(kv("group", int64_t(3))));
}

// A grouped conv with several input and output channels per group computes
// [n, group, channel of the group, ...]: its input channel depends on the
// group alone, so the schedule sees an ordinary conv whose tile rows are the
// group's output channels (not a per-channel window recomputing its group's
// input per output channel). Direct, flat, 1-D and 3-D, against the reference.
TEST(LowerNnConv, AGroupedConvSplitsItsOutputChannelsByGroup) {
  graph::Attrs grouped = attrs(kv("group", int64_t(2)), kv("pads", ints({1, 1, 1, 1})));
  vector<Arg> args = {f32_arg({1, 6, 5, 7}), f32_arg({8, 3, 3, 3}), f32_arg({8})};
  LoweredNode direct = check_op("Conv", "g", args, grouped, 1, 1e-5, {});
  EXPECT_EQ(block_shapes(direct.func),
            (vector<std::string>{"g_pad_1: S S S S", "g: S S S S S R R R", "out0: S S S S"}));
  EXPECT_NE(direct.text().find("alloc g: f32[1, 2, 4, 5, 7]"), std::string::npos) << direct.text();
  sched::BlockInfo info = sched::classify_block(direct.func, "g");
  EXPECT_EQ(info.kind, sched::BlockKind::kConv);
  EXPECT_EQ(info.unroll_loop, 2) << "the group's output channels are the tile's rows";
  lower::LayoutChoices flat{[](const lower::ConvShape&) {
    return lower::ConvLayout{lower::ConvForm::kFlat, 16};
  }};
  LoweredNode f = check_op("Conv", "f", args, grouped, 1, 1e-5, flat);
  EXPECT_EQ(block_shapes(f.func),
            (vector<std::string>{"f_pad_1: S S S S", "f: S S S S R R R", "out0: S S S S"}));
  check_op("Conv", "g1", {f32_arg({1, 4, 9}), f32_arg({6, 2, 3})},
           attrs(kv("group", int64_t(2)), kv("strides", ints({2}))));
  check_op("Conv", "g3", {f32_arg({1, 4, 3, 4, 4}), f32_arg({4, 2, 2, 2, 2})},
           attrs(kv("group", int64_t(2))));
}

TEST(LowerNnConv, OneAndThreeSpatialDims) {
  check_op("Conv", "c1d", {f32_arg({2, 3, 7}), f32_arg({2, 3, 3}), f32_arg({2})},
           attrs(kv("pads", ints({1, 2})), kv("strides", ints({2}))));
  check_op("Conv", "c3d", {f32_arg({1, 2, 3, 4, 4}), f32_arg({2, 2, 2, 2, 2})},
           attrs(kv("pads", ints({0, 1, 1, 1, 0, 0}))));
}

TEST(LowerNnConvTranspose, StridedPaddedAndGrouped) {
  check_op(
      "ConvTranspose", "ct", {f32_arg({1, 2, 3, 3}), f32_arg({2, 3, 3, 3})},
      attrs(kv("strides", ints({2, 2})), kv("pads", ints({1, 1, 1, 1})), kv("output_padding", ints({1, 1}))));
  check_op("ConvTranspose", "ct", {f32_arg({1, 4, 3, 3}), f32_arg({4, 1, 2, 2}), f32_arg({2})},
           attrs(kv("group", int64_t(2)), kv("dilations", ints({2, 1}))));
  check_op("ConvTranspose", "ct", {f32_arg({2, 1, 4}), f32_arg({1, 2, 3})},
           attrs(kv("strides", ints({3})), kv("auto_pad", std::string("SAME_UPPER"))));
}

// ---- MatMul and Gemm

TEST(LowerNnMatMul, MatricesAndBatches) {
  LoweredNode n = check_op("MatMul", "mm", {f32_arg({3, 4}), f32_arg({4, 5})});
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"mm: S S R"}));
  check_op("MatMul", "mm", {f32_arg({2, 3, 4}), f32_arg({2, 4, 5})});
  check_op("MatMul", "mm", {f32_arg({2, 1, 3, 4}), f32_arg({3, 4, 2})});  // batch broadcast both ways
  check_op("MatMul", "mm", {f32_arg({1, 2, 3}), f32_arg({2, 3, 4})});
}

TEST(LowerNnMatMul, OneDimensionalOperands) {
  check_op("MatMul", "mm", {f32_arg({4}), f32_arg({2, 4, 3})});
  check_op("MatMul", "mm", {f32_arg({2, 3, 4}), f32_arg({4})});
  LoweredNode dot = check_op("MatMul", "dot", {f32_arg({6}), f32_arg({6})});
  EXPECT_EQ(block_shapes(dot.func), (vector<std::string>{"dot: R"}));
}

TEST(LowerNnMatMul, Integers) {
  check_op("MatMul", "mm", {rand_arg(DType::kI32, {3, 4}), rand_arg(DType::kI32, {4, 2})});
  check_op("MatMul", "mm", {rand_arg(DType::kI64, {2, 2, 3}), rand_arg(DType::kI64, {3, 2})});
}

TEST(LowerNnGemm, TransposesAlphaBetaAndBiasShapes) {
  LoweredNode plain = check_op("Gemm", "fc", {f32_arg({3, 4}), f32_arg({4, 5})});
  EXPECT_EQ(block_shapes(plain.func), (vector<std::string>{"fc: S S R"}));
  check_op("Gemm", "fc", {f32_arg({4, 3}), f32_arg({4, 5}), f32_arg({3, 5})},
           attrs(kv("transA", int64_t(1))));
  check_op("Gemm", "fc", {f32_arg({3, 4}), f32_arg({5, 4}), f32_arg({5})}, attrs(kv("transB", int64_t(1))));
  LoweredNode all =
      check_op("Gemm", "fc", {f32_arg({4, 3}), f32_arg({5, 4}), f32_arg({1, 5})},
               attrs(kv("transA", int64_t(1)), kv("transB", int64_t(1)), kv("alpha", 0.25), kv("beta", 0.5)));
  // transB: B's transpose is a block of its own, so that the product reads its columns in order.
  EXPECT_EQ(block_shapes(all.func), (vector<std::string>{"fc_b: S S", "fc: S S R", "out0: S S"}));
  check_op("Gemm", "fc", {f32_arg({3, 4}), f32_arg({4, 5}), f32_arg({3, 1})}, attrs(kv("beta", 2.0)));
  check_op("Gemm", "fc", {f32_arg({3, 4}), f32_arg({4, 5}), f32_arg({1})}, attrs(kv("alpha", 3.0)));
  check_op("Gemm", "fc", {f32_arg({3, 4}), f32_arg({4, 5}), value_arg(Tensor::scalar_f64(DType::kF32, 1.5))});
  check_op("Gemm", "fc", {f32_arg({3, 4}), f32_arg({4, 5}), f32_arg({3, 5})}, attrs(kv("beta", 0.0)));
}

TEST(LowerNnGemm, Integers) {
  check_op("Gemm", "fc",
           {rand_arg(DType::kI64, {3, 4}), rand_arg(DType::kI64, {4, 2}), rand_arg(DType::kI64, {2})},
           attrs(kv("alpha", 2.0), kv("beta", 3.0)));
}

// The reference runs MatMul, Conv and Softmax on f32 / f64 only: f16 lowerings
// (which accumulate in f32) are compared with the f32 reference on the same values.
void check_f16_against_f32(const std::string& op, const vector<Dims>& shapes, graph::Attrs a = {}) {
  vector<Arg> half, single;
  for (const Dims& shape : shapes) {
    Arg h = rand_arg(DType::kF16, shape);
    Tensor f(DType::kF32, shape);
    for (int64_t i = 0; i < f.numel(); ++i) f.set_f64(i, h.value.get_f64(i));
    half.push_back(h);
    single.push_back(value_arg(f));
  }
  LoweredNode n(op, "h", half, a);
  EXPECT_NE(n.text().find("alloc h: f32"), std::string::npos) << "accumulates in f32:\n" << n.text();
  Tensor got = n.interpreted().at(0);
  Tensor want = LoweredNode(op, "h", single, a).reference().at(0);
  Tensor got32(DType::kF32, got.shape());
  for (int64_t i = 0; i < got.numel(); ++i) got32.set_f64(i, got.get_f64(i));
  expect_close(got32, want, 2e-3, op + " in f16\n" + n.text());
}

TEST(LowerNnHalf, AccumulatesInF32) {
  check_f16_against_f32("MatMul", {{2, 3, 30}, {30, 4}});
  check_f16_against_f32("Gemm", {{3, 30}, {4, 30}, {4}}, attrs(kv("transB", int64_t(1)), kv("alpha", 0.5)));
  check_f16_against_f32("Conv", {{1, 4, 5, 5}, {2, 4, 3, 3}, {2}}, attrs(kv("pads", ints({1, 1, 1, 1}))));
  check_f16_against_f32("AveragePool", {{1, 2, 6, 6}}, attrs(kv("kernel_shape", ints({3, 3}))));
}

// ---- Pools

TEST(LowerNnPool, MaxPoolWindows) {
  // Separable: the maxima of each row's window taps, one row of the padded
  // width per output row, then the pool folds the columns' taps from them.
  LoweredNode n =
      check_op("MaxPool", "pool", {f32_arg({1, 2, 5, 5})}, attrs(kv("kernel_shape", ints({2, 2}))));
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"pool_rows: S S S S", "pool: S S S S R"}));
  // Padded and strided: the rows read the input with unit stride along the
  // columns, -inf outside it; the pool reads the rows unguarded.
  LoweredNode strided = check_op(
      "MaxPool", "pool", {f32_arg({1, 2, 5, 5})},
      attrs(kv("kernel_shape", ints({3, 3})), kv("strides", ints({2, 2})), kv("pads", ints({1, 1, 1, 1}))));
  EXPECT_EQ(block_shapes(strided.func), (vector<std::string>{"pool_rows: S S S S", "pool: S S S S R"}));
  std::string text = strided.text();
  EXPECT_NE(text.find("f32(-inf))"), std::string::npos) << text;
  EXPECT_NE(
      text.find(
          "in0[max(min(v0, 0), 0), max(min(v1, 1), 0), max(min(v2 * 2 - 1, 4), 0), max(min(v3 - 1, 4), 0)]"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("pool_rows[v0_1, v1_1, v2_1, v3_1 * 2 + r0]"), std::string::npos) << text;
  EXPECT_EQ(text.find("select", text.find("block pool(")), std::string::npos) << text;
  // A window whose leading axes have more taps than are written out is
  // read as a conv's input.
  LoweredNode wide = check_op("MaxPool", "pool", {f32_arg({1, 1, 3, 18, 18})},
                              attrs(kv("kernel_shape", ints({3, 6, 2})), kv("strides", ints({1, 3, 2}))));
  EXPECT_EQ(block_shapes(wide.func),
            (vector<std::string>{"pool_phases_1: S S S S S S S", "pool: S S S S S R R R"}));
  check_op("MaxPool", "pool", {f32_arg({1, 1, 6, 6})},
           attrs(kv("kernel_shape", ints({3, 3})), kv("strides", ints({2, 2})), kv("ceil_mode", int64_t(1))));
  check_op(
      "MaxPool", "pool", {f32_arg({1, 1, 7, 7})},
      attrs(kv("kernel_shape", ints({2, 2})), kv("dilations", ints({2, 3})), kv("pads", ints({0, 1, 1, 0}))));
  check_op("MaxPool", "pool", {f32_arg({2, 2, 9})},
           attrs(kv("kernel_shape", ints({3})), kv("auto_pad", std::string("SAME_LOWER"))));
  check_op("MaxPool", "pool", {f32_arg({1, 1, 3, 4, 4})}, attrs(kv("kernel_shape", ints({2, 2, 2}))));
  check_op("MaxPool", "pool", {rand_arg(DType::kU8, {1, 2, 4, 4})},
           attrs(kv("kernel_shape", ints({2, 2})), kv("pads", ints({1, 1, 1, 1}))));
}

TEST(LowerNnPool, MaxPoolIndices) {
  LoweredNode n = check_op(
      "MaxPool", "pool", {f32_arg({2, 2, 5, 5})},
      attrs(kv("kernel_shape", ints({3, 3})), kv("strides", ints({2, 2})), kv("pads", ints({1, 1, 1, 1}))),
      2);
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"pool: S S S S R R", "pool_indices: S S S S R R"}));
  check_op("MaxPool", "pool", {f32_arg({1, 2, 4, 5})},
           attrs(kv("kernel_shape", ints({2, 2})), kv("storage_order", int64_t(1))), 2);
  // Ties: the first maximum in window order wins.
  check_op("MaxPool", "pool", {value_arg(Tensor(DType::kF32, {1, 1, 4, 4}))},
           attrs(kv("kernel_shape", ints({2, 2}))), 2);
}

TEST(LowerNnPool, AveragePoolDivisors) {
  LoweredNode n =
      check_op("AveragePool", "avg", {f32_arg({1, 2, 5, 5})}, attrs(kv("kernel_shape", ints({2, 2}))));
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"avg: S S S S R R", "out0: S S S S"}));
  for (int64_t count_pad : {0, 1}) {
    check_op("AveragePool", "avg", {f32_arg({1, 2, 5, 5})},
             attrs(kv("kernel_shape", ints({3, 3})), kv("pads", ints({1, 2, 1, 0})),
                   kv("count_include_pad", count_pad)));
    check_op(
        "AveragePool", "avg", {f32_arg({1, 1, 6, 6})},
        attrs(kv("kernel_shape", ints({3, 3})), kv("strides", ints({2, 2})), kv("pads", ints({1, 1, 1, 1})),
              kv("ceil_mode", int64_t(1)), kv("count_include_pad", count_pad)));
    check_op("AveragePool", "avg", {f32_arg({1, 1, 4, 7, 7})},
             attrs(kv("kernel_shape", ints({2, 2, 2})), kv("dilations", ints({2, 2, 2})),
                   kv("strides", ints({1, 2, 2})), kv("ceil_mode", int64_t(1)),
                   kv("count_include_pad", count_pad)));
  }
  check_op("AveragePool", "avg", {f32_arg({1, 1, 5, 5})},
           attrs(kv("kernel_shape", ints({2, 2})), kv("auto_pad", std::string("SAME_UPPER"))));
  check_op("AveragePool", "avg", {f32_arg({2, 3, 8})},
           attrs(kv("kernel_shape", ints({3})), kv("strides", ints({2}))));
}

TEST(LowerNnPool, GlobalPools) {
  LoweredNode avg = check_op("GlobalAveragePool", "gap", {f32_arg({2, 3, 4, 5})});
  EXPECT_EQ(block_shapes(avg.func), (vector<std::string>{"gap: S S S S R R", "out0: S S S S"}));
  LoweredNode max = check_op("GlobalMaxPool", "gmp", {f32_arg({2, 3, 4, 5})});
  EXPECT_EQ(block_shapes(max.func), (vector<std::string>{"gmp: S S S S R R"}));
  check_op("GlobalAveragePool", "gap", {f32_arg({1, 2, 3, 2, 2})});
}

}  // namespace
}  // namespace tessel::lower_nn_test
