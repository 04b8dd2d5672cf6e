// What a tuning session with `--fusion tuned` adds (tuned_fusion.h): the
// tasks of both sides of every region where default and aggressive group
// otherwise, and after measuring, a decision per region: aggressive's groups
// when their kernels, with the best schedules found, measured faster than
// default's by the margin a tuned schedule needs (kMinTunedGain).
#pragma once

#include <string>
#include <vector>

#include "src/driver/compile_model.h"
#include "src/driver/tune_layouts.h"
#include "src/driver/tune_session.h"
#include "src/driver/tuning_tasks.h"
#include "tuner/log/tuning_log.h"

namespace tessel::driver {

struct SessionTasks {
  std::vector<TuningTask> tasks;           // default's groups' tasks first
  std::vector<bool> alternative_only;      // per task
  std::vector<FusionRegionChoice> regions; // fusion tuned: where the two sides differ
  ConvLayoutVariants layouts;              // searching layouts: each conv's layouts compiled
  size_t kernels = 0;                      // under the options' own grouping (default's for tuned)
};

// The model compiled with `options` (for fusion tuned: with default's groups,
// and again with aggressive's in every region, for the tasks only those add;
// with `search_layouts`, again for each layout alternative, tune_layouts.h).
SessionTasks session_tasks(const std::string& model_path, const PipelineOptions& pipeline,
                           const CompileOptions& options, bool search_layouts);

// A decision for each region (repeated ones once) whose tasks on both sides are measured.
std::vector<tune::FusionRecord> decide_fusion(const std::vector<FusionRegionChoice>& regions,
                                              const std::vector<TunedTask>& tasks, const std::string& target,
                                              const std::string& version);

}  // namespace tessel::driver
