// The default CPU schedule keeps memory in order where a loop is vectorized:
// an elementwise block fuses only the trailing loops whose fused index reads
// and writes in order; a matrix-vector product whose weight rows run along
// its reduction is summed by lanes along them; a depthwise conv accumulates
// several vectors in a local tile. Each scheduled function still computes what
// the lowered one does.
#include "src/lower/compute.h"
#include "tests/unit/sched_defaults_util.h"

namespace tessel::sched_workloads {
namespace {

// A squeeze-and-excitation gate, Y[c, h, w] = X[c, h, w] * G[c], on 7 x 7
// planes: fused with the channel loop, the plane's index would read G (and
// X's planes) with gathers. The plane of 49 is one vectorized loop, the
// channels outside it.
TEST(SchedDefaultsOrder, AGatePerChannelKeepsTheChannelLoopOutsideThePlane) {
  lower::LowerContext ctx("gate");
  lower::TensorExpr x = ctx.input("X", DType::kF32, {1, 40, 7, 7});
  lower::TensorExpr g = ctx.input("G", DType::kF32, {1, 40, 1, 1});
  lower::TensorExpr y = ctx.compute("Y", {1, 40, 7, 7}, DType::kF32, [&](const std::vector<tir::Expr>& i) {
    return x.at(i) * g.at({i[0], i[1], tir::int_imm(0), tir::int_imm(0)});
  });
  ctx.output("Y", y);
  tir::PrimFunc f = ctx.finish();
  Schedule sch(f);
  apply_default_cpu_schedule(sch, eager_parallel());
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "Y");
  ASSERT_EQ(loops.size(), 2u) << sch.func();
  EXPECT_EQ(extent(loops[0]), 40) << sch.func();
  EXPECT_EQ(loops[1]->for_kind, tir::ForKind::kVectorized) << sch.func();
  EXPECT_EQ(extent(loops[1]), 49) << sch.func();
  EXPECT_EQ(loops[1]->annotations.count(tir::kMaskedTail), 1u) << sch.func();  // 3 vectors and a masked one
  EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
}

// Y = X + 1 on [1, 4, 3, 5]: every access is in order whatever is fused, so
// the whole block (60 elements, under four vectors) is one vectorized loop.
TEST(SchedDefaultsOrder, AnInOrderBlockFusesItsShortPlanes) {
  lower::LowerContext ctx("add_one");
  lower::TensorExpr x = ctx.input("X", DType::kF32, {1, 4, 3, 5});
  lower::TensorExpr y = ctx.compute("Y", {1, 4, 3, 5}, DType::kF32, [&](const std::vector<tir::Expr>& i) {
    return x.at(i) + tir::float_imm(1.0, DType::kF32);
  });
  ctx.output("Y", y);
  tir::PrimFunc f = ctx.finish();
  Schedule sch(f);
  apply_default_cpu_schedule(sch, eager_parallel());
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "Y");
  ASSERT_EQ(loops.size(), 1u) << sch.func();
  EXPECT_EQ(loops[0]->for_kind, tir::ForKind::kVectorized) << sch.func();
  EXPECT_EQ(extent(loops[0]), 60) << sch.func();
  EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
}

// A 1x1 conv over a 1x1 plane (an SE block's excitation), Y[m] = sum over k
// of W[m, k] * X[k] in NCHW's unit dimensions: vectorized over m, each lane
// would read a row of W 48 floats from the next. It is summed by lanes along
// W's rows instead: 48 = 3 steps of 16 lanes, then the lanes of each output.
// The outputs share X: four rows of W are summed per step, X's vector
// loaded once for the four.
TEST(SchedDefaultsOrder, AMatrixVectorProductAlongTheWeightRowsIsSummedByLanes) {
  lower::LowerContext ctx("excite");
  lower::TensorExpr x = ctx.input("X", DType::kF32, {1, 48, 1, 1});
  lower::TensorExpr w = ctx.input("W", DType::kF32, {64, 48, 1, 1});
  tir::Expr zero = tir::int_imm(0);
  lower::TensorExpr y = ctx.reduce("Y", {1, 64, 1, 1}, DType::kF32, {48}, lower::Combiner::kSum,
                                   [&](const std::vector<tir::Expr>& s, const std::vector<tir::Expr>& r) {
                                     return x.at({s[0], r[0], s[2], s[3]}) * w.at({s[1], r[0], zero, zero});
                                   });
  ctx.output("Y", y);
  tir::PrimFunc f = ctx.finish();
  Schedule sch(f);
  apply_default_cpu_schedule(sch, CpuScheduleOptions{});
  std::vector<const tir::ForNode*> rf = loops_of(sch.func(), "Y_rf");  // [n, m / 4, k / 16, h, w, 4, 16]
  ASSERT_EQ(rf.size(), 7u) << sch.func();
  EXPECT_EQ(extent(rf[1]), 16) << sch.func();
  EXPECT_EQ(extent(rf[2]), 3) << sch.func();
  EXPECT_EQ(rf[5]->for_kind, tir::ForKind::kUnrolled) << sch.func();
  EXPECT_EQ(extent(rf[5]), 4) << sch.func();
  EXPECT_EQ(rf.back()->for_kind, tir::ForKind::kVectorized) << sch.func();
  EXPECT_EQ(extent(rf.back()), 16) << sch.func();
  // The lanes of each group of four are summed inside the group's loop.
  std::vector<const tir::ForNode*> sum = loops_of(sch.func(), "Y");
  ASSERT_GE(sum.size(), 2u) << sch.func();
  EXPECT_EQ(sum[1], rf[1]) << sch.func();
  EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
}

