// A tuning session over a model (`tessel tune`): the model compiled with the
// default schedules, its tasks (tuning_tasks.h), each task's default schedule
// measured first (the task table), then rounds of trials: the task scheduler
// picks a task, its search proposes candidates ranked by the cost model,
// each is measured in a child process (a crash, a hang or a wrong output is
// a recorded error) and appended to the log, and the cost model retrains on
// the round. A candidate about to become its task's best is timed again
// alternately with the default (tune::compare_with_baseline) and ranks by
// that ratio. A progress line after each round; JSON-lines events for tools;
// SIGINT stops after the measurement in flight with everything kept.
// At the end, the decisions are checked in the model itself and those
// slower there are left out (model_check.h).
// `--resume` reads the log back: its measured candidates are not measured
// again and their trials count.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "src/driver/compile_model.h"
#include "src/driver/model_check.h"
#include "src/driver/targets.h"  // log_target, compiler_version
#include "tuner/log/tuning_log.h"
#include "tuner/measure/measure.h"

namespace tessel::driver {

struct TuneOptions {
  std::string model_path;
  PipelineOptions pipeline;
  CompileOptions compile;     // its target's cores are the threads the schedules fill
  std::string log_path;
  int trials = 1000;          // measured candidates in all, the default schedules included
  int per_round = 8;          // measured per round of one task
  uint64_t seed = 0;
  bool resume = false;        // continue the log (else it must not hold records yet)
  bool random_search = false; // rank with a random model: the baseline search efficiency is measured against
  bool search_layouts = true;  // each conv's other layouts measured too (tune_layouts.h)
  bool check_in_model = true;  // a CPU session's decisions checked in the model at the end (model_check.h)
  std::string cost_model_in;  // a saved cost model to start from (warm start)
  std::string cost_model_out; // where to save the cost model at the end
  std::string events_path;    // JSON lines, one per event; empty: none
  tune::MeasureOptions measure;
};

struct TunedTask {
  std::string key, name;
  size_t weight = 0;
  double flops = 0;
  double default_ms = 0, best_ms = 0;  // 0 while unmeasured
  int trials = 0, errors = 0;
  // Only aggressive's groups of fusion tuned's regions, or a conv's other
  // layout, have it: it counts in the estimates through the decisions, not
  // by its weight.
  bool alternative_only = false;
  bool left_out = false;  // its best was slower in the model (model_check.h): the default applies
  // What compile --tuning-log applies: the best when it beat the default by
  // kMinTunedGain and was not left out.
  double applied_ms() const;
  // One more trial: measured in `ms` (a round-0 one is the default's), or failed.
  void count(bool ok, double ms, int64_t round);
};

struct TuneSummary {
  std::vector<TunedTask> tasks;
  std::vector<tune::FusionRecord> fusion;  // fusion tuned: a decision per region whose tasks are measured
  std::vector<tune::LayoutRecord> layouts;  // searching layouts: a decision per measured conv
  int trials = 0;          // measured in this session and earlier ones (resumed)
  bool interrupted = false;
  double seconds = 0;
  ModelCheck model_check;     // passes 0: not checked
  double default_ms() const;  // sum of weight * default time (default's groups)
  double tuned_ms() const;    // sum of weight * applied time, the regions as decided
};

TuneSummary run_tuning(const TuneOptions& options, std::ostream& out);

// The checks in the model (a log's, for the summary's target and version)
// applied to the summary: a task whose last check left its schedule out
// counts at its default time, a conv whose last check left its layout out
// at its default layout's.
void apply_model_checks(TuneSummary& summary, const std::vector<tune::InModelRecord>& checks);

// The fields of the session's "end" event (a JSON object's members): trials,
// estimates, fusion decisions, the check in the model.
std::string end_event_fields(const TuneSummary& summary);

// The per-task table of a summary (default, best, speedup, trials, errors)
// and the estimated end-to-end latency.
void print_tune_summary(const TuneSummary& summary, std::ostream& out);

}  // namespace tessel::driver
