#include "src/driver/tune_report.h"

#include <algorithm>
#include <iomanip>
#include <map>

#include "ir/core/diagnostics.h"
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

double TuneReportTask::applied_ms() const {
  return applied_time(default_ms, best_ms);
}

double TuneReport::default_ms() const {
  double total = 0;
  for (const TuneReportTask& t : tasks) total += double(t.weight) * t.default_ms;
  return total;
}

double TuneReport::best_ms() const {
  double total = 0;
  for (const TuneReportTask& t : tasks) total += double(t.weight) * t.applied_ms();
  return total;
}

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
  std::map<std::string, size_t> index;
  for (const tune::TuningRecord* r : kept)
    if (index.emplace(r->task, report.tasks.size()).second) report.tasks.push_back({r->task, r->weight, r->flops});
  size_t timed = 0;  // tasks with a time so far
  std::vector<const tune::TuningRecord*> round;
  for (const tune::TuningRecord* r : kept) {
    TuneReportTask& t = report.tasks[index[r->task]];
    ++t.trials;
    double ms = r->ok() ? r->median_ms() : 0;
    if (!r->ok()) ++t.errors;
    if (r->ok() && r->round == 0 && t.default_ms == 0) t.default_ms = ms;
    if (r->ok() && t.best_ms == 0) ++timed;
    if (r->ok() && (t.best_ms == 0 || ms < t.best_ms)) t.best_ms = ms;
    report.curve.push_back({int(report.curve.size()) + 1, r->task, ms, timed == report.tasks.size() ? report.best_ms() : 0});
    if (!round.empty() && (round.front()->round != r->round || round.front()->task != r->task)) {
      add_accuracy(report, round);
      round.clear();
    }
    if (r->round > 0) round.push_back(r);
  }
  add_accuracy(report, round);
  return report;
}

void print_tune_report(const TuneReport& report, std::ostream& out) {
  std::vector<const TuneReportTask*> rows;
  for (const TuneReportTask& t : report.tasks) rows.push_back(&t);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return double(a->weight) * a->default_ms > double(b->weight) * b->default_ms;
  });
  out << "tuning log " << report.log << ": " << report.curve.size() << " trials, " << report.tasks.size()
      << " tasks, target " << report.target << ", tessel " << report.version << "\n";
  if (report.other_records) out << report.other_records << " records for another target or version left out\n";
  out << std::left << std::setw(18) << "task" << std::right << std::setw(5) << "runs" << std::setw(8) << "trials"
      << std::setw(8) << "errors" << std::setw(12) << "default ms" << std::setw(10) << "best ms" << std::setw(9)
      << "speedup" << std::setw(9) << "GFLOP/s" << "\n"
      << std::fixed;
  for (const TuneReportTask* t : rows) {
    double best = t->applied_ms();
    out << std::left << std::setw(18) << t->key << std::right << std::setw(5) << t->weight << std::setw(8)
        << t->trials << std::setw(8) << t->errors << std::setprecision(4) << std::setw(12) << t->default_ms
        << std::setw(10) << best << std::setprecision(2) << std::setw(8)
        << (best > 0 ? t->default_ms / best : 0) << "x" << std::setprecision(1) << std::setw(9)
        << (best > 0 ? t->flops / (best * 1e6) : 0) << "\n";
  }
  out << std::setprecision(3) << "estimated end to end: default " << report.default_ms() << " ms, best "
      << report.best_ms() << " ms (" << std::setprecision(2)
      << (report.best_ms() > 0 ? report.default_ms() / report.best_ms() : 0) << "x)\n";
  if (!report.accuracy.empty()) {
    double sum = 0;
    for (const RoundAccuracy& a : report.accuracy) sum += a.accuracy;
    out << "cost model: pairwise accuracy on unseen rounds, mean " << std::setprecision(3)
        << sum / double(report.accuracy.size()) << " over " << report.accuracy.size() << " rounds (0.5 is a coin)\n";
  }
  out << std::defaultfloat << std::setprecision(6);
}

}  // namespace tessel::driver
