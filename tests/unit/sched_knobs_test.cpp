// The default CPU schedule's knobs (cpu_knobs.h): untouched they are the
// default schedule; decided, they change the tile; drawn, every sample is a
// valid schedule that computes the reference and replays from its trace.
#include "ir/tensor/structural.h"
#include "schedules/defaults/cpu_knobs.h"
#include "tests/unit/sched_defaults_util.h"

namespace tessel::sched_workloads {
namespace {

using sched::KnobChoices;

int64_t unrolled_extent(const tir::PrimFunc& f, const std::string& block) {
  for (const tir::ForNode* loop : loops_of(f, block))
    if (loop->for_kind == tir::ForKind::kUnrolled) return extent(loop);
  return 0;
}

int count_samples(const sched::Trace& trace) {
  int n = 0;
  for (const sched::Instruction& inst : trace.instructions()) n += inst.kind == "sample_categorical";
  return n;
}

TEST(SchedKnobs, UndecidedKnobsAreTheDefaultSchedule) {
  for (Workload w : kAllWorkloads) {
    SCOPED_TRACE(workload_name(w));
    tir::PrimFunc f = lower_workload(w);
    Schedule plain = scheduled_workload(w);
    KnobChoices knobs;
    CpuScheduleOptions options = eager_parallel();
    options.knobs = &knobs;
    Schedule tuned(f);
    apply_default_cpu_schedule(tuned, options);
    EXPECT_TRUE(tir::structural_equal(plain.func(), tuned.func())) << plain.func() << "\n" << tuned.func();
    for (const sched::Knob& k : knobs.knobs()) {
      EXPECT_EQ(k.value, k.default_value) << k.key;
      EXPECT_TRUE(std::count(k.candidates.begin(), k.candidates.end(), k.default_value)) << k.key;
    }
  }
}

TEST(SchedKnobs, AConvTileHasItsShapeAsKnobs) {
  KnobChoices knobs;
  CpuScheduleOptions options;
  options.knobs = &knobs;
  Schedule sch(lower_workload(Workload::kConv2d));
  apply_default_cpu_schedule(sch, options);
  sched::KnobDecisions taken = knobs.taken();
  for (const char* key : {"conv.cols", "conv.rows", "conv.local", "conv.unroll_k"}) EXPECT_TRUE(taken.count(key)) << key;
  // 8 output channels: rows 1, 2, 4 or 8 (at most 24 accumulators); 32 columns: 16 or 32 lanes.
  for (const sched::Knob& k : knobs.knobs()) {
    if (k.key == "conv.rows") {
      EXPECT_EQ(k.candidates, (std::vector<int64_t>{1, 2, 4, 8}));
    } else if (k.key == "conv.cols") {
      EXPECT_EQ(k.candidates, (std::vector<int64_t>{16, 32}));
    }
  }
}

TEST(SchedKnobs, ADecidedKnobChangesTheTileAndIsInTheTrace) {
  tir::PrimFunc f = lower_workload(Workload::kMatmul);
  for (int64_t rows : {2, 4}) {
    KnobChoices knobs({{"mm.rows", rows}});
    CpuScheduleOptions options;
    options.knobs = &knobs;
    Schedule sch(f);
    apply_default_cpu_schedule(sch, options);
    EXPECT_EQ(unrolled_extent(sch.func(), "mm"), rows) << sch.func();
    EXPECT_EQ(knobs.taken().at("mm.rows"), rows);
    EXPECT_GE(count_samples(sch.trace()), 1);
    EXPECT_EQ(check_against(reference(Workload::kMatmul), sch.func(), false), "");
  }
  // A value that is not a candidate (rows must divide 32) falls back to the default.
  KnobChoices odd({{"mm.rows", 5}});
  CpuScheduleOptions options;
  options.knobs = &odd;
  Schedule sch(f);
  apply_default_cpu_schedule(sch, options);
  EXPECT_EQ(odd.taken().at("mm.rows"), unrolled_extent(scheduled_workload(Workload::kMatmul).func(), "mm"));
}

TEST(SchedKnobs, EverySampleComputesTheReferenceAndReplaysFromItsTrace) {
  for (Workload w : kAllWorkloads) {
    tir::PrimFunc f = lower_workload(w);
    std::set<uint64_t> distinct;
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE(std::string(workload_name(w)) + " seed " + std::to_string(seed));
      KnobChoices knobs({}, seed);
      CpuScheduleOptions options;
      options.knobs = &knobs;
      options.num_threads = 2;
      options.min_parallel_cycles = 1;
      Schedule sch(f);
      apply_default_cpu_schedule(sch, options);
      EXPECT_EQ(check_against(reference(w), sch.func(), false), "");
      Schedule replay(f);
      sched::Trace::from_json(sch.trace().to_json()).apply(replay);
      EXPECT_TRUE(tir::structural_equal(replay.func(), sch.func()));
      distinct.insert(tir::structural_hash(sch.func()));
    }
    if (w == Workload::kMatmul || w == Workload::kConv2d) {
      EXPECT_GT(distinct.size(), 1u) << workload_name(w);
    }
  }
}

}  // namespace
}  // namespace tessel::sched_workloads

