// The default CPU schedule's parallel threshold: a block estimated to run
// shorter than CpuScheduleOptions::min_parallel_cycles on one core stays
// serial; near the threshold the tuner decides by measuring ("<block>.parallel").
#include <gtest/gtest.h>

#include "schedules/defaults/block_kind.h"
#include "schedules/defaults/cpu_knobs.h"
#include "schedules/defaults/cpu_rules.h"
#include "src/lower/compute.h"
#include "tests/unit/sched_defaults_util.h"

namespace tessel::sched_workloads {
namespace {

using sched::KnobChoices;

Shapes square_matmul(int64_t n) {
  Shapes s;
  s.M = s.N = s.K = n;
  return s;
}

bool has_parallel_loop(const tir::PrimFunc& f, const std::string& block) {
  return count_kind(loops_of(f, block), tir::ForKind::kParallel) > 0;
}

sched::BlockInfo matmul_info(int64_t n) {
  return sched::classify_block(lower_workload(Workload::kMatmul, square_matmul(n)), "mm");
}

// 32 x 24 x 16 is a few hundred vector FMAs; 256^3 millions.
TEST(SchedParallelThreshold, ASmallKernelStaysSerialALargeOneIsParallel) {
  CpuScheduleOptions two_cores;
  two_cores.num_threads = 2;
  Schedule small = scheduled_workload(Workload::kMatmul, two_cores);
  EXPECT_FALSE(has_parallel_loop(small.func(), "mm")) << small.func();
  Schedule large = scheduled_workload(Workload::kMatmul, two_cores, square_matmul(256));
  EXPECT_TRUE(has_parallel_loop(large.func(), "mm")) << large.func();
}

// The estimate: arithmetic a vector at a time, or the bytes at 32 per cycle.
TEST(SchedParallelThreshold, TheEstimateIsTheArithmeticOrTheBytesWhicheverIsLonger) {
  sched::BlockInfo mm = matmul_info(64);
  EXPECT_EQ(mm.iterations, 64 * 64 * 64);
  EXPECT_EQ(mm.bytes, 3 * 64 * 64 * 4);  // A, B and the output, each once
  EXPECT_EQ(sched::cpu_rules::serial_cycles(mm, 16), 64 * 64 * 64 * mm.ops_per_iter / 16);

  lower::LowerContext ctx("copy");
  lower::TensorExpr x = ctx.input("X", DType::kF32, {4096, 64});
  lower::TensorExpr y = ctx.compute("Y", {4096, 16}, DType::kF32, [&](const std::vector<tir::Expr>& i) {
    return x.at({i[0], i[1]});  // a slice: a quarter of X read
  });
  ctx.output("Y", y);
  sched::BlockInfo slice = sched::classify_block(ctx.finish(), "Y");
  EXPECT_EQ(slice.bytes, 2 * 4096 * 16 * 4);
  EXPECT_EQ(sched::cpu_rules::serial_cycles(slice, 16), slice.bytes / 32);
}

// Within a factor of four of the threshold the knob offers both, its default
// the estimate's side; further away, or on one thread, no knob.
TEST(SchedParallelThreshold, NearTheThresholdTheTunerMeasuresBoth) {
  int64_t cycles = sched::cpu_rules::serial_cycles(matmul_info(64), 16);
  for (int64_t threshold : {cycles / 2, cycles * 2}) {
    SCOPED_TRACE(testing::Message() << "threshold " << threshold << ", estimate " << cycles);
    bool by_default = cycles >= threshold;
    for (int64_t decision : {0, 1}) {
      KnobChoices knobs({{"mm.parallel", decision}});
      CpuScheduleOptions options;
      options.min_parallel_cycles = threshold;
      options.knobs = &knobs;
      Schedule sch = scheduled_workload(Workload::kMatmul, options, square_matmul(64));
      EXPECT_EQ(has_parallel_loop(sch.func(), "mm"), decision == 1) << sch.func();
      auto knob = std::find_if(knobs.knobs().begin(), knobs.knobs().end(),
                               [](const sched::Knob& k) { return k.key == "mm.parallel"; });
      ASSERT_NE(knob, knobs.knobs().end());
      EXPECT_EQ(knob->default_value, by_default ? 1 : 0);
    }
  }
  for (auto [threshold, threads] : {std::pair<int64_t, int>{cycles * 8, 2}, {cycles / 8, 2}, {cycles, 1}}) {
    KnobChoices knobs;
    CpuScheduleOptions options;
    options.min_parallel_cycles = threshold;
    options.num_threads = threads;
    options.knobs = &knobs;
    scheduled_workload(Workload::kMatmul, options, square_matmul(64));
    for (const sched::Knob& k : knobs.knobs()) EXPECT_NE(k.key, "mm.parallel") << threshold << " " << threads;
  }
}

}  // namespace
}  // namespace tessel::sched_workloads
