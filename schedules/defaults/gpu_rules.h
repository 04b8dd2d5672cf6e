// Internal to the default GPU schedule (gpu_defaults.cpp): the rules for a
// block kind, each applied whole or not at all.
#pragma once

#include <optional>
#include <vector>

#include "schedules/defaults/block_kind.h"
#include "schedules/schedule.h"
#include "schedules/schedule_error.h"

namespace tessel::sched::gpu_rules {

// Runs rule on a copy of sch and keeps the result; false, and sch unchanged,
// when a primitive refuses.
template <typename Rule>
bool attempt(Schedule& sch, Rule&& rule) {
  Schedule trial = sch;
  try {
    rule(trial);
  } catch (const ScheduleError&) {
    return false;
  }
  sch = std::move(trial);
  return true;
}

// The indices of the block's reads other than of the buffer it writes (the
// operands, not the accumulator).
std::vector<int> operand_reads(Schedule& sch, BlockRV block);

// A matmul whose tiles divide it: shared-memory staging and register tiles
// (gpu_matmul.cpp). False when the shape or the nest does not fit.
bool schedule_matmul(Schedule& sch, const BlockInfo& info);

}  // namespace tessel::sched::gpu_rules
