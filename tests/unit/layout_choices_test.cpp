// Layout decisions are inputs of lowering (lower/layout_choices.h) made by the
// schedule from the target: the default CPU rules, the forms lowering builds
// for each choice (each checked against the reference on the interpreter),
// choices lowering refuses, and what the pipeline picks per target.
#include "schedules/defaults/cpu_defaults.h"
#include "schedules/defaults/cpu_layouts.h"
#include "schedules/tree_query.h"
#include "src/driver/compile_model.h"
#include "tests/unit/lower_nn_test_util.h"

namespace tessel::lower_nn_test {
namespace {

using lower::ConvForm;
using lower::ConvLayout;
using lower::ConvShape;
using std::vector;

// A 2-D conv: output [1, m, oh, ow], k x k taps, stride 1, pad (k - 1) / 2.
ConvShape conv2d(int64_t m, int64_t oh, int64_t ow, int64_t k, int64_t group = 1, int64_t in_per_group = 8) {
  int64_t pad = (k - 1) / 2;
  return {{1, m, oh, ow}, {k, k}, {1, 1}, {1, 1}, {pad, pad}, {pad, pad}, group, in_per_group, m / group};
}

// c with its weight packed channels-last (pack_conv_weights), the form's precondition.
ConvShape packed(ConvShape c) {
  c.weight_channels_last = true;
  return c;
}

std::string cpu_choice(const ConvShape& c, int lanes, int64_t l2_bytes = int64_t(1) << 20,
                       int fmas_in_flight = 4) {
  sched::CpuScheduleOptions o;
  o.vector_lanes = lanes;
  o.l2_bytes = l2_bytes;
  o.fmas_in_flight = fmas_in_flight;
  return lower::to_string(sched::default_cpu_conv_layout(c, o));
}

TEST(CpuLayouts, ConvFormsFollowRowsChannelsAndTaps) {
  for (int lanes : {8, 16}) {
    SCOPED_TRACE(lanes);
    EXPECT_EQ(cpu_choice(conv2d(64, 56, 56, 3), lanes), "flat align 48") << "wide plane: tiles of 16, 24, 48 end evenly";
    EXPECT_EQ(cpu_choice(conv2d(64, 14, 14, 3), lanes), "flat align 16") << "ragged rows, plane of 14 x 16";
    EXPECT_EQ(cpu_choice(conv2d(8, 4, 32, 3), lanes), "direct") << "rows of whole vectors, too few channels";
    EXPECT_EQ(cpu_choice(conv2d(8, 4, 30, 3), lanes), "flat align 16") << "ragged rows";
    EXPECT_EQ(cpu_choice(conv2d(32, 56, 56, 3, 32, 1), lanes), "direct") << "depthwise keeps its rows";
    EXPECT_EQ(cpu_choice(conv2d(64, 7, 7, 1), lanes), "flat-pointwise align 16") << "1x1, short rows";
    EXPECT_EQ(cpu_choice(conv2d(64, 56, 64, 1), lanes), "direct") << "1x1 with rows of whole vectors";
    EXPECT_EQ(cpu_choice(conv2d(64, 56, 56, 1), lanes), lanes == 8 ? "direct" : "flat-pointwise align 16")
        << "1x1 with rows of 7 vectors of 8, 3.5 of 16";
    EXPECT_EQ(cpu_choice(conv2d(64, 3, 3, 1), lanes), "direct") << "1x1, a plane under one tile";
    EXPECT_EQ(cpu_choice(conv2d(256, 28, 28, 1), lanes),
              lanes == 16 ? "flat-pointwise align 48" : "flat-pointwise align 16")
        << "784 = 49 vectors of 16, which neither 2 nor 3 vectors divide: 768 in tiles of three, 16 left";
    EXPECT_EQ(cpu_choice(conv2d(256, 14, 14, 1), lanes), "flat-pointwise align 16")
        << "196: 192 and a tail of 4";
    ConvShape strided = conv2d(128, 28, 64, 1);
    strided.strides = {2, 2};
    EXPECT_EQ(cpu_choice(strided, lanes), "flat-pointwise align 16")
        << "1x1 stride 2: its subsampled plane, flat";
    strided.pad_begin = {1, 1};
    EXPECT_EQ(cpu_choice(strided, lanes), "direct") << "a padded 1x1 is not pointwise";
  }
  ConvShape one_d{{1, 16, 40}, {3}, {1}, {1}, {1}, {1}, 1, 4, 16};
  EXPECT_EQ(cpu_choice(one_d, 8), "direct") << "flat forms are 2-D";
}

// A stem over an image's 3 channels (27 terms per output) with rows of whole
// 16-lane vectors is computed by rows, its output written in place; with 8
// lanes, a deeper reduction (a 7x7 stem's 147 terms, 16 channels' 144) or
// ragged rows it keeps the flat form.
TEST(CpuLayouts, ShallowReductionsOverRowsOfWholeVectorsAreDirect) {
  for (int lanes : {8, 16}) {
    SCOPED_TRACE(lanes);
    ConvShape stem = conv2d(32, 112, 112, 3, 1, 3);
    stem.strides = {2, 2};
    EXPECT_EQ(cpu_choice(stem, lanes), lanes == 16 ? "direct" : "flat align 48");
    EXPECT_EQ(cpu_choice(conv2d(64, 112, 112, 7, 1, 3), lanes), "flat align 48") << "147 terms";
    EXPECT_EQ(cpu_choice(conv2d(32, 112, 112, 3, 1, 16), lanes), "flat align 48") << "144 terms";
    EXPECT_EQ(cpu_choice(conv2d(64, 111, 111, 3, 1, 3), lanes), "flat align 48") << "ragged rows";
    EXPECT_EQ(cpu_choice(conv2d(32, 48, 48, 3, 1, 3), lanes), "flat align 48") << "rows of 3 vectors of 16";
  }
}

// With its weight packed channels-last, a dense conv whose flat plane would
// be mostly the taps' reach is computed over its positions, the output
// channels in the lanes; its positions are padded to rows of 8 unless 6, 7
// or 8 divide them. A grouped conv with several channels per group, a whole
// number of vectors of them, is too (its vectors are a group's channels). A
// wide plane, too few channels or no packed weight keep the other forms.
TEST(CpuLayouts, SmallPlanesWithAPackedWeightAreChannelsLast) {
  for (int lanes : {8, 16}) {
    SCOPED_TRACE(lanes);
    // The positions in rows of 6 to 8 (AVX-512), of 4 to 6 (AVX2's 16
    // registers: 7 rows of two vectors do not fit), else padded.
    EXPECT_EQ(cpu_choice(packed(conv2d(512, 7, 7, 3)), lanes),
              lanes == 8 ? "channels-last align 6" : "channels-last align 1")
        << "49 of 64 flat positions";
    EXPECT_EQ(cpu_choice(packed(conv2d(256, 13, 13, 3)), lanes),
              lanes == 8 ? "channels-last align 6" : "channels-last align 8")
        << "169 -> 174 or 176";
    EXPECT_EQ(cpu_choice(packed(conv2d(128, 28, 28, 3)), lanes), "channels-last align 1") << "784 of 864";
    EXPECT_EQ(cpu_choice(packed(conv2d(64, 56, 56, 3)), lanes), "flat align 48") << "3136 of 3264: flat";
    EXPECT_EQ(cpu_choice(conv2d(512, 7, 7, 3), lanes), "flat align 16") << "the weight in place";
    EXPECT_EQ(cpu_choice(packed(conv2d(8, 7, 7, 3)), lanes), "flat align 16")
        << "less than two vectors of channels";
    std::string seven = lanes == 8 ? "channels-last align 6" : "channels-last align 1";
    EXPECT_EQ(cpu_choice(packed(conv2d(64, 7, 7, 3, 2, 32)), lanes), seven) << "two groups";
    EXPECT_EQ(cpu_choice(packed(conv2d(400, 7, 7, 3, 25, 16)), lanes), seven) << "a vector or two per group";
    EXPECT_EQ(cpu_choice(packed(conv2d(64, 7, 7, 3, 8, 8)), lanes), lanes == 8 ? seven : "flat align 16")
        << "8 channels per group: one AVX2 vector, half an AVX-512 one";
  }
  ConvShape strided = packed(conv2d(512, 7, 7, 3));
  strided.strides = {2, 2};  // a row of 7 outputs over 8 phase positions
  EXPECT_EQ(cpu_choice(strided, 16), "channels-last align 1");
}

// A tile of two vectors of output channels takes the rows dividing the
// positions only where its accumulators outnumber the FMAs a core overlaps
// (eight: two pipes of four cycles), else the positions are padded to the
// most rows: 784 positions in rows of 4 (8 accumulators) became 786 in rows
// of 6 with 16 registers. Not a depthwise conv's (its tile holds fewer rows)
// nor one that reads or writes channels-last activations (there 1x1 convs
// over short reductions, which the wider tile did not speed up).
TEST(CpuLayouts, ATwoVectorTileWithTooFewAccumulatorsPadsThePositions) {
  ConvShape conv = packed(conv2d(128, 28, 28, 3));
  EXPECT_EQ(cpu_choice(conv, 8, 1 << 20, 8), "channels-last align 6");
  EXPECT_EQ(cpu_choice(conv, 8, 1 << 20, 4), "channels-last align 1") << "4 rows: 8 accumulators for 4 FMAs";
  EXPECT_EQ(cpu_choice(conv, 16, 1 << 20, 8), "channels-last align 1") << "8 rows: 16 accumulators";
  EXPECT_EQ(cpu_choice(packed(conv2d(120, 14, 14, 3)), 8, 1 << 20, 8), "channels-last align 1")
      << "120 channels: 15 vectors, a tile of three";
  ConvShape region = conv;
  region.input_channels_last = true;
  EXPECT_EQ(cpu_choice(region, 8, 1 << 20, 8), "channels-last align 1");
  ConvShape depthwise = packed(conv2d(128, 28, 28, 3, 128, 1));
  depthwise.input_channels_last = true;
  EXPECT_EQ(cpu_choice(depthwise, 8, 1 << 20, 8), "channels-last align 1");
}

// A wide plane is channels-last too when its reduction is deep (32 vectors'
// worth of terms per output) and its channels-last result fits in a core's
// L2: its transposing epilogue then reads the result back from cache.
TEST(CpuLayouts, DeepReductionsWhoseResultFitsInL2AreChannelsLast) {
  for (int lanes : {8, 16}) {
    SCOPED_TRACE(lanes);
    EXPECT_EQ(cpu_choice(packed(conv2d(64, 56, 56, 3, 1, 64)), lanes), "channels-last align 1")
        << "576 terms, a result of 3136 x 64 floats in 1 MiB";
    EXPECT_EQ(cpu_choice(packed(conv2d(64, 56, 56, 3, 1, 64)), lanes, 512 << 10), "flat align 48")
        << "the same result over a 512 KiB L2";
    EXPECT_EQ(cpu_choice(packed(conv2d(192, 56, 56, 3, 1, 64)), lanes), "flat align 48")
        << "a result of 2.4 MB";
    EXPECT_EQ(cpu_choice(conv2d(64, 56, 56, 3, 1, 64), lanes), "flat align 48") << "the weight in place";
  }
  EXPECT_EQ(cpu_choice(packed(conv2d(64, 56, 56, 3, 1, 32)), 16), "flat align 48")
      << "288 terms: 18 vectors of 16";
  EXPECT_EQ(cpu_choice(packed(conv2d(64, 56, 56, 3, 1, 32)), 8), "channels-last align 1")
      << "36 vectors of 8";
}

// A strided conv whose input has at least a vector of channels per group is
// channels-last whatever its plane (flat, it would read a copy of its input
// split into stride phases); a stem over three colours stays flat.
TEST(CpuLayouts, StridedConvsOverDeepInputsAreChannelsLast) {
  auto strided = [](ConvShape c) {
    c.weight_channels_last = true;
    c.strides = {2, 2};
    return c;
  };
  EXPECT_EQ(cpu_choice(strided(conv2d(128, 28, 28, 3, 1, 64)), 16), "channels-last align 1");
  EXPECT_EQ(cpu_choice(strided(conv2d(32, 56, 56, 3, 2, 16)), 16), "channels-last align 1");
  EXPECT_EQ(cpu_choice(strided(conv2d(64, 112, 112, 7, 1, 3)), 16), "flat align 48");
  EXPECT_EQ(cpu_choice(strided(conv2d(128, 28, 28, 3, 1, 8)), 16), "flat align 48") << "8 input channels";
  EXPECT_EQ(cpu_choice(strided(conv2d(128, 28, 28, 3, 1, 8)), 8), "channels-last align 1");
}

TEST(CpuLayouts, TheFlatAlignmentIsWholeVectorsOfTheTarget) {
  EXPECT_EQ(cpu_choice(conv2d(64, 14, 14, 3), 4), "flat align 16");
  EXPECT_EQ(cpu_choice(conv2d(64, 14, 14, 3), 32), "flat align 32");
  EXPECT_EQ(cpu_choice(conv2d(64, 56, 56, 3), 32), "flat align 96");
}

lower::LayoutChoices always(ConvLayout layout) {
  return {[layout](const ConvShape&) { return layout; }};
}

// The same conv in every form lowering offers, each against the reference:
// what a tuner or a GPU target can ask for instead of the CPU default.
TEST(LayoutChoicesLowering, EveryFormOfAConvMatchesTheReference) {
  vector<Arg> args = {f32_arg({1, 3, 9, 10}), f32_arg({16, 3, 3, 3}), f32_arg({16})};
  graph::Attrs pads = attrs(kv("pads", ints({1, 1, 1, 1})));
  LoweredNode direct = check_op("Conv", "c", args, pads, 1, 1e-5, {});
  EXPECT_EQ(block_shapes(direct.func), (vector<std::string>{"c_pad_1: S S S S", "c: S S S S R R R", "out0: S S S S"}));
  LoweredNode flat16 = check_op("Conv", "c", args, pads, 1, 1e-5, always({ConvForm::kFlat, 16}));
  EXPECT_NE(flat16.text().find("alloc c: f32[1, 16, 112]"), std::string::npos)
      << "9 rows of 12 re-laid positions -> 112:\n" << flat16.text();
  LoweredNode flat5 = check_op("Conv", "c", args, pads, 1, 1e-5, always({ConvForm::kFlat, 5}));
  EXPECT_NE(flat5.text().find("alloc c: f32[1, 16, 110]"), std::string::npos) << flat5.text();
  vector<Arg> pointwise = {f32_arg({1, 5, 7, 7}), f32_arg({3, 5, 1, 1})};
  LoweredNode p32 = check_op("Conv", "p", pointwise, {}, 1, 1e-5, always({ConvForm::kFlatPointwise, 32}));
  EXPECT_EQ(block_shapes(p32.func),
            (vector<std::string>{"p: S S S R", "p_tail_input: S S S", "p_tail: S S S R", "out0: S S S",
                                 "out0_tail: S S S"}));
  EXPECT_NE(p32.text().find("alloc p_tail: f32[1, 3, 17]"), std::string::npos) << p32.text();
  check_op("Conv", "p", pointwise, {}, 1, 1e-5, {});
  // Stride 2 over a 9x11 plane: a 5x6 output, its 30 positions copied out of
  // X once (even rows, even columns), 16 of them one block, 14 the tail.
  vector<Arg> strided = {f32_arg({1, 5, 9, 11}), f32_arg({3, 5, 1, 1}), f32_arg({3})};
  LoweredNode s16 = check_op("Conv", "s", strided, attrs(kv("strides", ints({2, 2}))), 1, 1e-5,
                             always({ConvForm::kFlatPointwise, 16}));
  EXPECT_EQ(block_shapes(s16.func),
            (vector<std::string>{"s_subsample: S S S S", "s: S S S R", "s_tail_input: S S S",
                                 "s_tail: S S S R", "out0: S S S", "out0_tail: S S S"}));
  EXPECT_NE(s16.text().find("in0[v0, v1, v2 * 2, v3 * 2]"), std::string::npos) << s16.text();
}

// A flat pointwise conv's output block (here its bias) iterates the flat
// plane like the matmul, so the default schedule runs it inside the matmul's
// tile (the same parallel loop, on the tile's columns) instead of a second
// pass that reads the plane back; the result is unchanged.
TEST(LayoutChoicesLowering, AFlatPointwiseConvsEpilogueJoinsItsTile) {
  vector<Arg> args = {f32_arg({1, 8, 4, 12}), f32_arg({12, 8, 1, 1}), f32_arg({12})};  // a plane of 48
  LoweredNode p = check_op("Conv", "p", args, {}, 1, 1e-5, always({ConvForm::kFlatPointwise, 16}));
  EXPECT_NE(p.text().find("out0[v0_1, v1_1, v2_1 // 12, v2_1 % 12] = p[v0_1, v1_1, v2_1] + in2[v1_1]"), std::string::npos)
      << p.text();
  sched::Schedule sch(p.func);
  sched::CpuScheduleOptions eager;
  eager.min_parallel_cycles = 1;
  sched::apply_default_cpu_schedule(sch, eager);
  std::vector<tir::Stmt> conv = sched::loops_above(sch.func(), sched::find_block(sch.func(), "p").get());
  std::vector<tir::Stmt> out = sched::loops_above(sch.func(), sched::find_block(sch.func(), "out0").get());
  ASSERT_FALSE(conv.empty());
  ASSERT_GE(out.size(), 2u) << sch.func();
  EXPECT_TRUE(out[0].same_as(conv[0])) << sch.func();
  EXPECT_EQ(out[0].as<tir::ForNode>()->for_kind, tir::ForKind::kParallel) << sch.func();
  EXPECT_EQ(out.back().as<tir::ForNode>()->for_kind, tir::ForKind::kVectorized) << sch.func();
  std::vector<Tensor> got = tir::interpret(sch.func(), p.values);
  std::vector<Tensor> want = tir::interpret(p.func, p.values);
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], want[0], 1e-6, "scheduled vs lowered");
}

