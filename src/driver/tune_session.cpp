#include "src/driver/tune_session.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <set>

#include "ir/core/diagnostics.h"
#include "src/driver/model_check.h"
#include "src/driver/targets.h"
#include "src/driver/tune_fusion.h"
#include "src/driver/tune_interrupt.h"
#include "src/driver/tune_layouts.h"
#include "src/driver/tune_progress.h"
#include "src/driver/tune_space.h"
#include "src/driver/tuned_schedules.h"
#include "src/driver/tuning_tasks.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/log/tuning_log.h"
#include "tuner/scheduler/task_scheduler.h"
#include "tuner/search/evolutionary.h"

namespace tessel::driver {

namespace {

using Clock = std::chrono::steady_clock;
using tune::TaskScheduler;

struct TaskRun {
  TuningTask task;
  tir::PrimFunc default_flat;  // the default schedule, flattened: what candidates are confirmed against
  tune::TaskSearch search;
  std::vector<Tensor> inputs, expected;
  tune::MeasureOptions measure;
  TunedTask summary;
};

double throughput(const TunedTask& t, double ms) {
  return t.flops > 0 ? t.flops / (ms * 1e6) : 1 / ms;
}

// Whether a candidate measured in `ms` would become the schedule compile
// --tuning-log applies for its task (the default's own record never does).
bool would_become_best(const TunedTask& t, double ms) {
  return t.default_ms > 0 && applied_time(t.default_ms, ms) == ms && ms < t.best_ms;
}

double best_or_infinity(const TunedTask& t) {
  return t.best_ms > 0 ? t.best_ms : std::numeric_limits<double>::infinity();
}

bool is_terminal(const std::ostream& out) {
  if (&out == &std::cerr) return ::isatty(2);
  if (&out == &std::cout) return ::isatty(1);
  return false;
}

class Session {
 public:
  Session(const TuneOptions& o, std::ostream& out) : o_(o), out_(out), start_(Clock::now()) {}
  TuneSummary run();

 private:
  void prepare();
  void resume_from(const tune::TuningLog& log);
  // Measures candidates of task t; returns how many were measured (fewer when interrupted).
  int measure_round(size_t t, std::vector<tune::Candidate>& candidates, int64_t round);
  // A candidate about to become its task's best, timed alternately with the
  // default: r.vs_default, or r an error when that fails.
  void confirm(const TaskRun& run, const tune::Candidate& c, tune::TuningRecord& r);
  void train();
  void reweigh_layouts();
  std::optional<double> batch_accuracy() const;
  void print_default_table() const;
  void report_round(size_t t, int64_t round, int measured, int errors, std::optional<double> accuracy);
  TuneSummary summary() const;