// The last columns of a pointwise conv, fewer than a vector, as dot products
// along the channels: Y[m, p] = sum over k of Xt[p, k] * W[m, k] for the 9
// positions of a 13 x 13 plane past 160. The positions share W's row: all
// nine are summed per step, one load of W for nine FMAs, where a position
// at a time loaded both operands per FMA.
TEST(SchedDefaultsOrder, DotProductsSharingARowAreSummedTogether) {
  lower::LowerContext ctx("tail");
  lower::TensorExpr xt = ctx.input("Xt", DType::kF32, {1, 9, 64});
  lower::TensorExpr w = ctx.input("W", DType::kF32, {24, 64});
  lower::TensorExpr y = ctx.reduce("Y", {1, 24, 9}, DType::kF32, {64}, lower::Combiner::kSum,
                                   [&](const std::vector<tir::Expr>& s, const std::vector<tir::Expr>& r) {
                                     return xt.at({s[0], s[2], r[0]}) * w.at({s[1], r[0]});
                                   });
  ctx.output("Y", y);
  tir::PrimFunc f = ctx.finish();
  Schedule sch(f);
  apply_default_cpu_schedule(sch, eager_parallel());
  std::vector<const tir::ForNode*> rf = loops_of(sch.func(), "Y_rf");  // [n * m, p / 9, k / 16, 9, 16]
  ASSERT_EQ(rf.size(), 5u) << sch.func();
  EXPECT_EQ(extent(rf[2]), 4) << sch.func();
  EXPECT_EQ(rf[3]->for_kind, tir::ForKind::kUnrolled) << sch.func();
  EXPECT_EQ(extent(rf[3]), 9) << sch.func();
  EXPECT_EQ(rf[4]->for_kind, tir::ForKind::kVectorized) << sch.func();
  EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
}

// A padded depthwise conv on rows of 64 (four vectors of 16 lanes): its tile
// is the four vectors, independent accumulators for the taps' FMAs, held in a
// local buffer and written to the output once per tile.
TEST(SchedDefaultsOrder, ADepthwiseTileIsSeveralVectorsInALocalBuffer) {
  Shapes wide;
  wide.W = 64;
  tir::PrimFunc f = lower_workload(Workload::kDepthwise, wide);
  Schedule sch(f);
  apply_default_cpu_schedule(sch, eager_parallel());
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "dw");
  ASSERT_GE(loops.size(), 2u) << sch.func();
  EXPECT_EQ(loops.back()->for_kind, tir::ForKind::kVectorized) << sch.func();
  EXPECT_EQ(extent(loops.back()), 64) << sch.func();
  EXPECT_NE(to_string(sch.func()).find("alloc dw_out_local: f32["), std::string::npos) << sch.func();
  EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
  Shapes narrow;
  narrow.W = 40;  // 40 = 2.5 vectors: the tile stays the row
  Schedule row = scheduled_workload(Workload::kDepthwise, eager_parallel(), narrow);
  loops = loops_of(row.func(), "dw");
  ASSERT_GE(loops.size(), 2u) << row.func();
  EXPECT_EQ(extent(loops.back()), 40) << row.func();
  // Rows of 112 (seven vectors): with 32 vector registers, the nine taps'
  // weights and seven accumulators fit, so the tile is the whole row; with
  // 16 registers, one vector (no wider part of at most five divides 112).
  Shapes seven;
  seven.W = 112;
  for (auto [lanes, tile] : {std::pair<int, int64_t>{16, 112}, std::pair<int, int64_t>{8, 16}}) {
    tir::PrimFunc g = lower_workload(Workload::kDepthwise, seven);
    Schedule sch7(g);
    CpuScheduleOptions options = eager_parallel();
    options.vector_lanes = lanes;
    apply_default_cpu_schedule(sch7, options);
    loops = loops_of(sch7.func(), "dw");
    ASSERT_GE(loops.size(), 2u) << sch7.func();
    EXPECT_EQ(extent(loops.back()), tile) << lanes << " lanes: " << sch7.func();
    EXPECT_EQ(check_against(reference_of(g), sch7.func(), false), "");
  }
}

