// The default CPU schedule (schedules/defaults/cpu_defaults.h) on the schedule
// workloads, the groups of the bundled tiny CNN and of the cached real models,
// and every group of the milestone-1 ONNX conformance cases: the verifier is
// clean, interpret(scheduled) == interpret(unscheduled), the trace replays, and
// the loop structure is what the rules say.
#include <filesystem>

#include "ir/tensor/simplify.h"
#include "schedules/defaults/block_kind.h"
#include "schedules/defaults/cpu_defaults.h"
#include "src/lower/compute.h"
#include "src/tir_passes/compact_buffers.h"
#include "src/tir_passes/flatten_blocks.h"
#include "tests/unit/sched_defaults_util.h"

namespace tessel::sched_workloads {
namespace {

TEST(SchedDefaults, EveryWorkloadComputesTheReferenceAndItsTraceReplays) {
  for (Workload w : kAllWorkloads) {
    SCOPED_TRACE(workload_name(w));
    Schedule sch = scheduled_workload(w);
    EXPECT_EQ(check_against(reference(w), sch.func(), false), "") << sch.func();
    EXPECT_GT(sch.trace().size(), 0u);
    sched::Trace replayed = sched::Trace::from_json(sch.trace().to_json());
    EXPECT_EQ(replayed, sch.trace());
    Schedule fresh(lower_workload(w));
    replayed.apply(fresh);
    EXPECT_TRUE(tir::structural_equal(fresh.func(), sch.func())) << fresh.func() << "\nvs\n" << sch.func();
  }
}

TEST(SchedDefaults, BlocksAreClassifiedByStructure) {
  auto kind_of = [](Workload w, const std::string& block) {
    return sched::classify_block(lower_workload(w), block).kind;
  };
  EXPECT_EQ(kind_of(Workload::kMatmul, "mm"), sched::BlockKind::kMatmul);
  EXPECT_EQ(kind_of(Workload::kConv2d, "conv"), sched::BlockKind::kConv);
  EXPECT_EQ(kind_of(Workload::kDepthwise, "dw"), sched::BlockKind::kDepthwise);
  EXPECT_EQ(kind_of(Workload::kReduceSum, "rsum"), sched::BlockKind::kReduction);
  EXPECT_EQ(kind_of(Workload::kSoftmax, "sm_max"), sched::BlockKind::kReduction);
  EXPECT_EQ(kind_of(Workload::kSoftmax, "sm_out"), sched::BlockKind::kElementwise);
  EXPECT_EQ(kind_of(Workload::kFusedConv, "relu_out"), sched::BlockKind::kElementwise);
  EXPECT_EQ(kind_of(Workload::kFusedConv, "no_such_block"), sched::BlockKind::kOther);
}

TEST(SchedDefaults, MatmulIsARegisterTileWithAHoistedInit) {
  Schedule sch = scheduled_workload(Workload::kMatmul);  // 32 x 16, K = 24
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "mm");
  ASSERT_EQ(loops.size(), 5u) << sch.func();  // io, jo, k, ii, ji
  EXPECT_EQ(loops.front()->for_kind, tir::ForKind::kParallel);
  EXPECT_EQ(count_kind(loops, tir::ForKind::kParallel), 1);
  EXPECT_EQ(loops.back()->for_kind, tir::ForKind::kVectorized);
  EXPECT_EQ(extent(loops.back()), 16);
  EXPECT_EQ(loops[3]->for_kind, tir::ForKind::kUnrolled);
  EXPECT_EQ(extent(loops[3]), 8);  // 8 rows of one 16-lane vector
  EXPECT_EQ(extent(loops[2]), 24);  // the reduction between the outer loops and the tile
  std::vector<const tir::ForNode*> init = loops_of(sch.func(), "mm_init");
  ASSERT_EQ(init.size(), 4u) << sch.func();  // above k: io, jo, then its own ii, ji
  EXPECT_EQ(init[0], loops[0]);
  EXPECT_EQ(init.back()->for_kind, tir::ForKind::kVectorized);
  tir::Stmt mm = sched::find_block(sch.func(), "mm");
  EXPECT_FALSE(mm.as<tir::BlockNode>()->init.defined());
}

TEST(SchedDefaults, ConvTilesOutputChannelsTimesWidth) {
  for (Workload w : {Workload::kConv2d, Workload::kFusedConv}) {
    SCOPED_TRACE(workload_name(w));
    Shapes wide;
    wide.W = 40;  // output rows of 40: not short, tiled by row (short rows: ShortRowsAreTiledFlat)
    Schedule sch = scheduled_workload(w, eager_parallel(), wide);  // OC 8, H = 10, W = 40, C 4, 3x3
    std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "conv");
    // (n, co_o, h) fused and parallel, w_o, ci, kh, kw, co_i unrolled, w_i vectorized.
    // 40 is no multiple of 16 lanes: the row is one vector part with a tail, 2 channels.
    ASSERT_EQ(loops.size(), 7u) << sch.func();
    EXPECT_EQ(loops[0]->for_kind, tir::ForKind::kParallel);
    EXPECT_EQ(extent(loops[0]), 40);
    EXPECT_EQ(count_kind(loops, tir::ForKind::kParallel), 1);
    EXPECT_EQ(loops[5]->for_kind, tir::ForKind::kUnrolled);
    EXPECT_EQ(extent(loops[5]), 2);
    EXPECT_EQ(loops[6]->for_kind, tir::ForKind::kVectorized);
    EXPECT_EQ(extent(loops[6]), 40);
    EXPECT_TRUE(sched::find_block(sch.func(), "conv_init").defined());
    if (w != Workload::kFusedConv) continue;
    // The epilogue runs inside the conv's tile loop (w_o), vectorized.
    std::vector<const tir::ForNode*> epi = loops_of(sch.func(), "relu_out");
    ASSERT_GE(epi.size(), 3u) << sch.func();
    EXPECT_EQ(epi[0], loops[0]);
    EXPECT_EQ(epi[1], loops[1]);
    EXPECT_EQ(epi.back()->for_kind, tir::ForKind::kVectorized);
    EXPECT_EQ(count_kind(epi, tir::ForKind::kParallel), 1);
  }
}

