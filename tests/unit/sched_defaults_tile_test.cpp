// The register tile of the default CPU schedule for a conv whose whole
// reduction is a few taps (an RGB stem): 4 rows of two vectors, not 6, which
// LLVM unrolled into scalar code; a longer reduction keeps 6 rows. A core
// that overlaps more FMAs gets more rows, as far as its registers hold them.
// A matrix-vector product's tile: every column. Columns that three vectors
// divide and two do not are tiled three vectors wide.
#include "tests/unit/lower_nn_test_util.h"
#include "tests/unit/sched_defaults_util.h"

namespace tessel::sched_workloads {
namespace {

int64_t unrolled_rows(const tir::PrimFunc& f) {
  for (const tir::ForNode* loop : loops_of(f, "conv"))
    if (loop->for_kind == tir::ForKind::kUnrolled) return extent(loop);
  return 0;
}

TEST(SchedDefaultsTile, AShortReductionGetsFourRowsOfTwoVectors) {
  for (auto [channels, rows] : {std::pair<int64_t, int64_t>{3, 4}, std::pair<int64_t, int64_t>{8, 6}}) {
    SCOPED_TRACE(std::to_string(channels) + " input channels: a reduction of " + std::to_string(channels * 9));
    Shapes s;
    s.C = channels;
    s.OC = 24;
    s.W = 32;
    tir::PrimFunc f = lower_workload(Workload::kConv2d, s);
    Schedule sch(f);
    apply_default_cpu_schedule(sch, eager_parallel());
    std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "conv");
    ASSERT_FALSE(loops.empty());
    EXPECT_EQ(loops.back()->for_kind, tir::ForKind::kVectorized) << sch.func();
    EXPECT_EQ(extent(loops.back()), 32) << sch.func();
    EXPECT_EQ(unrolled_rows(sch.func()), rows) << sch.func();
    EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
  }
}

// Twice the FMAs in flight, twice the accumulators: 12 rows of two vectors
// where four FMAs in flight take 6, with AVX-512's 32 vector registers (AVX2's
// 16 hold 6 rows of two vectors and the operands), unless the reduction is a
// few taps (the stem's exception holds).
TEST(SchedDefaultsTile, MoreFmasInFlightGetMoreRowsWithinTheRegisters) {
  struct Case {
    int64_t channels;
    int lanes, fmas_in_flight;
    int64_t rows;
  };
  for (Case c : {Case{8, 16, 4, 6}, Case{8, 16, 8, 12}, Case{8, 8, 8, 6}, Case{3, 16, 8, 4}}) {
    SCOPED_TRACE(std::to_string(c.channels) + " input channels, " + std::to_string(c.lanes) + " lanes, " +
                 std::to_string(c.fmas_in_flight) + " FMAs in flight");
    Shapes s;
    s.C = c.channels;
    s.OC = 24;
    s.W = 32;
    tir::PrimFunc f = lower_workload(Workload::kConv2d, s);
    Schedule sch(f);
    CpuScheduleOptions options = eager_parallel();
    options.vector_lanes = c.lanes;
    options.fmas_in_flight = c.fmas_in_flight;
    apply_default_cpu_schedule(sch, options);
    EXPECT_EQ(unrolled_rows(sch.func()), c.rows) << sch.func();
    EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
  }
}

// The four-FMA exception is the stem's, whose short reduction spans a
// window: a 1x1 conv over 32 input channels sums one loop and, with eight
// FMAs in flight, gets the rows of any longer reduction (8 of two vectors
// dividing 16 output channels), the stem 4.
TEST(SchedDefaultsTile, AOneByOneConvOverFewChannelsIsNoStem) {
  for (auto [channels, window, rows] :
       {std::tuple<int64_t, int64_t, int64_t>{32, 1, 8}, std::tuple<int64_t, int64_t, int64_t>{3, 3, 4}}) {
    SCOPED_TRACE(std::to_string(channels) + " channels, a " + std::to_string(window) + "x" +
                 std::to_string(window) + " window");
    lower_nn_test::LoweredNode n("Conv", "conv",
                                 {lower_nn_test::f32_arg({1, channels, 6, 64}),
                                  lower_nn_test::f32_arg({16, channels, window, window})},
                                 graph::Attrs{});
    Schedule sch(n.func);
    CpuScheduleOptions options = eager_parallel();
    options.vector_lanes = 16;
    options.fmas_in_flight = 8;
    apply_default_cpu_schedule(sch, options);
    EXPECT_EQ(unrolled_rows(sch.func()), rows) << sch.func();
  }
}

// A matrix-vector product (one row) reads each weight once: its tile is all
// of its columns, so that it walks the weight's rows in order; past
// kMatrixVectorColumns, the largest divisor of the columns up to that. On
// several threads, each thread takes a part of the columns (a parallel loop
// over the column tiles), as wide as divides them.
TEST(SchedDefaultsTile, AMatrixVectorProductsTileIsEveryColumnOrAPartPerThread) {
  struct Case {
    int threads;
    int64_t columns, tile;
  };
  for (Case c : {Case{1, 1000, 1000}, Case{1, 8200, 2050}, Case{2, 1000, 500}, Case{2, 8200, 2050},
                 Case{4, 1000, 250}, Case{2, 24, 24}}) {
    SCOPED_TRACE(testing::Message() << c.columns << " columns on " << c.threads << " threads");
    Shapes s;
    s.M = 1;
    s.K = 40;
    s.N = c.columns;
    tir::PrimFunc f = lower_workload(Workload::kMatmul, s);
    Schedule sch(f);
    CpuScheduleOptions options = eager_parallel();
    options.num_threads = c.threads;
    apply_default_cpu_schedule(sch, options);
    std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "mm");
    ASSERT_FALSE(loops.empty());
    EXPECT_EQ(loops.back()->for_kind, tir::ForKind::kVectorized) << sch.func();
    EXPECT_EQ(extent(loops.back()), c.tile) << sch.func();
    EXPECT_EQ(extent(loops[loops.size() - 2]), 40) << "the reduction just outside: " << sch.func();
    if (c.threads > 1 && c.tile < c.columns) {  // the column tiles run in parallel
      bool parallel_tiles = false;
      for (const tir::ForNode* l : loops)
        parallel_tiles =
            parallel_tiles || (l->for_kind == tir::ForKind::kParallel && extent(l) == c.columns / c.tile);
      EXPECT_TRUE(parallel_tiles) << sch.func();
    }
    EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
  }
}

