#include "src/driver/tune_report.h"

#include <algorithm>
#include <iomanip>
#include <map>

#include "ir/core/diagnostics.h"
#include "src/driver/tuned_fusion.h"
#include "src/driver/tuned_schedules.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/log/tuning_log.h"

namespace tessel::driver {

namespace {

void add_accuracy(TuneReport& report, const std::vector<const tune::TuningRecord*>& round) {
  std::vector<double> predicted, speed;
  for (const tune::TuningRecord* r : round) {
    if (!r->predicted) return;  // the model had not been trained for this round
    predicted.push_back(*r->predicted);
    speed.push_back(r->ok() ? 1 / r->median_ms() : 0);
  }
  if (round.size() < 2) return;
  double accuracy = tune::pairwise_accuracy(predicted, speed, std::vector<int64_t>(speed.size(), 0));
  report.accuracy.push_back({round.front()->round, round.front()->task, int(round.size()), accuracy});
}

// Each region's or conv's last decision for the report's target and version,
// in the order they first appear (a resumed session decides again).
template <typename Decision, typename Key>
std::vector<Decision> last_decisions(const std::vector<Decision>& all, const TuneReport& report, Key key_of) {
  std::vector<Decision> out;
  std::map<std::string, size_t> at;
  for (const Decision& d : all) {
    if (d.target != report.target || d.compiler_version != report.version) continue;
    auto [it, added] = at.emplace(key_of(d), out.size());
    if (added)
      out.push_back(d);
    else
      out[it->second] = d;
  }
  return out;
}

}  // namespace

TuneReport make_tune_report(const std::string& log_path) {
  tune::TuningLog all = tune::read_tuning_log(log_path, "", "");
  TESSEL_USER_CHECK(!all.records.empty(), Span{}) << "the tuning log " << log_path << " holds no records";
  TuneReport report;
  report.log = log_path;
  report.target = all.records.front().target;
  report.version = all.records.front().compiler_version;
  std::vector<const tune::TuningRecord*> kept;
  for (const tune::TuningRecord& r : all.records) {
    if (r.target == report.target && r.compiler_version == report.version) {
      kept.push_back(&r);
    } else {
      ++report.other_records;
    }
  }
  std::vector<TunedTask>& tasks = report.summary.tasks;
  report.summary.trials = int(kept.size());
  std::map<std::string, size_t> index;
  for (const tune::TuningRecord* r : kept)
    if (index.emplace(r->task, tasks.size()).second) {
      tasks.push_back({r->task, "", size_t(r->weight), r->flops});
      tasks.back().alternative_only = r->alternative_only;
    }
  size_t timed = 0;  // tasks with a time so far
  std::vector<const tune::TuningRecord*> round;
  for (const tune::TuningRecord* r : kept) {
    TunedTask& t = tasks[index[r->task]];
    double ms = r->ok() ? r->time_ms(t.default_ms) : 0;
    if (r->ok() && t.best_ms == 0) ++timed;
    t.count(r->ok(), ms, r->round);
    report.curve.push_back({int(report.curve.size()) + 1, r->task, ms, timed == tasks.size() ? report.summary.tuned_ms() : 0});
    if (!round.empty() && (round.front()->round != r->round || round.front()->task != r->task)) {
      add_accuracy(report, round);
      round.clear();
    }
    if (r->round > 0) round.push_back(r);
  }
  add_accuracy(report, round);
  report.summary.fusion = last_decisions(all.fusion, report, [](const tune::FusionRecord& f) {
    return fusion_region_key(f.base, f.alternative);
  });
  report.summary.layouts =
      last_decisions(all.layouts, report, [](const tune::LayoutRecord& l) { return l.conv; });
  report.checks =
      last_decisions(all.in_model, report, [](const tune::InModelRecord& r) { return r.decision(); });
  apply_model_checks(report.summary, report.checks);
  return report;
}

void print_tune_report(const TuneReport& report, std::ostream& out) {
  out << "tuning log " << report.log << ": " << report.curve.size() << " trials, " << report.summary.tasks.size()
      << " tasks, target " << report.target << ", tessel " << report.version << "\n";
  if (report.other_records) out << report.other_records << " records for another target or version left out\n";
  print_tune_summary(report.summary, out);
  if (!report.checks.empty()) {
    size_t left_out = 0;
    for (const tune::InModelRecord& r : report.checks) left_out += !r.kept;
    out << "checked in the model: " << report.checks.size() << " decisions, " << left_out
        << " left out (slower in place than what they replace)\n"
        << std::fixed << std::setprecision(4);
    for (const tune::InModelRecord& r : report.checks)
      if (!r.kept)
        out << "  " << (r.is_layout() ? r.conv + " " + r.form : "task " + r.task) << ": " << r.tuned_ms
            << " ms in place, default " << r.default_ms << " ms\n";
    out << std::defaultfloat;
  }
  if (!report.accuracy.empty()) {
    double sum = 0;
    for (const RoundAccuracy& a : report.accuracy) sum += a.accuracy;
    out << "cost model: pairwise accuracy on unseen rounds, mean " << std::setprecision(3)
        << sum / double(report.accuracy.size()) << " over " << report.accuracy.size() << " rounds (0.5 is a coin)\n";
  }
  out << std::defaultfloat << std::setprecision(6);
}

}  // namespace tessel::driver