// Aligned to 48, a plane of 64 leaves 16 columns, the narrowest flat tile:
// they are a block like the head (the same reduction over X in place); a
// plane of 52 leaves 4, matrix-vector products over a copy of their columns
// with the channels innermost. Both match the reference (check_op).
TEST(LayoutChoicesLowering, AFlatPointwiseTailOfWholeTilesIsComputedLikeTheHead) {
  vector<Arg> tiles = {f32_arg({1, 8, 4, 16}), f32_arg({12, 8, 1, 1})};
  LoweredNode whole = check_op("Conv", "p", tiles, {}, 1, 1e-5, always({ConvForm::kFlatPointwise, 48}));
  EXPECT_NE(whole.text().find("p_tail[v0_1, v1_1, v2_1] = p_tail[v0_1, v1_1, v2_1] + in0[v0_1, r0_1, (v2_1 + "
                              "48) // 16, (v2_1 + 48) % 16]"),
            std::string::npos)
      << whole.text();
  EXPECT_EQ(whole.text().find("p_tail_input"), std::string::npos) << whole.text();
  vector<Arg> few = {f32_arg({1, 8, 4, 13}), f32_arg({12, 8, 1, 1})};
  LoweredNode products = check_op("Conv", "p", few, {}, 1, 1e-5, always({ConvForm::kFlatPointwise, 48}));
  EXPECT_NE(products.text().find("p_tail_input"), std::string::npos) << products.text();
}