// The parallel loop fuses the fewest outer loops that give each thread 4
// chunks: one thread needs the 4 channel tiles alone, two also the rows.
// Either way the epilogue's conv buffer compacts to one tile (fused with the
// rows, the parallel loop indexes by // and %: compact_buffers sees each
// iteration's (channel tile, row) as disjoint from the others').
TEST(SchedDefaults, TheParallelLoopFusesTheFewestLoopsThatFillTheThreads) {
  Shapes wide;
  wide.W = 40;
  for (int threads : {1, 2}) {
    CpuScheduleOptions options = eager_parallel();
    options.num_threads = threads;
    Schedule sch = scheduled_workload(Workload::kFusedConv, options, wide);
    std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "conv");
    ASSERT_FALSE(loops.empty());
    EXPECT_EQ(loops[0]->for_kind, tir::ForKind::kParallel) << sch.func();
    EXPECT_EQ(extent(loops[0]), threads == 1 ? 4 : 40) << sch.func();
    std::string flat = tir::to_string(tir_passes::compact_buffers(tir_passes::flatten_blocks(sch.func())));
    EXPECT_NE(flat.find("alloc conv: f32[1, 2, 1, 40]"), std::string::npos) << flat;
  }
}

// Rows of 10 are computed flat (16 rows of 12 padded columns: 128 positions):
// whole 16-lane vectors, 8 output channels.
TEST(SchedDefaults, ShortRowsAreTiledFlat) {
  Shapes narrow;
  narrow.W = 10;
  Schedule sch =
      scheduled_workload(Workload::kConv2d, eager_parallel(), narrow);  // OC 8, H = W = 10, C 4, 3x3
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "conv");
  // The flat plane (10 rows of 12, padded to 128) tiled as a matmul's columns:
  // 8 channels are not a multiple of 6, so 4 rows of two vectors (16 lanes).
  // (n, co_o) fused and parallel, f_o, ci, kh, kw, co_i unrolled, f_i vectorized.
  ASSERT_EQ(loops.size(), 7u) << sch.func();
  EXPECT_EQ(loops[0]->for_kind, tir::ForKind::kParallel);
  EXPECT_EQ(extent(loops[0]), 2);
  EXPECT_EQ(extent(loops[1]), 4);
  EXPECT_EQ(loops[5]->for_kind, tir::ForKind::kUnrolled);
  EXPECT_EQ(extent(loops[5]), 4);
  EXPECT_EQ(loops[6]->for_kind, tir::ForKind::kVectorized);
  EXPECT_EQ(extent(loops[6]), 32);
  // Its epilogue reads the flat rows back as a plane and stays outside the
  // tile, so the tile accumulates in a local buffer written back once.
  EXPECT_NE(to_string(sch.func()).find("_local: f32["), std::string::npos) << sch.func();
  // The epilogue reads the flat rows (12 apart) back as rows of 10, under
  // the parallel loop of channel tiles, after the tile loop has written
  // their whole flat rows (still in cache; the flat buffer compacts to a
  // channel tile's rows): 4 channels, 10 rows, each row one masked vector.
  std::vector<const tir::ForNode*> out = loops_of(sch.func(), "conv_out");
  ASSERT_EQ(out.size(), 4u) << sch.func();
  EXPECT_EQ(out[0], loops[0]);
  EXPECT_EQ(extent(out[1]), 4);
  EXPECT_EQ(extent(out[2]), 10);
  EXPECT_EQ(out[3]->for_kind, tir::ForKind::kVectorized);
  EXPECT_EQ(extent(out[3]), 10);
  EXPECT_EQ(out[3]->annotations.count(tir::kMaskedTail), 1u);
  std::string flat = tir::to_string(tir_passes::compact_buffers(tir_passes::flatten_blocks(sch.func())));
  EXPECT_NE(flat.find("alloc conv: f32[1, 4, 128]"), std::string::npos) << flat;
}

