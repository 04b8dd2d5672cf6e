// A tuning session's summary: its estimates and the per-task table that
// `tessel tune` prints at the end and `tessel tune-report` prints from a log.
#include <algorithm>
#include <iomanip>
#include <map>

#include "src/driver/tune_layouts.h"
#include "src/driver/tune_progress.h"
#include "src/driver/tune_session.h"
#include "src/driver/tuned_schedules.h"

namespace tessel::driver {

double TuneSummary::default_ms() const {
  double total = 0;
  for (const TunedTask& t : tasks)
    if (!t.alternative_only) total += double(t.weight) * t.default_ms;
  return total;
}

double TuneSummary::tuned_ms() const {
  double total = 0;
  for (const TunedTask& t : tasks)
    if (!t.alternative_only) total += double(t.weight) * t.applied_ms();
  for (const tune::FusionRecord& f : fusion)
    if (f.take_alternative) total += double(f.runs) * (f.alternative_ms - f.base_ms);
  for (const tune::LayoutRecord& l : layouts) total += l.measured.at(l.choice).ms - l.measured.front().ms;
  return total;
}

void TunedTask::count(bool ok, double ms, int64_t round) {
  ++trials;
  if (!ok) {
    ++errors;
    return;
  }
  if (round == 0 && default_ms == 0) default_ms = ms;
  if (best_ms == 0 || ms < best_ms) best_ms = ms;
}

double TunedTask::applied_ms() const {
  return left_out ? default_ms : applied_time(default_ms, best_ms);
}

void apply_model_checks(TuneSummary& s, const std::vector<tune::InModelRecord>& checks) {
  std::map<std::string, const tune::InModelRecord*> last;
  for (const tune::InModelRecord& r : checks) last[r.decision()] = &r;
  for (TunedTask& t : s.tasks) {
    auto it = last.find("task " + t.key);
    t.left_out = it != last.end() && !it->second->kept;
  }
  for (tune::LayoutRecord& l : s.layouts) {
    auto it = last.find("conv " + l.conv);
    if (it == last.end() || it->second->kept) continue;
    const tune::LayoutOption& chosen = l.measured.at(l.choice);
    if (chosen.form == it->second->form && chosen.align == it->second->align) l.choice = 0;
  }
}

std::string end_event_fields(const TuneSummary& s) {
  std::string decisions;
  for (const tune::FusionRecord& f : s.fusion)
    decisions += std::string(decisions.empty() ? "" : ",") + "{\"choice\":\"" +
                 (f.take_alternative ? "aggressive" : "default") +
                 "\",\"default_ms\":" + std::to_string(f.base_ms) +
                 ",\"aggressive_ms\":" + std::to_string(f.alternative_ms) + "}";
  std::string fields =
      "\"trials\":" + std::to_string(s.trials) + ",\"interrupted\":" + (s.interrupted ? "true" : "false") +
      ",\"estimated_ms\":" + std::to_string(s.tuned_ms()) +
      ",\"default_ms\":" + std::to_string(s.default_ms()) + ",\"fusion\":[" + decisions + "]";
  const ModelCheck& c = s.model_check;
  if (c.passes > 0)
    fields += ",\"in_model\":{\"default_ms\":" + std::to_string(c.default_ms) +
              ",\"tuned_ms\":" + std::to_string(c.tuned_ms) + ",\"checked\":" + std::to_string(c.checked) +
              ",\"left_out\":" + std::to_string(c.left_out) + "}";
  return fields;
}

void print_tune_summary(const TuneSummary& s, std::ostream& out) {
  std::vector<const TunedTask*> rows;
  bool named = false;
  for (const TunedTask& t : s.tasks) {
    rows.push_back(&t);
    named = named || !t.name.empty();
  }
  // The model's tasks first, costliest first; then those only an alternative
  // (fusion's or a conv layout's) has, which the model runs only if chosen.
  std::stable_sort(rows.begin(), rows.end(), [](const TunedTask* a, const TunedTask* b) {
    if (a->alternative_only != b->alternative_only) return b->alternative_only;
    return double(a->weight) * a->default_ms > double(b->weight) * b->default_ms;
  });
  out << std::left << std::setw(18) << "task" << std::setw(named ? 40 : 0) << (named ? "first kernel's group" : "")
      << std::right << std::setw(5) << "runs" << std::setw(12) << "default ms" << std::setw(10) << "best ms"
      << std::setw(9) << "speedup" << std::setw(9) << "GFLOP/s" << std::setw(8) << "trials" << std::setw(8)
      << "errors" << "\n"
      << std::fixed;
  for (const TunedTask* t : rows) {
    double best = t->applied_ms();
    out << std::left << std::setw(18) << t->key << std::setw(named ? 40 : 0) << (named ? t->name.substr(0, 38) : "")
        << std::right << std::setw(5) << (t->alternative_only ? "alt" : std::to_string(t->weight))
        << std::setprecision(4) << std::setw(12) << t->default_ms
        << std::setw(10) << best << std::setprecision(2) << std::setw(8) << (best > 0 ? t->default_ms / best : 0)
        << "x" << std::setprecision(1) << std::setw(9) << (best > 0 ? t->flops / (best * 1e6) : 0) << std::setw(8)
        << t->trials << std::setw(8) << t->errors << "\n";
  }
  if (!s.fusion.empty()) {
    out << "fusion tuned (each region's kernels under default's groups and aggressive's, best schedules added):\n";
    for (const tune::FusionRecord& f : s.fusion)
      out << "  " << std::left << std::setw(11) << (f.take_alternative ? "aggressive" : "default") << std::right
          << std::setprecision(4) << std::setw(9) << f.base_ms << " ms default, " << std::setw(9) << f.alternative_ms
          << " ms aggressive   " << f.base_ops << "  ->  " << f.alternative_ops
          << (f.runs > 1 ? "  (x" + std::to_string(f.runs) + ")" : std::string()) << "\n";
  }
  if (!s.layouts.empty()) print_layout_decisions(s.layouts, out);
  out << std::setprecision(3) << "estimated end to end (sum of runs x kernel time): default " << s.default_ms()
      << " ms, tuned " << s.tuned_ms() << " ms (" << std::setprecision(2)
      << (s.tuned_ms() > 0 ? s.default_ms() / s.tuned_ms() : 0) << "x); " << s.trials << " trials";
  if (s.seconds > 0) out << " in " << format_duration(s.seconds);
  out << (s.interrupted ? ", interrupted" : "") << "\n";
  const ModelCheck& c = s.model_check;
  if (c.passes > 0)
    out << std::setprecision(3) << "in the model (the two libraries run in alternation): default "
        << c.default_ms << " ms, tuned " << c.tuned_ms << " ms (" << std::setprecision(2)
        << c.default_ms / c.tuned_ms << "x); " << c.left_out << " of " << c.checked
        << " decisions left out, slower there\n";
  out << std::defaultfloat << std::setprecision(6);
}

}  // namespace tessel::driver
