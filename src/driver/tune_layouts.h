// What a tuning session that searches conv layouts adds: the model compiled
// once more per layout alternative (each conv in its next candidate layout,
// sched::cpu_conv_layout_candidates), the tasks only those compiles have,
// and after measuring, a decision per conv: the layout whose kernels, with
// the best schedules found, took least time added up over the conv's
// instances in the model, when it beat the default's by the margin a tuned
// schedule needs (kMinTunedGain). Compiling with the log applies the
// decisions by conv (lower::conv_key), so they carry over to the same conv
// in another model.
#pragma once

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "src/driver/compile_model.h"
#include "src/driver/tuning_tasks.h"
#include "tuner/log/tuning_log.h"

namespace tessel::driver {

struct TunedTask;

// Per conv (lower::conv_key), each layout compiled: the task of every
// kernel that computes the conv that way, one entry per kernel.
struct ConvLayoutVariant {
  lower::ConvLayout layout;
  std::vector<std::string> tasks;
};
using ConvLayoutVariants = std::map<std::string, std::vector<ConvLayoutVariant>>;  // the default's first

// Adds the layouts `kernels` (one compile of the model, its tasks `tasks`)
// computes each conv in; a layout already listed for the conv is not added
// again. Returns how many it added.
size_t add_layout_variants(const std::vector<CompiledKernel>& kernels, const std::vector<TuningTask>& tasks,
                           ConvLayoutVariants& variants);

// A decision for each conv with another layout whose kernels are all measured.
std::vector<tune::LayoutRecord> decide_layouts(const ConvLayoutVariants& variants,
                                               const std::vector<TunedTask>& tasks, const std::string& target,
                                               const std::string& version);

// A layout whose kernels take more than this many times the conv's fastest
// layout's: tuning gains a kernel rarely come near it, so trials go elsewhere.
inline constexpr double kHopelessLayoutRatio = 1.25;

// The tasks of the conv layouts that are hopeless by that measure, their
// times the best each task measured so far (a layout with an unmeasured
// task is neither hopeless nor the fastest yet). A task of several layouts
// is hopeless only if all of them are.
std::set<std::string> hopeless_layout_tasks(const ConvLayoutVariants& variants,
                                            const std::map<std::string, double>& best_ms);

// "conv layouts: 12 convs measured in other layouts, 3 changed" and a line per changed conv.
void print_layout_decisions(const std::vector<tune::LayoutRecord>& decisions, std::ostream& out);

// The decisions a log holds, by conv: the last one per conv (a user error
// naming the conv when a layout's form is not one this compiler knows).
std::map<std::string, lower::ConvLayout> decided_layouts(const std::vector<tune::LayoutRecord>& records);

}  // namespace tessel::driver
