// `tessel tune-report`: what a tuning log says. Per task: trials, errors, the
// default schedule's time (its round-0 record) and the best, with speed-up
// and GFLOP/s; after each trial, each task's best and the estimated
// end-to-end latency (sum of runs x best time, once every task has its
// default measured); per round, the cost model's pairwise ranking accuracy on
// the candidates it scored before they were measured (held out: it trains on
// them only after). Written as CSV files and an SVG plot of the curve.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "src/driver/tune_session.h"

namespace tessel::driver {

struct CurvePoint {
  int trial = 0;          // 1-based, in log order
  std::string task;
  double ms = 0;          // this trial's best run; 0 when it failed
  double estimated_ms = 0;  // after it; 0 until every task has a time
};

struct RoundAccuracy {
  int64_t round = 0;
  std::string task;
  int candidates = 0;
  double accuracy = 0;
};

struct TuneReport {
  std::string log, target, version;
  size_t other_records = 0;  // for another target or version: left out
  TuneSummary summary;  // the tasks (without names: the log has none) and trials
  std::vector<CurvePoint> curve;
  std::vector<RoundAccuracy> accuracy;
  std::vector<tune::InModelRecord> checks;  // the last check in the model of each decision
};

TuneReport make_tune_report(const std::string& log_path);
void print_tune_report(const TuneReport& report, std::ostream& out);
// DIR/tasks.csv, DIR/curve.csv, DIR/accuracy.csv, DIR/curve.svg (DIR is created).
void write_tune_report(const TuneReport& report, const std::string& dir);

}  // namespace tessel::driver
