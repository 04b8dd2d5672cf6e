// What `--tuning-log` gives the compiler: per task (the structural hash of a
// kernel's lowered function, blocks named by position), the schedule of the
// fastest candidate the log measured for this target and compiler version,
// when it measured at least 3% faster than the task's default schedule (else
// the default's) and no check in the model found it slower there
// (model_check.h). A conv's layout decision likewise stands unless the
// model check left it out.
// Compiling, a kernel whose task has one gets it replayed on its function
// (renamed as the task's); the others keep the default schedules.
#pragma once

#include <map>
#include <ostream>
#include <string>

#include "src/codegen/target.h"
#include "src/lower/layout_choices.h"

namespace tessel::driver {

// How much faster than the default a candidate must have measured to replace it.
inline constexpr double kMinTunedGain = 0.03;
// The time of what is applied: best_ms when it beat default_ms by that much
// (or there is no default), else default_ms; 0 means unmeasured.
inline double applied_time(double default_ms, double best_ms) {
  if (best_ms <= 0 || (default_ms > 0 && best_ms >= default_ms * (1 - kMinTunedGain))) return default_ms;
  return best_ms;
}

struct TunedSchedule {
  std::string trace;  // sched::Trace::to_json
  double best_ms = 0;
  bool tuned = false;  // not the task's default schedule
};

// A region's decision of a `--fusion tuned` session (tuned_fusion.h).
struct FusionDecision {
  bool take_alternative = false;
  double base_ms = 0, alternative_ms = 0;
};

struct TunedSchedules {
  std::string path;                              // the log they came from
  std::map<std::string, TunedSchedule> tasks;    // by task key
  std::map<std::string, FusionDecision> fusion;  // by fusion_region_key: the log's last decision
  std::map<std::string, lower::ConvLayout> conv_layouts;  // by lower::conv_key: the log's last decision
};

// Reads the log (a corrupt line is a user error naming it); says on `notes`
// how many tasks it gives schedules for and how many fusion decisions, and
// what it leaves out: records for another target or compiler version, a
// last line cut short.
TunedSchedules load_tuned_schedules(const std::string& path, const codegen::Target& target, std::ostream& notes);

}  // namespace tessel::driver
