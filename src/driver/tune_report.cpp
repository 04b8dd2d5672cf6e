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
    double ms = r->ok() ? r->median_ms() : 0;
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
  // A region's last decision (a resumed session decides again).
  std::map<std::string, size_t> decision;
  for (const tune::FusionRecord& f : all.fusion) {
    if (f.target != report.target || f.compiler_version != report.version) continue;
    std::string key = fusion_region_key(f.base, f.alternative);
    auto [it, added] = decision.emplace(key, report.summary.fusion.size());
    if (added)
      report.summary.fusion.push_back(f);
    else
      report.summary.fusion[it->second] = f;
  }
  // A conv's last decision, likewise.
  std::map<std::string, size_t> layout;
  for (const tune::LayoutRecord& l : all.layouts) {
    if (l.target != report.target || l.compiler_version != report.version) continue;
    auto [it, added] = layout.emplace(l.conv, report.summary.layouts.size());
    if (added)
      report.summary.layouts.push_back(l);
    else
      report.summary.layouts[it->second] = l;
  }
  return report;
}

void print_tune_report(const TuneReport& report, std::ostream& out) {
  out << "tuning log " << report.log << ": " << report.curve.size() << " trials, " << report.summary.tasks.size()
      << " tasks, target " << report.target << ", tessel " << report.version << "\n";
  if (report.other_records) out << report.other_records << " records for another target or version left out\n";
  print_tune_summary(report.summary, out);
  if (!report.accuracy.empty()) {
    double sum = 0;
    for (const RoundAccuracy& a : report.accuracy) sum += a.accuracy;
    out << "cost model: pairwise accuracy on unseen rounds, mean " << std::setprecision(3)
        << sum / double(report.accuracy.size()) << " over " << report.accuracy.size() << " rounds (0.5 is a coin)\n";
  }
  out << std::defaultfloat << std::setprecision(6);
}

}  // namespace tessel::driver