// Y[n, c, h, w] = X[n, h * W + w, c] * 2 (a channels-last conv's result read
// back per channel plane), scheduled by default: the row w vectorized (each
// vector a gather). Over a plane too large for its gathered lines to stay in
// L1 from one channel to the next, the fused outer loop walks the channels
// fastest, so that consecutive gathers read the same lines of X's row h; a
// small plane keeps whole channel planes per iteration.
void expect_channel_order(int64_t H, int64_t W, bool channels_inside) {
  SCOPED_TRACE(std::to_string(H) + " x " + std::to_string(W));
  lower::LowerContext ctx("transposed");
  lower::TensorExpr x = ctx.input("X", DType::kF32, {1, H * W, 32});
  lower::TensorExpr y = ctx.compute("Y", {1, 32, H, W}, DType::kF32, [&](const std::vector<tir::Expr>& i) {
    return x.at({i[0], i[2] * tir::int_imm(W) + i[3], i[1]}) * tir::float_imm(2);
  });
  ctx.output("Y", y);
  Schedule sch(ctx.finish());
  CpuScheduleOptions options = eager_parallel();
  options.num_threads = 2;
  apply_default_cpu_schedule(sch, options);
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "Y");
  ASSERT_EQ(loops.size(), 2u) << sch.func();
  EXPECT_EQ(loops[1]->for_kind, tir::ForKind::kVectorized);
  EXPECT_EQ(extent(loops[1]), W);
  tir::Stmt block_stmt = sched::find_block(sch.func(), "Y");
  const auto& block = *block_stmt.as<tir::BlockNode>();
  tir::VarMap second{{loops[0]->var.get(), tir::int_imm(1)}, {loops[1]->var.get(), tir::int_imm(0)}};
  auto at_second = [&](size_t v) { return tir::simplify(tir::substitute(block.iter_values[v], second)); };
  EXPECT_TRUE(tir::is_const_int(at_second(1), channels_inside ? 1 : 0)) << sch.func();  // c
  EXPECT_TRUE(tir::is_const_int(at_second(2), channels_inside ? 0 : 1)) << sch.func();  // h
}

TEST(SchedDefaults, ATransposingReadOfALargePlaneWalksTheChannelsInsideEachRow) {
  expect_channel_order(20, 40, true);  // rows of whole vectors and a tail
  expect_channel_order(50, 12, true);  // short rows: one masked vector each
  expect_channel_order(7, 7, false);
}

