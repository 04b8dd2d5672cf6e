// The default GPU schedule of a convolution (gpu_conv.cpp): register tiles
// of output channels by output positions where the tiles still give every
// multiprocessor a block, a thread per output where they would not; every
// tile the knobs offer computes the conv in every thread order, its fused
// epilogue included.
#include <gtest/gtest.h>

#include "schedules/defaults/cpu_knobs.h"
#include "tests/unit/cuda_test_util.h"
#include "tests/unit/sanitized.h"
#include "tests/unit/sched_workloads_util.h"

namespace tessel::sched_workloads {
namespace {

// A conv of 16 output channels over a 10 x 32 plane (320 positions), 4 input channels.
Shapes sixteen_channels() {
  Shapes s;
  s.OC = 16;
  return s;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

tir::PrimFunc gpu_scheduled(Workload w, const Shapes& shapes, const sched::GpuScheduleOptions& options) {
  Schedule sch(lower_workload(w, shapes));
  sched::apply_default_gpu_schedule(sch, options);
  return tir::flattened(sch.func());
}

TEST(GpuConvSchedule, RegisterTilesWhereTheyStillFillTheGpu) {
  // Two multiprocessors: 16 channels x 320 positions in 4 x 2 tiles of 4 x 64 threads make 3 blocks.
  std::string tiled =
      tir::to_string(gpu_scheduled(Workload::kConv2d, sixteen_channels(), {.resident_threads = 2 * 2048}));
  EXPECT_TRUE(contains(tiled, "thread_bound(threadIdx.y)")) << tiled;
  EXPECT_TRUE(contains(tiled, "in 0..64 thread_bound(threadIdx.x)")) << tiled;
  EXPECT_TRUE(contains(tiled, "f32[1, 4, 2] local")) << "each thread's 4 x 2 sums in registers: " << tiled;
  EXPECT_TRUE(contains(tiled, "unrolled")) << tiled;
  // A GPU of 132 multiprocessors would keep most of them idle: a thread per output.
  std::string flat = tir::to_string(gpu_scheduled(Workload::kConv2d, sixteen_channels(), {}));
  EXPECT_FALSE(contains(flat, "threadIdx.y")) << flat;
}

TEST(GpuConvSchedule, EveryTileTheKnobsOfferComputesTheConv) {
  for (Workload w : {Workload::kConv2d, Workload::kFusedConv}) {
    Shapes shapes = sixteen_channels();
    tir::PrimFunc f = lower_workload(w, shapes);
    Reference ref = reference_of(f);
    int64_t point = 0;
    for (int64_t co : {0, 1, 2, 4, 8})
      for (int64_t pos : {1, 4}) {
        if (!test_support::sweep_point_runs(point++)) continue;
        int64_t threads_co = co == 2 ? 1 : 2;
        SCOPED_TRACE(std::string(workload_name(w)) + " thread_co " + std::to_string(co) + " thread_pos " +
                     std::to_string(pos) + " threads_co " + std::to_string(threads_co));
        sched::KnobChoices knobs({{"conv.thread_co", co},
                                  {"conv.thread_pos", pos},
                                  {"conv.threads_pos", 32},
                                  {"conv.threads_co", threads_co},
                                  {"conv.unroll_taps", pos == 4 ? 1 : 0}});
        Schedule sch(f);
        sched::apply_default_gpu_schedule(sch, {.knobs = &knobs});
        EXPECT_EQ(knobs.taken().at("conv.thread_co"), co);
        EXPECT_EQ(check_against(ref, tir::flattened(sch.func()), true, {tir::ThreadOrder::kShuffled}), "");
      }
  }
}

}  // namespace
}  // namespace tessel::sched_workloads