  const TuneOptions& o_;
  std::ostream& out_;
  Clock::time_point start_;
  std::optional<tune::ScheduleSpace> space_;
  std::string space_text_;  // "2 thread(s)", "sm_90": what the schedules fill
  std::vector<TaskRun> runs_;
  std::vector<FusionRegionChoice> regions_;  // fusion tuned
  ConvLayoutVariants layouts_;               // searching layouts
  std::unique_ptr<tune::TuningLogWriter> writer_;
  std::unique_ptr<tune::CostModel> model_;
  bool model_trained_ = false;
  std::unique_ptr<TaskScheduler> scheduler_;
  std::unique_ptr<TuneProgress> progress_;
  tune::Measured batch_;
  std::vector<double> batch_predicted_;
  int trials_ = 0, resumed_trials_ = 0;
  bool interrupted_ = false;
};

void Session::prepare() {
  space_ = session_space(o_.compile, space_text_);
  // Conv layouts are the CPU's to choose (lower/layout_choices.h).
  SessionTasks found =
      session_tasks(o_.model_path, o_.pipeline, o_.compile, o_.search_layouts && !space_->gpu());
  std::vector<TuningTask>& tasks = found.tasks;
  regions_ = found.regions;
  layouts_ = found.layouts;
  out_ << "model " << o_.model_path << ": " << found.kernels << " kernels, " << tasks.size() << " tasks";
  std::vector<std::string> sources;
  if (o_.compile.fusion == passes::FusionPolicy::kTuned)
    sources.push_back("aggressive's groups in " + std::to_string(regions_.size()) + " fusion regions");
  size_t relaid = size_t(std::count_if(layouts_.begin(), layouts_.end(),
                                       [](const auto& conv) { return conv.second.size() > 1; }));
  if (relaid) sources.push_back(std::to_string(relaid) + " convs in other layouts");
  if (!sources.empty())
    out_ << " (" << std::count(found.alternative_only.begin(), found.alternative_only.end(), true)
         << " of them only " << sources.front() << (sources.size() > 1 ? " or " + sources.back() : "")
         << " have)";
  out_ << "; target " << log_target(o_.compile.target) << ", " << space_text_ << "\n";
  for (size_t i = 0; i < tasks.size(); ++i) {
    tune::Candidate baseline = *tune::make_candidate(tasks[i].func, *space_, {});
    std::vector<Tensor> inputs = tune::random_task_inputs(baseline.flat, o_.seed * 7919 + i);
    std::vector<Tensor> expected = tune::run_once(o_.compile.target, baseline.flat, inputs);
    tune::MeasureOptions m = tune::checked_against(expected, o_.measure);
    m.warm_inputs = tasks[i].warm_inputs;
    TunedTask s{tasks[i].key, tasks[i].name, tasks[i].weight(), tasks[i].flops};
    s.alternative_only = found.alternative_only[i];
    runs_.push_back({tasks[i], baseline.flat,
                     tune::TaskSearch(tasks[i].func, *space_, o_.seed + 1000003 * (i + 1)), std::move(inputs),
                     std::move(expected), m, s});
  }
}

void Session::resume_from(const tune::TuningLog& log) {
  std::map<std::string, size_t> by_key;
  for (size_t t = 0; t < runs_.size(); ++t) by_key[runs_[t].task.key] = t;
  std::map<size_t, int> count;
  size_t unknown = 0;
  for (const tune::TuningRecord& r : log.records) {
    auto it = by_key.find(r.task);
    if (it == by_key.end()) {
      ++unknown;
      continue;
    }
    TaskRun& run = runs_[it->second];
    std::optional<tune::Candidate> c = run.search.record_previous(r.knobs, r.ok() ? r.median_ms() : 0, r.ok());
    TunedTask& s = run.summary;
    ++count[it->second];
    if (c) batch_.add(c->features, r.ok() ? throughput(s, r.median_ms()) : 0, int64_t(it->second));
    s.count(r.ok(), r.ok() ? r.time_ms(s.default_ms) : 0, r.round);
  }
  for (auto [t, n] : count) {
    scheduler_->report(t, n, best_or_infinity(runs_[t].summary));
    resumed_trials_ += n;
  }
  if (!o_.resume) return;
  out_ << "resumed " << log.records.size() << " records of " << o_.log_path << " (" << resumed_trials_
       << " trials of this model's tasks";
  if (unknown) out_ << ", " << unknown << " of other tasks kept";
  out_ << ")\n";
}

int Session::measure_round(size_t t, std::vector<tune::Candidate>& candidates, int64_t round) {
  TaskRun& run = runs_[t];
  std::vector<double> predicted;
  if (model_trained_) {
    std::vector<tune::Features> features;
    for (const tune::Candidate& c : candidates) features.push_back(c.features);
    predicted = model_->predict(features);
  }
  int measured = 0;
  for (size_t i = 0; i < candidates.size() && !interrupt_requested() && trials_ < o_.trials; ++i) {
    const tune::Candidate& c = candidates[i];
    tune::Measurement m = tune::measure_candidate(o_.compile.target, c.flat, run.inputs, run.expected, run.measure);
    if (interrupt_requested() && !m.ok()) break;  // the child was interrupted too: nothing was measured
    tune::TuningRecord r;
    r.task = run.task.key;
    r.target = log_target(o_.compile.target);
    r.compiler_version = compiler_version();
    r.trace = c.trace;
    r.times_ms = m.times_ms;
    r.registers = m.usage.max_registers;
    r.spill_bytes = m.usage.spill_bytes;
    r.error = m.ok() ? "" : (m.error.empty() ? "no times" : m.error);
    if (!m.ok()) r.times_ms.clear();
    r.knobs = c.knobs;
    r.round = round;
    r.flops = run.task.flops;
    r.weight = int64_t(run.task.weight());
    r.alternative_only = run.summary.alternative_only;
    if (!predicted.empty()) r.predicted = predicted[i];
    if (r.ok() && would_become_best(run.summary, r.median_ms())) confirm(run, c, r);
    if (interrupt_requested() && !r.ok()) break;
    writer_->append(r);
    ++measured;
    ++trials_;
    TunedTask& s = run.summary;
    double ms = r.ok() ? r.median_ms() : 0;
    run.search.record(c, ms, r.ok());
    batch_.add(c.features, r.ok() ? throughput(s, ms) : 0, int64_t(t));
    if (!predicted.empty()) batch_predicted_.push_back(predicted[i]);
    s.count(r.ok(), r.ok() ? r.time_ms(s.default_ms) : 0, round);
  }
  return measured;
}

void Session::confirm(const TaskRun& run, const tune::Candidate& c, tune::TuningRecord& r) {
  tune::Comparison vs = tune::compare_with_baseline(o_.compile.target, run.default_flat, c.flat, run.inputs,
                                                    run.expected, run.measure);
  double alone = run.summary.default_ms > 0 ? r.median_ms() / run.summary.default_ms : 0;
  if (!vs.ok()) {
    r.error = "timed against the default schedule: " + vs.error;
    r.times_ms.clear();
    return;
  }
  r.vs_default = vs.ratio;
  progress_->event("confirm", "\"task\":\"" + run.task.key + "\",\"alone\":" + std::to_string(alone) +
                                  ",\"vs_default\":" + std::to_string(vs.ratio));
}

// The tasks of a conv's layouts far slower than its fastest get no weight in
// the task scheduler: the model will not run them, however they are tuned.
void Session::reweigh_layouts() {
  if (layouts_.empty()) return;
  std::map<std::string, double> best;
  for (const TaskRun& r : runs_)
    if (r.summary.best_ms > 0) best[r.task.key] = r.summary.best_ms;
  std::set<std::string> hopeless = hopeless_layout_tasks(layouts_, best);
  for (size_t t = 0; t < runs_.size(); ++t)
    scheduler_->set_weight(t, hopeless.count(runs_[t].task.key) ? 0.0 : double(runs_[t].task.weight()));
}

void Session::train() {
  if (batch_.size() == 0) return;
  model_->update(batch_);
  model_trained_ = true;
  batch_ = {};
  batch_predicted_.clear();
}

// The model's pairwise accuracy on the round it has not trained on yet.
std::optional<double> Session::batch_accuracy() const {
  if (batch_predicted_.size() != batch_.size() || batch_.size() < 2) return std::nullopt;
  return tune::pairwise_accuracy(batch_predicted_, batch_.throughput, batch_.group);
}

void Session::print_default_table() const {
  std::vector<const TaskRun*> rows;
  double total = 0;
  for (const TaskRun& r : runs_) {
    rows.push_back(&r);
    if (!r.summary.alternative_only) total += double(r.task.weight()) * r.summary.default_ms;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const TaskRun* a, const TaskRun* b) {  // as the summary
    if (a->summary.alternative_only != b->summary.alternative_only) return b->summary.alternative_only;
    return double(a->task.weight()) * a->summary.default_ms > double(b->task.weight()) * b->summary.default_ms;
  });
  bool on_gpu = space_->gpu() && !o_.compile.target.gpu.emulated;
  out_ << "default schedules (each task's kernel measured alone, "
       << (on_gpu ? "by the GPU's events, " + std::to_string(o_.measure.gpu_flush_bytes >> 20) +
                        " MiB of device memory written between runs):\n"
                  : std::to_string(o_.measure.flush_bytes / 1024) +
                        " KiB written and its activations read between runs):\n")
       << std::left << std::setw(18) << "task" << std::setw(40) << "first kernel's group" << std::right
       << std::setw(5) << "runs" << std::setw(10) << "MFLOP" << std::setw(9) << "MB" << std::setw(11)
       << "ms/run" << std::setw(9) << "GFLOP/s" << std::setw(8) << "share"
       << "\n"
       << std::fixed;
  for (const TaskRun* r : rows) {
    const TunedTask& s = r->summary;
    double ms = s.default_ms;
    out_ << std::left << std::setw(18) << s.key << std::setw(40) << s.name.substr(0, 38) << std::right << std::setw(5)
         << (s.alternative_only ? "alt" : std::to_string(s.weight)) << std::setprecision(2) << std::setw(10)
         << s.flops / 1e6 << std::setw(9) << r->task.bytes / 1e6 << std::setprecision(4) << std::setw(11) << ms
         << std::setprecision(2) << std::setw(9) << (ms > 0 ? s.flops / (ms * 1e6) : 0) << std::setprecision(1)
         << std::setw(7) << (total > 0 && !s.alternative_only ? 100 * double(s.weight) * ms / total : 0) << "%\n";
  }
  out_ << std::setprecision(3) << "estimated end to end: " << total << " ms";
  if (!regions_.empty()) out_ << " (default's groups; alt: a task only aggressive's groups have)";
  out_ << "\n" << std::defaultfloat << std::flush;
}

void Session::report_round(size_t t, int64_t round, int measured, int errors, std::optional<double> accuracy) {
  const TaskRun& run = runs_[t];
  TuneSummary s = summary();
  RoundReport r;
  r.round = round;
  r.task_key = run.task.key;
  r.task_name = run.task.name;
  r.trials = trials_;
  r.total = o_.trials;
  r.session_trials = trials_ - resumed_trials_;
  r.measured = measured;
  r.errors = errors;
  r.elapsed_s = s.seconds;
  r.task_best_ms = run.summary.best_ms;
  r.task_default_ms = run.summary.default_ms;
  r.task_flops = run.task.flops;
  r.estimated_ms = s.tuned_ms();
  r.default_ms = s.default_ms();
  r.model_accuracy = accuracy;
  progress_->round(r);
}

TuneSummary Session::summary() const {
  TuneSummary out;
  for (const TaskRun& r : runs_) out.tasks.push_back(r.summary);
  out.fusion = decide_fusion(regions_, out.tasks, log_target(o_.compile.target), compiler_version());
  out.layouts = decide_layouts(layouts_, out.tasks, log_target(o_.compile.target), compiler_version());
  out.trials = trials_;
  out.interrupted = interrupted_;
  out.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  return out;
}

TuneSummary Session::run() {
  InterruptGuard guard;
  tune::TuningLog log = tune::read_tuning_log(o_.log_path, log_target(o_.compile.target), compiler_version(),
                                              /*missing_ok=*/true);
  size_t held = log.records.size() + log.foreign.size();
  TESSEL_USER_CHECK(o_.resume || held == 0, Span{})
      << "the tuning log " << o_.log_path << " already holds " << held
      << " records: pass --resume to continue that session, or another --log";
  model_ = o_.random_search ? tune::make_random_model(o_.seed) : tune::make_xgboost_model({.seed = o_.seed});
  if (!o_.cost_model_in.empty()) {
    model_->load(o_.cost_model_in);
    model_trained_ = true;
  }
  prepare();
  if (!log.foreign.empty())
    out_ << "note: " << log.foreign.size() << " records of " << o_.log_path
         << " are for another target or compiler version (" << log.foreign.front().target << ", "
         << log.foreign.front().compiler_version << "): kept, not used\n";
  if (log.dropped_partial_line) out_ << "note: the last line of " << o_.log_path << " was cut short and is dropped\n";
  std::vector<double> weights;
  for (const TaskRun& r : runs_) weights.push_back(double(r.task.weight()));
  scheduler_ = std::make_unique<tune::TaskScheduler>(weights, o_.seed);
  resume_from(log);
  trials_ = resumed_trials_;
  writer_ = std::make_unique<tune::TuningLogWriter>(o_.log_path);
  progress_ = std::make_unique<TuneProgress>(out_, o_.events_path, is_terminal(out_));
  progress_->event("start", "\"tasks\":" + std::to_string(runs_.size()) + ",\"total\":" + std::to_string(o_.trials) +
                                ",\"resumed\":" + std::to_string(resumed_trials_));
  train();
  int64_t round = 0;
  for (size_t t = 0; t < runs_.size() && !interrupt_requested() && trials_ < o_.trials; ++t) {
    if (runs_[t].summary.trials > 0) continue;  // resumed
    std::vector<tune::Candidate> first = runs_[t].search.propose(*model_, model_trained_, 1);
    int n = measure_round(t, first, 0);
    scheduler_->report(size_t(t), n, best_or_infinity(runs_[t].summary));
  }
  print_default_table();
  reweigh_layouts();
  while (!interrupt_requested() && trials_ < o_.trials) {
    size_t t = scheduler_->next();
    if (t == SIZE_MAX) break;
    int want = std::min(o_.per_round, o_.trials - trials_);
    std::vector<tune::Candidate> candidates = runs_[t].search.propose(*model_, model_trained_, want);
    if (candidates.empty()) {
      scheduler_->mark_done(t);
      continue;
    }
    ++round;
    int errors_before = runs_[t].summary.errors;
    int n = measure_round(t, candidates, round);
    std::optional<double> accuracy = batch_accuracy();
    train();
    scheduler_->report(t, n, best_or_infinity(runs_[t].summary));
    reweigh_layouts();
    report_round(t, round, n, runs_[t].summary.errors - errors_before, accuracy);
  }
  interrupted_ = interrupt_requested();
  progress_->finish();
  if (!o_.cost_model_out.empty() && model_trained_) model_->save(o_.cost_model_out);
  TuneSummary s = summary();
  for (const tune::FusionRecord& f : s.fusion) writer_->append(f);
  for (const tune::LayoutRecord& l : s.layouts) writer_->append(l);
  if (o_.check_in_model && !s.interrupted && !space_->gpu()) {
    s.model_check = check_decisions_in_model(o_, *writer_, out_);
    apply_model_checks(
        s, tune::read_tuning_log(o_.log_path, log_target(o_.compile.target), compiler_version()).in_model);
  }
  progress_->event("end", end_event_fields(s));
  return s;
}

}  // namespace

TuneSummary run_tuning(const TuneOptions& options, std::ostream& out) {
  TESSEL_USER_CHECK(options.trials >= 1 && options.per_round >= 1, Span{})
      << "--trials and the trials per round must be at least 1";
  TESSEL_USER_CHECK(!options.log_path.empty(), Span{}) << "tessel tune needs --log FILE (JSON lines, appended)";
  Session session(options, out);
  return session.run();
}

}  // namespace tessel::driver
