// Where a tuning session's candidates come from: the default schedule of
// the target's kind (tune::ScheduleSpace), and whether this machine can
// measure them: a GPU target needs a GPU and its driver
// (gpu_unavailable_reason); cuda-emulated needs neither.
#pragma once

#include <string>

#include "src/driver/compile_model.h"
#include "tuner/search/schedule_space.h"

namespace tessel::driver {

// The space of the options' target; `described` says what its schedules
// fill ("2 thread(s)", "sm_90"). A user error for schedule none, or a GPU
// target on a machine without a GPU it can use (with the reason).
tune::ScheduleSpace session_space(const CompileOptions& compile, std::string& described);

}  // namespace tessel::driver