// Each reduction step of a tile loads its vectors and broadcasts one operand
// per row: a one-vector tile loads once per FMA. Where two vectors do not
// divide the columns but three do (a 7 x 7 plane's 48 flat positions), the
// tile takes three, with fewer rows. With 32 vector registers (AVX-512) three
// vectors are taken wherever they divide the columns: 8 rows of three load 11
// times per 24 FMAs, 12 rows of two 14 times. With AVX2's 16 registers, 96
// columns of a product whose rows six divide stay two vectors wide.
TEST(SchedDefaultsTile, ColumnsThatThreeVectorsDivideAreNotTiledOneVectorWide) {
  struct Case {
    int64_t rows, columns;
    int lanes;
    int64_t tile;
  };
  for (Case c : {Case{48, 48, 16, 48}, Case{48, 144, 16, 48}, Case{48, 64, 16, 32}, Case{48, 80, 16, 16},
                 Case{24, 24, 8, 24}, Case{48, 96, 16, 48}, Case{48, 96, 8, 16}}) {
    SCOPED_TRACE(std::to_string(c.rows) + " x " + std::to_string(c.columns) + ", " + std::to_string(c.lanes) +
                 " lanes");
    Shapes s;
    s.M = c.rows;
    s.K = 40;
    s.N = c.columns;
    tir::PrimFunc f = lower_workload(Workload::kMatmul, s);
    Schedule sch(f);
    CpuScheduleOptions options = eager_parallel();
    options.vector_lanes = c.lanes;
    apply_default_cpu_schedule(sch, options);
    std::vector<const tir::ForNode*> loops = loops_of(sch.func(), "mm");
    ASSERT_FALSE(loops.empty());
    EXPECT_EQ(loops.back()->for_kind, tir::ForKind::kVectorized) << sch.func();
    EXPECT_EQ(extent(loops.back()), c.tile) << sch.func();
    EXPECT_EQ(check_against(reference_of(f), sch.func(), false), "");
  }
}

}  // namespace
}  // namespace tessel::sched_workloads