TEST(LayoutChoicesLowering, AChoiceThatDoesNotFitTheConvIsAnInternalError) {
  vector<Arg> three_by_three = {f32_arg({1, 2, 6, 6}), f32_arg({4, 2, 3, 3})};
  EXPECT_THROW(LoweredNode("Conv", "c", three_by_three, {}, 1, always({ConvForm::kFlatPointwise, 16})),
               InternalError);
  vector<Arg> one_d = {f32_arg({1, 2, 20}), f32_arg({4, 2, 3})};
  EXPECT_THROW(LoweredNode("Conv", "c", one_d, {}, 1, always({ConvForm::kFlat, 16})), InternalError);
  EXPECT_THROW(LoweredNode("Conv", "c", three_by_three, {}, 1, always({ConvForm::kFlat, 0})), InternalError);
  EXPECT_THROW(LoweredNode("Conv", "c", three_by_three, {}, 1, always({ConvForm::kChannelsLast, 1})),
               InternalError)
      << "channels-last needs the packed weight";
  vector<Arg> tiny = {f32_arg({1, 2, 2, 2}), f32_arg({4, 2, 1, 1})};
  EXPECT_THROW(LoweredNode("Conv", "c", tiny, {}, 1, always({ConvForm::kFlatPointwise, 16})), InternalError)
      << "a plane of 4 has no whole tile of 16";
}

TEST(LayoutChoicesPipeline, TheScheduleDecidesAndOtherTargetsGetDirectForms) {
  ConvShape wide = conv2d(64, 56, 56, 3);
  driver::CompileOptions cpu;
  EXPECT_EQ(driver::layout_choices(cpu).conv_layout(wide).form, ConvForm::kFlat);
  driver::CompileOptions unscheduled;
  unscheduled.schedule = driver::ScheduleKind::kNone;
  EXPECT_EQ(driver::layout_choices(unscheduled).conv_layout(wide).form, ConvForm::kDirect);
  driver::CompileOptions gpu;
  gpu.target = codegen::parse_target("cuda");
  EXPECT_EQ(driver::layout_choices(gpu).conv_layout(wide).form, ConvForm::kDirect);
}

}  // namespace
}  // namespace tessel::lower_nn_test