TEST(SchedDefaults, DepthwiseVectorizesWidthAndParallelizesChannels) {
  Shapes wide;
  wide.W = 40;
  Schedule sch = scheduled_workload(Workload::kDepthwise, eager_parallel(), wide);
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "dw");
  ASSERT_GE(loops.size(), 2u);
  EXPECT_EQ(loops.front()->for_kind, tir::ForKind::kParallel);
  EXPECT_EQ(extent(loops.front()), 4);  // n, c fused: one channel's plane per iteration
  EXPECT_EQ(loops.back()->for_kind, tir::ForKind::kVectorized);
  EXPECT_EQ(extent(loops.back()), 40);
  EXPECT_EQ(count_kind(loops, tir::ForKind::kUnrolled), 0);
  // The zero-padded copy of the input is made per channel, inside that loop,
  // its row vectorized: the plane stays in cache for the taps that read it.
  std::vector<const tir::ForNode*> pad = loops_of(sch.func(), "dw_pad_1");
  ASSERT_GE(pad.size(), 2u) << sch.func();
  EXPECT_EQ(pad.front(), loops.front()) << sch.func();
  EXPECT_EQ(pad.back()->for_kind, tir::ForKind::kVectorized) << sch.func();
}

// A row of 32 (two vectors of 16 lanes) is summed by lanes: the reduction
// split by 16 and factored out, 16 partial sums vectorized (rsum_rf, with its
// init), then the lanes summed (rsum). Too little work for threads.
TEST(SchedDefaults, RowReductionsAreSummedByLanes) {
  Schedule small = scheduled_workload(Workload::kReduceSum, CpuScheduleOptions{});
  std::vector<const tir::ForNode*> rf = loops_of(small.func(), "rsum_rf");
  ASSERT_EQ(rf.size(), 3u) << small.func();  // row, k outer, lane
  EXPECT_EQ(extent(rf[1]), 2);
  EXPECT_EQ(rf[2]->for_kind, tir::ForKind::kVectorized);
  EXPECT_EQ(extent(rf[2]), 16);
  EXPECT_TRUE(sched::find_block(small.func(), "rsum_rf_init").defined()) << small.func();
  std::vector<const tir::ForNode*> lanes = loops_of(small.func(), "rsum");
  ASSERT_FALSE(lanes.empty());
  EXPECT_EQ(extent(lanes.back()), 16);
  EXPECT_EQ(count_kind(rf, tir::ForKind::kParallel), 0) << small.func();
  EXPECT_EQ(check_against(reference(Workload::kReduceSum), small.func(), false), "");
}

// A pooling over the last two axes ([2, 3, 6, 8] -> [2, 3], 48 values per
// row, three vectors of 16 lanes) is a row reduction too: the two reduction
// loops fused, split by the lanes, factored out and vectorized. Over the
// middle axis (the rows it reads are 8 apart) it is not.
TEST(SchedDefaults, PoolingOverTheLastAxesIsSummedByLanes) {
  for (bool trailing : {true, false}) {
    SCOPED_TRACE(trailing ? "over the last two axes" : "over the third axis");
    lower::LowerContext ctx("pool");
    lower::TensorExpr x = ctx.input("X", DType::kF32, {2, 3, 6, 8});
    std::vector<int64_t> shape = trailing ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{2, 3, 8};
    std::vector<int64_t> reduce = trailing ? std::vector<int64_t>{6, 8} : std::vector<int64_t>{6};
    lower::TensorExpr y = ctx.reduce("Y", shape, DType::kF32, reduce, lower::Combiner::kSum,
                                     [&](const std::vector<tir::Expr>& s, const std::vector<tir::Expr>& r) {
                                       return trailing ? x.at({s[0], s[1], r[0], r[1]}) : x.at({s[0], s[1], r[0], s[2]});
                                     });
    ctx.output("Y", y);
    tir::PrimFunc f = ctx.finish();
    Schedule sch(f);
    apply_default_cpu_schedule(sch, eager_parallel());
    tir::Stmt rf = sched::find_block(sch.func(), "Y_rf");
    EXPECT_EQ(rf.defined(), trailing) << sch.func();
    if (trailing) {
      std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "Y_rf");
      ASSERT_GE(loops.size(), 2u) << sch.func();
      EXPECT_EQ(extent(loops[loops.size() - 2]), 3) << sch.func();  // 48 values, 3 steps of 16 lanes
      EXPECT_EQ(loops.back()->for_kind, tir::ForKind::kVectorized) << sch.func();
      EXPECT_EQ(extent(loops.back()), 16) << sch.func();
    }
    EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
  }
}