namespace tessel::sched_workloads {
namespace {

TEST(SchedKnobs, AReductionBlockGoesAboveTheInnermostOuterLoop) {
  Shapes s;
  s.M = 24, s.N = 64, s.K = 128;
  tir::PrimFunc f = lower_workload(Workload::kMatmul, s);
  Reference ref = reference_of(f);
  sched::KnobChoices knobs({{"mm.k_block", 32}, {"mm.local", 0}, {"mm.cols", 16}, {"mm.rows", 4}});
  CpuScheduleOptions options;
  options.knobs = &knobs;
  options.num_threads = 1;
  Schedule sch(f);
  apply_default_cpu_schedule(sch, options);
  ASSERT_EQ(knobs.taken().at("mm.k_block"), 32);
  // [column tiles 4 | K blocks 4 | row tiles 6 | k 32 | rows 4 (unrolled) | columns 16 (vector)]
  std::vector<int64_t> extents;
  for (const tir::ForNode* loop : loops_of(sch.func(), "mm")) extents.push_back(extent(loop));
  EXPECT_EQ(extents, (std::vector<int64_t>{4, 4, 6, 32, 4, 16})) << sch.func();
  EXPECT_EQ(check_against(ref, sch.func(), false), "");
  Schedule replay(f);
  sched::Trace::from_json(sch.trace().to_json()).apply(replay);
  EXPECT_TRUE(tir::structural_equal(replay.func(), sch.func()));
}

}  // namespace
}  // namespace tessel::sched_workloads

