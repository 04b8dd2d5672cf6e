// The default CPU schedule: what a person would write by hand for each block
// of a lowered group, without tuning. Register tiles for matmuls and
// convolutions (an unrolled row or output-channel tile times a vectorized
// column tile, the reduction between them and the outer loops, the init
// hoisted out), epilogues computed inside the anchor's tile, elementwise
// blocks fused, vectorized and parallel, reductions parallel over their
// spatial loops. Blocks are told apart by their structure (block_kind.h).
#pragma once

#include <cstdint>

#include "schedules/schedule.h"

namespace tessel::sched {

class KnobChoices;

struct CpuScheduleOptions {
  int vector_lanes = 16;              // f32 lanes (AVX-512); scaled for other dtypes by size
  int num_threads = 2;                // cores to fill
  int fmas_in_flight = 4;             // vector FMAs a core overlaps (CpuTarget::fmas_in_flight)
  // A block whose estimated serial time (cpu_rules::serial_cycles) is shorter
  // runs on one thread: waking the pool and joining it costs microseconds on a
  // virtual machine, more than a small kernel gains from a second core.
  int64_t min_parallel_cycles = 4096;
  int64_t l2_bytes = int64_t(1) << 20;  // one core's L2 (CpuTarget::l2_bytes where known)
  KnobChoices* knobs = nullptr;       // the tuner's choices (cpu_knobs.h); none: the default's own
};

// Schedules every block of sch.func(); each step goes through the primitives,
// so the result is sch.trace(). A rule that does not apply to a block (a
// ScheduleError) is undone for that block and the rest of the schedule still
// applies; never throws for a valid lowered group.
void apply_default_cpu_schedule(Schedule& sch, const CpuScheduleOptions& options = {});

// The columns of the default register tile of a rows x columns f32 matmul:
// three vectors when the rows come in fours but not sixes (4 x 3 vectors, 12
// accumulators), else two vectors (the classic 6 x 2), when they divide the
// columns; 0 when neither does (the tile then ends in a vector tail).
int64_t matmul_tile_columns(int64_t rows, int64_t columns, int64_t lanes);

// The columns of the tile the default schedule gives a rows x columns
// matmul: matmul_tile_columns, or for one row (a matrix-vector product) its
// whole width, or a part per thread on `threads` cores
// (cpu_rules::matrix_vector_columns). Graph passes that lay constant weights
// out in column panels ask for this width, so that the tile reads its
// panel's rows in order.
int64_t matmul_panel_columns(int64_t rows, int64_t columns, int64_t lanes, int threads);

}  // namespace tessel::sched