// Softmax's sum: sum over k of exp(X[r, k] - M[r]) also reads a value per
// row that the reduction does not move; it is still summed by lanes.
TEST(SchedDefaults, ARowReductionMayReadAValuePerRow) {
  lower::LowerContext ctx("exp_sum");
  lower::TensorExpr x = ctx.input("X", DType::kF32, {4, 32});
  lower::TensorExpr m = ctx.input("M", DType::kF32, {4});
  lower::TensorExpr y = ctx.reduce("Y", {4}, DType::kF32, {32}, lower::Combiner::kSum,
                                   [&](const std::vector<tir::Expr>& s, const std::vector<tir::Expr>& r) {
                                     return tir::call(tir::Intrinsic::k_exp, {x.at({s[0], r[0]}) - m.at({s[0]})});
                                   });
  ctx.output("Y", y);
  tir::PrimFunc f = ctx.finish();
  Schedule sch(f);
  apply_default_cpu_schedule(sch, eager_parallel());
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "Y_rf");
  ASSERT_FALSE(loops.empty()) << sch.func();
  EXPECT_EQ(loops.back()->for_kind, tir::ForKind::kVectorized) << sch.func();
  EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
}

// Y[p, q] = X[q * 2 + p]: the phase loop p is the only loop besides the row,
// so after it moves inside the vector loop nothing is left to run in
// parallel; the schedule still applies and computes the same.
TEST(SchedDefaults, AStridedReadWithOnlyItsPhaseLoopOutsideTheRow) {
  lower::LowerContext ctx("phases_only");
  lower::TensorExpr x = ctx.input("X", DType::kF32, {64});
  lower::TensorExpr y = ctx.compute("Y", {2, 32}, DType::kF32, [&](const std::vector<tir::Expr>& i) {
    return x.at({i[1] * 2 + i[0]});
  });
  ctx.output("Y", y);
  tir::PrimFunc f = ctx.finish();
  Schedule sch(f);
  CpuScheduleOptions eager;
  eager.min_parallel_cycles = 1;
  apply_default_cpu_schedule(sch, eager);
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "Y");
  ASSERT_EQ(loops.size(), 2u) << sch.func();
  EXPECT_EQ(loops[0]->for_kind, tir::ForKind::kVectorized) << sch.func();
  EXPECT_EQ(loops[1]->for_kind, tir::ForKind::kUnrolled) << sch.func();
  EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
}

// Rows shorter than two vectors (16 columns, 16 lanes) keep a serial reduction.
TEST(SchedDefaults, ShortRowReductionsStaySerial) {
  std::vector<const tir::ForNode*> loops;
  CpuScheduleOptions eager;
  eager.min_parallel_cycles = 1;
  Schedule sch = scheduled_workload(Workload::kSoftmax, eager);
  for (const char* block : {"sm_max", "sm_exp_sum"}) {
    loops = loops_of(sch.func(), block);
    ASSERT_EQ(loops.size(), 2u) << sch.func();
    EXPECT_EQ(loops[0]->for_kind, tir::ForKind::kParallel) << block;
    EXPECT_EQ(loops[1]->for_kind, tir::ForKind::kSerial) << block;  // the reduction, over x[row, col]
  }
  // The elementwise stage: one fused loop split into (4, 16), the inner vectorized.
  loops = loops_of(sch.func(), "sm_out");
  ASSERT_EQ(loops.size(), 2u) << sch.func();
  EXPECT_EQ(loops[0]->for_kind, tir::ForKind::kParallel);
  EXPECT_EQ(extent(loops[1]), 16);
  EXPECT_EQ(loops[1]->for_kind, tir::ForKind::kVectorized);
  EXPECT_EQ(check_against(reference(Workload::kSoftmax), sch.func(), false), "");
}

