#include "src/driver/tuned_schedules.h"

#include <map>

#include "src/driver/tune_layouts.h"
#include "src/driver/tune_session.h"
#include "src/driver/tuned_fusion.h"
#include "tuner/log/tuning_log.h"

namespace tessel::driver {

namespace {

// Leaves out what the last check in the model of a decision (the same trace,
// the same layout) did not keep; returns how many.
size_t leave_out_checked(const std::vector<tune::InModelRecord>& checks,
                         const std::map<std::string, TunedSchedule>& defaults, TunedSchedules& out) {
  std::map<std::string, const tune::InModelRecord*> last;
  for (const tune::InModelRecord& r : checks)
    last[r.is_layout() ? "conv " + r.conv + " " + r.form + " " + std::to_string(r.align)
                       : "task " + r.task + " " + r.trace] = &r;
  size_t left_out = 0;
  for (const auto& [key, r] : last) {
    if (r->kept) continue;
    if (r->is_layout()) {
      auto it = out.conv_layouts.find(r->conv);
      if (it == out.conv_layouts.end() || lower::conv_form_name(it->second.form) != r->form ||
          it->second.flat_align != r->align)
        continue;
      out.conv_layouts.erase(it);  // its default layout
      ++left_out;
      continue;
    }
    auto it = out.tasks.find(r->task);
    auto d = defaults.find(r->task);
    if (it == out.tasks.end() || d == defaults.end() || !it->second.tuned || it->second.trace != r->trace)
      continue;
    it->second = d->second;
    ++left_out;
  }
  return left_out;
}

}  // namespace

TunedSchedules load_tuned_schedules(const std::string& path, const codegen::Target& target, std::ostream& notes) {
  tune::TuningLog log = tune::read_tuning_log(path, log_target(target), compiler_version());
  TunedSchedules out;
  out.path = path;
  size_t measured = 0;
  std::map<std::string, TunedSchedule> defaults;  // each task's round-0 record
  for (const tune::TuningRecord& r : log.records) {
    if (!r.ok()) continue;
    ++measured;
    if (r.round == 0) defaults.emplace(r.task, TunedSchedule{r.trace, r.median_ms()});
    auto d = defaults.find(r.task);
    double ms = r.time_ms(d == defaults.end() ? 0 : d->second.best_ms);
    auto [it, added] = out.tasks.emplace(r.task, TunedSchedule{r.trace, ms});
    if (!added && ms < it->second.best_ms) it->second = {r.trace, ms};
  }
  // A candidate replaces the default schedule only when it measured clearly
  // faster: within the measurement's noise, the best of many candidates is
  // the luckiest, not the fastest.
  size_t kept_default = 0;
  for (auto& [task, best] : out.tasks) {
    auto d = defaults.find(task);
    if (d == defaults.end() || applied_time(d->second.best_ms, best.best_ms) == best.best_ms) continue;
    kept_default += best.trace != d->second.trace;
    best = d->second;
  }
  for (auto& [task, best] : out.tasks) {
    auto d = defaults.find(task);
    best.tuned = d == defaults.end() || best.trace != d->second.trace;
  }
  notes << "tuning log " << path << ": the fastest of " << measured << " measured candidates for " << out.tasks.size()
        << " tasks";
  if (kept_default) notes << " (" << kept_default << " kept their default schedule: no candidate was "
                          << int(kMinTunedGain * 100) << "% faster)";
  for (const tune::FusionRecord& f : log.fusion)
    out.fusion[fusion_region_key(f.base, f.alternative)] = {f.take_alternative, f.base_ms, f.alternative_ms};
  if (!out.fusion.empty()) notes << "; " << out.fusion.size() << " fusion decisions";
  out.conv_layouts = decided_layouts(log.layouts);
  if (!log.layouts.empty()) notes << "; layout decisions for " << out.conv_layouts.size() << " convs";
  if (size_t n = leave_out_checked(log.in_model, defaults, out))
    notes << "; " << n << " decisions left out, slower in the model than what they replace";
  if (log.foreign_layouts)
    notes << "; " << log.foreign_layouts << " layout decisions for another target or version left out";
  if (!log.foreign.empty())
    notes << "; " << log.foreign.size() << " records for another target or compiler version left out (first: "
          << log.foreign.front().target << ", tessel " << log.foreign.front().compiler_version << "; this is "
          << log_target(target) << ", tessel " << compiler_version() << ")";
  if (log.foreign_fusion) notes << "; " << log.foreign_fusion << " fusion decisions for another target or version left out";
  if (log.dropped_partial_line) notes << "; its last line was cut short and is dropped";
  notes << "\n";
  return out;
}

}  // namespace tessel::driver
