// Internal to the default GPU schedule (gpu_defaults.cpp): the rules for a
// block kind, each applied whole or not at all.
#pragma once

#include <optional>
#include <vector>

#include "schedules/defaults/attempt.h"
#include "schedules/defaults/block_kind.h"
#include "schedules/defaults/gpu_defaults.h"
#include "schedules/schedule.h"

namespace tessel::sched::gpu_rules {

// The indices of the block's reads other than of the buffer it writes (the
// operands, not the accumulator).
std::vector<int> operand_reads(Schedule& sch, BlockRV block);

// The value of knob `key` (cpu_knobs.h): the tuner's when it decides, else `default_value`.
int64_t choose(Schedule& sch, const GpuScheduleOptions& options, const std::string& key,
               std::vector<int64_t> candidates, int64_t default_value);

// A matmul whose tiles divide it: shared-memory staging and register tiles
// (gpu_matmul.cpp). False when the shape or the nest does not fit, or the
// knobs ask for no tiling.
bool schedule_matmul(Schedule& sch, const BlockInfo& info, const GpuScheduleOptions& options);

// A conv with enough work: register tiles of output channels by positions
// (gpu_conv.cpp). False when the nest does not fit, the GPU would not fill,
// or the knobs ask for no tiling.
bool schedule_conv(Schedule& sch, const BlockInfo& info, const GpuScheduleOptions& options);

}  // namespace tessel::sched::gpu_rules