TEST(SchedDefaults, OptionsChangeTheTile) {
  CpuScheduleOptions narrow;
  narrow.vector_lanes = 8;
  narrow.min_parallel_cycles = int64_t(1) << 40;  // never parallel
  Schedule sch = scheduled_workload(Workload::kMatmul, narrow);
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "mm");
  EXPECT_EQ(extent(loops.back()), 16);  // two 8-lane vectors: N = 16 allows the 6 x 16 tile
  EXPECT_EQ(extent(loops[loops.size() - 2]), 4);  // 6 rows do not divide M = 32
  EXPECT_EQ(count_kind(loops, tir::ForKind::kParallel), 0);
  EXPECT_EQ(check_against(reference(Workload::kMatmul), sch.func(), false), "");
}

// A linear layer's shape (few rows, many columns): the column tiles go outside
// the row tiles, so a column strip of the weight is reused by every row tile.
TEST(SchedDefaults, WideMatmulWalksColumnTilesOutside) {
  Shapes s;
  s.M = 12, s.N = 128, s.K = 24;
  Schedule sch(lower_workload(Workload::kMatmul, s));
  CpuScheduleOptions serial;
  serial.min_parallel_cycles = int64_t(1) << 40;
  apply_default_cpu_schedule(sch, serial);
  std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "mm");
  ASSERT_EQ(loops.size(), 5u) << sch.func();  // jo, io, k, ii, ji
  EXPECT_EQ(extent(loops[0]), 4);   // 128 columns in tiles of two 16-lane vectors
  EXPECT_EQ(extent(loops[1]), 2);   // 12 rows in tiles of 6
  EXPECT_EQ(extent(loops[3]), 6);
  EXPECT_EQ(check_against(reference_of(lower_workload(Workload::kMatmul, s)), sch.func(), false), "");
}

// B as an input (not a constant pack_matmul_weights laid out): each column
// tile copies its strip of B (K x 32) into a contiguous panel, under the
// column tile loop, reused by the 8 row tiles of 4 inside it. With 2 row
// tiles the copy would not pay: no panel.
TEST(SchedDefaults, MatmulPacksTheColumnStripOfAnInputB) {
  Shapes s;
  s.M = 32, s.N = 64, s.K = 24;
  Schedule sch = scheduled_workload(Workload::kMatmul, eager_parallel(), s);
  std::vector<const tir::ForNode*> panel = loops_of(sch.func(), "B_local");
  ASSERT_GE(panel.size(), 3u) << sch.func();
  std::vector<const tir::ForNode*> mm = loops_of(sch.func(), "mm");
  EXPECT_EQ(panel[0], mm[0]) << "the panel is made in the column tile loop:\n" << sch.func();
  EXPECT_EQ(extent(mm[0]), 2);  // 64 columns in tiles of 32
  EXPECT_EQ(extent(panel.back()), 32);
  EXPECT_EQ(panel.back()->for_kind, tir::ForKind::kVectorized);
  EXPECT_EQ(check_against(reference_of(lower_workload(Workload::kMatmul, s)), sch.func(), false), "");
  s.M = 8;
  Schedule few = scheduled_workload(Workload::kMatmul, eager_parallel(), s);
  EXPECT_FALSE(sched::find_block(few.func(), "B_local").defined()) << few.func();
}

TEST(SchedDefaults, RandomShapesOfEveryWorkload) {
  // Shapes whose extents divide badly (primes, extents below the vector width).
  std::mt19937_64 rng(3);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  for (int round = 0; round < 6; ++round) {
    Shapes s;
    s.M = pick(1, 40), s.N = pick(1, 40), s.K = pick(1, 9);
    s.C = pick(1, 5), s.H = pick(1, 9), s.W = pick(1, 19), s.OC = pick(1, 13);
    s.rows = pick(1, 9), s.cols = pick(1, 20), s.sm_rows = pick(1, 5), s.sm_cols = pick(1, 33);
    for (Workload w : kAllWorkloads) {
      SCOPED_TRACE(std::string(workload_name(w)) + " round " + std::to_string(round));
      tir::PrimFunc plain = lower_workload(w, s);
      Schedule sch(plain);
      CpuScheduleOptions options = eager_parallel();
      options.min_parallel_cycles = 64;
      apply_default_cpu_schedule(sch, options);
      EXPECT_EQ(check_against(reference_of(plain), sch.func(), false), "") << sch.func();
    }
  }
}

}  // namespace
}  // namespace tessel::sched_workloads
