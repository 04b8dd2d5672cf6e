// The last stage of a CPU tuning session: its decisions checked in the model
// itself. Each candidate was timed alone, its inputs in cache or flushed as
// the measurement chose, minutes from the default it is compared with; in
// the model, a kernel runs between its neighbours, and a small gain measured
// alone can be a loss there. So the model is compiled with the log and
// without it, the two run in alternation in one child process, each kernel
// timed in place, and every tuned schedule and re-laid-out conv that is not
// faster in place than what it replaced is recorded as not kept
// (tune::InModelRecord): compiling with the log then leaves it out.
//
//   in the model, pass 1: default 10.25 ms, tuned 9.71 ms (1.06x); 14 decisions checked, 3 left out
//     task 3f2a... (Conv_12+Relu_13): 0.412 ms in place, default 0.398 ms: left out
//
// With fusion tuned, the library without the log has default's groups: a
// region's decision is not judged (its kernels differ), only counted in
// the model's time, and a task of aggressive's groups has no default kernel.
//
// Leaving out a conv's layout brings back its default layout's kernels,
// whose tuned schedule the first pass did not see: a second pass checks
// those, and measures the library as the log now compiles it.
#pragma once

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "src/driver/compile_model.h"
#include "tuner/log/tuning_log.h"

namespace tessel::driver {

struct TuneOptions;

// A kernel of a compiled model as the check sees it: its task, the convs it
// computes and how each is laid out, and its time in place per model run.
struct PlacedKernel {
  std::string task, name;
  std::vector<std::pair<std::string, lower::ConvLayout>> convs;
  double ms = 0;
};

struct PlacedTimes {
  std::vector<PlacedKernel> kernels;  // in plan order
  double end_to_end_ms = 0;
};

// The decisions of the log compiled into `tuned`: per task, the trace of a
// schedule that is not the default's. (Re-laid-out convs are read off the two
// libraries' kernels: a conv computed in another layout than by default.)
using TunedTraces = std::map<std::string, std::string>;

// One record per decision not in `checked` (keys "task " + key, "conv " +
// conv key; each judged one is added): the time of its kernels in each
// library, kept when the tuned side's is smaller. A task's kernels that
// compute a re-laid-out conv count for the layout. A decision whose kernels
// the two libraries do not both have is not judged.
std::vector<tune::InModelRecord> judge_in_model(const PlacedTimes& by_default, const PlacedTimes& tuned,
                                                const TunedTraces& traces, std::set<std::string>& checked);

struct ModelCheck {
  int passes = 0;
  double default_ms = 0, tuned_ms = 0;  // the last pass's end to end (0: no pass finished)
  size_t checked = 0, left_out = 0;
  std::string error;  // why a pass failed (the decisions stay as they were)
};

// Runs the check's passes for a finished session (its decisions already in
// the log), appending the records to `log` and saying on `out` what each
// pass measured and left out.
ModelCheck check_decisions_in_model(const TuneOptions& options, tune::TuningLogWriter& log,
                                    std::ostream& out);

}  // namespace tessel::driver
