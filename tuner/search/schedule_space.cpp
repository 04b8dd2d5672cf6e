#include "tuner/search/schedule_space.h"

#include "src/tir_passes/backend_passes.h"

namespace tessel::tune {

void ScheduleSpace::apply(sched::Schedule& sch, sched::KnobChoices& knobs) const {
  if (const auto* cpu = std::get_if<sched::CpuScheduleOptions>(&options_)) {
    sched::CpuScheduleOptions with_knobs = *cpu;
    with_knobs.knobs = &knobs;
    sched::apply_default_cpu_schedule(sch, with_knobs);
    return;
  }
  sched::GpuScheduleOptions with_knobs = std::get<sched::GpuScheduleOptions>(options_);
  with_knobs.knobs = &knobs;
  sched::apply_default_gpu_schedule(sch, with_knobs);
}

tir::PrimFunc ScheduleSpace::prepare(const tir::PrimFunc& scheduled) const {
  return tir_passes::prepare_for_backend(scheduled, gpu());
}

}  // namespace tessel::tune
