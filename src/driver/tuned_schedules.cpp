#include "src/driver/tuned_schedules.h"

#include "src/driver/tune_session.h"
#include "tuner/log/tuning_log.h"

namespace tessel::driver {

TunedSchedules load_tuned_schedules(const std::string& path, const codegen::Target& target, std::ostream& notes) {
  tune::TuningLog log = tune::read_tuning_log(path, log_target(target), compiler_version());
  TunedSchedules out;
  out.path = path;
  size_t measured = 0;
  for (const tune::TuningRecord& r : log.records) {
    if (!r.ok()) continue;
    ++measured;
    auto [it, added] = out.tasks.emplace(r.task, TunedSchedule{r.trace, r.median_ms()});
    if (!added && r.median_ms() < it->second.best_ms) it->second = {r.trace, r.median_ms()};
  }
  notes << "tuning log " << path << ": the fastest of " << measured << " measured candidates for " << out.tasks.size()
        << " tasks";
  if (!log.foreign.empty())
    notes << "; " << log.foreign.size() << " records for another target or compiler version left out (first: "
          << log.foreign.front().target << ", tessel " << log.foreign.front().compiler_version << "; this is "
          << log_target(target) << ", tessel " << compiler_version() << ")";
  if (log.dropped_partial_line) notes << "; its last line was cut short and is dropped";
  notes << "\n";
  return out;
}

}  // namespace tessel::driver
