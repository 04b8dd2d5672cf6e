// Block classification of lowered graph ops for the default CPU schedule:
// which loop a register tile vectorizes and which it unrolls.
#include "schedules/defaults/block_kind.h"
#include "src/lower/compute.h"
#include "tests/unit/lower_nn_test_util.h"

namespace tessel::lower_nn_test {
namespace {

using sched::BlockKind;

// A 1x1 convolution keeps its taps (of extent 1), so it is a conv: the
// vector runs along a row of the input, the unrolled rows are output channels.
TEST(SchedBlockKind, OneByOneConvTilesOutputChannelsTimesARow) {
  LoweredNode n = check_op("Conv", "c", {f32_arg({1, 8, 5, 48}), f32_arg({6, 8, 1, 1})});  // rows of whole vectors
  sched::BlockInfo info = sched::classify_block(n.func, "c");
  EXPECT_EQ(info.kind, BlockKind::kConv) << n.text();
  EXPECT_EQ(info.vector_loop, 3);  // w
  EXPECT_EQ(info.unroll_loop, 1);  // co
}

// An input that is a Concat inlined into the conv: a select between two loads.
TEST(SchedBlockKind, ContractionOverAnInlinedConcatIsTiled) {
  // The concat as the tensor expression layer inlines it, built directly.
  lower::LowerContext ctx("concat_conv");
  lower::TensorExpr a = ctx.input("a", DType::kF32, {1, 4, 5, 7}), b = ctx.input("b", DType::kF32, {1, 4, 5, 7});
  lower::TensorExpr w = ctx.input("w", DType::kF32, {6, 8});
  lower::TensorExpr y = ctx.reduce("c", {1, 6, 5, 7}, DType::kF32, {8}, lower::Combiner::kSum,
                                   [&](const std::vector<tir::Expr>& s, const std::vector<tir::Expr>& r) {
                                     tir::Expr x = tir::select(r[0] < tir::int_imm(4), a.at({s[0], r[0], s[2], s[3]}),
                                                               b.at({s[0], r[0] - 4, s[2], s[3]}));
                                     return x * w.at({s[1], r[0]});
                                   });
  ctx.output("y", y);
  tir::PrimFunc f = ctx.finish();
  sched::BlockInfo info = sched::classify_block(f, "c");
  EXPECT_EQ(info.kind, BlockKind::kMatmul) << tir::to_string(f);  // no window: channels times a row
  EXPECT_EQ(info.vector_loop, 3);
  EXPECT_EQ(info.unroll_loop, 1);  // the output channels, which only w reads
}

TEST(SchedBlockKind, MatmulTilesRowsOfATimesColumnsOfB) {
  LoweredNode n = check_op("MatMul", "mm", {f32_arg({6, 4}), f32_arg({4, 9})});
  sched::BlockInfo info = sched::classify_block(n.func, "mm");
  EXPECT_EQ(info.kind, BlockKind::kMatmul) << n.text();
  EXPECT_EQ(info.vector_loop, 1);  // the columns of B
  EXPECT_EQ(info.unroll_loop, 0);  // the rows of A
}

TEST(SchedBlockKind, ThreeByThreeConvReadsARelaidInputAndTilesOutputChannels) {
  LoweredNode n = check_op("Conv", "c", {f32_arg({1, 4, 6, 6}), f32_arg({8, 4, 3, 3})},
                           attrs(kv("pads", ints({1, 1, 1, 1})), kv("strides", ints({2, 2}))));
  sched::BlockInfo info = sched::classify_block(n.func, "c");
  EXPECT_EQ(info.kind, BlockKind::kConv) << n.text();
  EXPECT_EQ(info.vector_loop, 2);  // short rows: the flat position (lower_flat_conv)
  EXPECT_EQ(info.unroll_loop, 1);
}

}  // namespace
}  // namespace tessel::lower_nn_test
