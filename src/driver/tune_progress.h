// What a tuning session shows while it runs: after each round a progress
// line (trials done / total, elapsed, ETA, the estimated end-to-end latency
// against the default schedules', the round's task and its best throughput,
// the cost model's accuracy on the round), rewritten in place on a terminal;
// and the same as JSON-lines events for tools ({"event":"round",...}).
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>

namespace tessel::driver {

struct RoundReport {
  int64_t round = 0;
  std::string task_key, task_name;
  int trials = 0, total = 0;     // done (resumed ones included) and asked for
  int session_trials = 0;        // done by this session: what the ETA extrapolates
  int measured = 0, errors = 0;  // in this round
  double elapsed_s = 0;
  double task_best_ms = 0, task_default_ms = 0, task_flops = 0;
  double estimated_ms = 0, default_ms = 0;  // end to end, sums of weight * time
  std::optional<double> model_accuracy;    // pairwise, on this round before training on it
};

class TuneProgress {
 public:
  // events_path empty: no events. `live`: rewrite one line (a terminal).
  TuneProgress(std::ostream& out, const std::string& events_path, bool live);
  ~TuneProgress();

  void round(const RoundReport& r);
  // A one-line event with a few fields, e.g. {"event":"start","tasks":23,"total":2000}.
  void event(const std::string& name, const std::string& json_fields);
  void finish();  // ends the live line

 private:
  std::ostream& out_;
  std::ofstream events_;
  bool live_;
  bool line_open_ = false;
};

std::string format_duration(double seconds);  // "1:05:09", "4:02"

}  // namespace tessel::driver