// A pointwise conv over a flat plane of 169 positions: a head of 168 (whole
// tiles) and a tail of one, then the bias and ReLU written back as 13 x 13
// planes. The epilogue reads both, cannot join the head's tiles (it reads
// their rows as planes), and belongs with the head all the same: attached
// under the tail's loops, it ran serially over the whole plane after the
// head's parallel loop.
TEST(SchedDefaultsOrder, AnEpilogueOfAHeadAndATailRunsInParallel) {
  lower::LowerContext ctx("head_tail");
  lower::TensorExpr x = ctx.input("X", DType::kF32, {1, 16, 169});
  lower::TensorExpr w = ctx.input("W", DType::kF32, {64, 16});
  auto conv = [&](const std::string& name, int64_t first, int64_t count) {
    return ctx.reduce(name, {1, 64, count}, DType::kF32, {16}, lower::Combiner::kSum,
                      [&, first](const std::vector<tir::Expr>& s, const std::vector<tir::Expr>& r) {
                        return x.at({s[0], r[0], s[2] + tir::int_imm(first)}) * w.at({s[1], r[0]});
                      });
  };
  lower::TensorExpr head = conv("head", 0, 168), tail = conv("tail", 168, 1);
  lower::TensorExpr y = ctx.compute("Y", {1, 64, 13, 13}, DType::kF32, [&](const std::vector<tir::Expr>& i) {
    tir::Expr j = i[2] * tir::int_imm(13) + i[3];
    tir::Expr v = tir::select(j < tir::int_imm(168), head.at({i[0], i[1], tir::min(j, tir::int_imm(167))}),
                              tail.at({i[0], i[1], tir::max(j - tir::int_imm(168), tir::int_imm(0))}));
    return tir::max(v, tir::float_imm(0.0, DType::kF32));
  });
  ctx.output("Y", y);
  tir::PrimFunc f = ctx.finish();
  Schedule sch(f);
  CpuScheduleOptions options = eager_parallel();
  options.num_threads = 2;
  apply_default_cpu_schedule(sch, options);
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "Y");
  EXPECT_EQ(count_kind(loops, tir::ForKind::kParallel), 1) << sch.func();
  EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
}

// A direct 3x3 conv, 8 -> 8 channels on 12 rows of 32: its input is 12 KiB,
// its weight 2.3 KiB. Where the input does not stay in L2 (16 KiB) and the
// weight does, each output row is computed for every channel tile before the
// next row: the input row is read once and serves each tile from cache. Where
// the input stays in L2 (1 MiB), the channel tiles stay outside the rows.
TEST(SchedDefaultsOrder, ADirectConvWalksItsChannelTilesInsideTheRowsWhenItsInputLeavesL2) {
  Shapes shapes;
  shapes.C = shapes.OC = 8;
  shapes.H = 12;
  for (int64_t l2 : {int64_t(16) << 10, int64_t(1) << 20}) {
    CpuScheduleOptions options = eager_parallel();
    options.vector_lanes = 8;
    options.l2_bytes = l2;
    tir::PrimFunc f = lower_workload(Workload::kConv2d, shapes);
    Schedule sch(f);
    apply_default_cpu_schedule(sch, options);
    std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "conv");
    ASSERT_GE(loops.size(), 3u) << sch.func();
    // Rows outside: the parallel loop is the 12 rows, the two tiles of 4
    // channels under it; else the parallel loop fuses the tiles and the rows.
    EXPECT_EQ(loops[0]->for_kind, tir::ForKind::kParallel) << sch.func();
    if (l2 < (int64_t(1) << 20)) {
      EXPECT_EQ(extent(loops[0]), 12) << sch.func();
      EXPECT_EQ(extent(loops[1]), 2) << sch.func();
    } else {
      EXPECT_EQ(extent(loops[0]), 24) << sch.func();
    }
    EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
  }
}

}  // namespace
}  // namespace tessel::sched_workloads
