// Where a task's candidates come from: the default schedule of the target's
// kind, CPU (cpu_defaults.h) or GPU (gpu_defaults.h), with its knobs
// (cpu_knobs.h) decided by the search. Both record their choices in the
// trace, so a candidate replays without the rules on either kind.
//
//   ScheduleSpace cpu = sched::CpuScheduleOptions{.num_threads = 2};
//   ScheduleSpace gpu = sched::GpuScheduleOptions{.resident_threads = 132 * 2048};
//   gpu.apply(sch, knobs);   // blocks bound to blockIdx/threadIdx, as the knobs say
#pragma once

#include <variant>

#include "ir/tensor/function.h"
#include "schedules/defaults/cpu_defaults.h"
#include "schedules/defaults/cpu_knobs.h"
#include "schedules/defaults/gpu_defaults.h"
#include "schedules/schedule.h"

namespace tessel::tune {

class ScheduleSpace {
 public:
  ScheduleSpace(sched::CpuScheduleOptions cpu) : options_(cpu) {}  // NOLINT: a space is its options
  ScheduleSpace(sched::GpuScheduleOptions gpu) : options_(gpu) {}  // NOLINT

  bool gpu() const { return std::holds_alternative<sched::GpuScheduleOptions>(options_); }
  // The default schedule of the kind applied to sch, its choices taken from `knobs`.
  void apply(sched::Schedule& sch, sched::KnobChoices& knobs) const;
  // The scheduled function after the passes the kind's backend expects
  // (tir_passes/backend_passes.h): what is built and measured.
  tir::PrimFunc prepare(const tir::PrimFunc& scheduled) const;

 private:
  std::variant<sched::CpuScheduleOptions, sched::GpuScheduleOptions> options_;
};

}  // namespace tessel::tune