namespace tessel::sched_workloads {
namespace {

// A per-channel window (here a padded depthwise conv) can run its taps inside
// the vector loop, unrolled: one body per output vector; either way it
// computes the reference and replays.
TEST(SchedKnobs, APerChannelWindowsTapsCanRunInsideItsVectorLoop) {
  tir::PrimFunc f = lower_workload(Workload::kDepthwise);
  for (int64_t inside : {0, 1}) {
    SCOPED_TRACE(inside);
    KnobChoices knobs({{"dw.taps_inside", inside}});
    CpuScheduleOptions options;
    options.knobs = &knobs;
    Schedule sch(f);
    apply_default_cpu_schedule(sch, options);
    ASSERT_EQ(knobs.taken().at("dw.taps_inside"), inside) << sch.func();
    std::vector<tir::ForKind> kinds;
    for (const tir::ForNode* loop : loops_of(sch.func(), "dw")) kinds.push_back(loop->for_kind);
    // Inside: [..., vector 32, channel 1, kh 3, kw 3 (unrolled)]; else the vector loop innermost.
    auto vector = std::find(kinds.begin(), kinds.end(), tir::ForKind::kVectorized);
    ASSERT_NE(vector, kinds.end()) << sch.func();
    EXPECT_EQ(kinds.end() - vector, inside ? 4 : 1) << sch.func();
    EXPECT_EQ(std::count(vector + 1, kinds.end(), tir::ForKind::kUnrolled), inside ? 3 : 0) << sch.func();
    EXPECT_EQ(check_against(reference(Workload::kDepthwise), sch.func(), false), "");
    Schedule replay(f);
    sched::Trace::from_json(sch.trace().to_json()).apply(replay);
    EXPECT_TRUE(tir::structural_equal(replay.func(), sch.func()));
  }
}

// f scheduled by default with one knob decided; the knob was taken, and the
// trace replays on f to the same function.
Schedule scheduled_with_knob(const tir::PrimFunc& f, const std::string& knob, int64_t value) {
  KnobChoices knobs({{knob, value}});
  CpuScheduleOptions options;
  options.knobs = &knobs;
  Schedule sch(f);
  apply_default_cpu_schedule(sch, options);
  EXPECT_EQ(knobs.taken().at(knob), value) << sch.func();
  Schedule replay(f);
  sched::Trace::from_json(sch.trace().to_json()).apply(replay);
  EXPECT_TRUE(tir::structural_equal(replay.func(), sch.func()));
  return sch;
}

// A strided depthwise conv read by rows reads its input in place by default:
// no padded copy, the window's guarded reads split by partition_vector_loops
// into border and interior later. With the knob off, the copy is made per
// channel as before. Either way it computes the reference and replays.
TEST(SchedKnobs, AStridedPerChannelWindowReadsItsInputInPlace) {
  Shapes strided;
  strided.W = 64, strided.stride = 2;  // output rows of 32: not flat
  tir::PrimFunc f = lower_workload(Workload::kDepthwise, strided);
  Reference ref = reference_of(f);
  for (int64_t in_place : {0, 1}) {
    SCOPED_TRACE(in_place);
    Schedule sch = scheduled_with_knob(f, "dw.window_in_place", in_place);
    EXPECT_EQ(sched::find_block(sch.func(), "dw_pad_1").defined(), !in_place) << sch.func();
    EXPECT_EQ(check_against(ref, sch.func(), false), "");
  }
  Schedule by_default(f);
  apply_default_cpu_schedule(by_default, {});
  EXPECT_FALSE(sched::find_block(by_default.func(), "dw_pad_1").defined()) << by_default.func();
}

// Unit-stride windows keep their padded copy, and windows computed over a
// flat plane (a row of 10 outputs) their stride phase copy, by default.
TEST(SchedKnobs, UnitStrideAndFlatWindowsKeepTheirCopies) {
  Shapes flat;
  flat.W = 20, flat.stride = 2;
  Schedule unit = scheduled_workload(Workload::kDepthwise);
  EXPECT_TRUE(sched::find_block(unit.func(), "dw_pad_1").defined()) << unit.func();
  Schedule phased = scheduled_workload(Workload::kDepthwise, eager_parallel(), flat);
  EXPECT_TRUE(sched::find_block(phased.func(), "dw_phases_1").defined()) << phased.func();
}

// A strided depthwise conv computed flat reads a stride phase copy, made
// from a padded copy of its input; with phases_in_place the phase copy reads
// the input itself (guarded) and the padded copy is gone. Both compute the
// reference and replay. By default only where the input's rows are at least
// a vector.
TEST(SchedKnobs, AStridePhaseCopyMayReadTheInputInPlace) {
  Shapes flat;
  flat.H = 12, flat.W = 28, flat.stride = 2;  // output rows of 14: flat
  tir::PrimFunc f = lower_workload(Workload::kDepthwise, flat);
  Reference ref = reference_of(f);
  for (int64_t in_place : {0, 1}) {
    SCOPED_TRACE(in_place);
    Schedule sch = scheduled_with_knob(f, "dw.phases_in_place", in_place);
    EXPECT_TRUE(sched::find_block(sch.func(), "dw_phases_1").defined()) << sch.func();
    EXPECT_EQ(sched::find_block(sch.func(), "dw_pad_1").defined(), !in_place) << sch.func();
    EXPECT_EQ(check_against(ref, sch.func(), false), "");
  }
  for (int lanes : {16, 32}) {
    CpuScheduleOptions options;
    options.vector_lanes = lanes;
    Schedule sch(f);
    apply_default_cpu_schedule(sch, options);
    EXPECT_EQ(sched::find_block(sch.func(), "dw_pad_1").defined(), lanes > 28) << lanes << "\n" << sch.func();
  }
}

}  // namespace
}  // namespace tessel::sched_workloads
