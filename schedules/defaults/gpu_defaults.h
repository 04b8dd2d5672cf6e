// The default GPU schedule: one thread per output element. Each block's
// outer spatial loops are fused and split into thread blocks
// (blockIdx.x, threadIdx.x); a reduction stays serial inside the thread that
// owns the output, or, when its outputs are too few to fill the GPU, each
// output gets a thread block whose threads share the reduction. Correct for
// every op the CPU handles. On top: a matmul whose tiles divide it is tiled
// through shared memory and registers (gpu_matmul.cpp), a conv with enough
// work gets register tiles of channels by positions (gpu_conv.cpp).
#pragma once

#include <cstdint>

#include "schedules/schedule.h"

namespace tessel::sched {

class KnobChoices;

struct GpuScheduleOptions {
  int64_t threads_per_block = 256;
  // The threads the GPU runs at once (GpuTarget::resident_threads): a
  // reduction with too few outputs to fill a quarter of them with a thread
  // each gets a thread block each, whose threads share its reduction.
  int64_t resident_threads = 132 * 2048;
  // A thread block's limits (GpuTarget's): tiles that would pass them are not offered.
  int64_t max_threads_per_block = 1024;
  int64_t shared_bytes_per_block = 48 * 1024;
  // The tuner's choices (cpu_knobs.h's KnobChoices): "<block>.threads" of a
  // thread-per-output block, "<block>.reduce_threads" of a block per
  // output, a tiled matmul's register tile ("thread_rows", 0: not tiled;
  // "thread_cols"), threads ("threads_y", "threads_x") and reduction step
  // ("step"); a conv's register tile ("thread_co", 0: not tiled;
  // "thread_pos"), threads ("threads_pos", "threads_co") and whether its
  // window's loops are unrolled ("unroll_taps"). None: the default's own picks.
  KnobChoices* knobs = nullptr;
};

// Binds every block of sch.func() whose loop nest starts with spatial loops;
// a block whose nest has none (a reduction to one value) stays one thread.
// Never throws for a valid lowered group.
void apply_default_gpu_schedule(Schedule& sch, const GpuScheduleOptions& options = {});

}  // namespace tessel::sched
