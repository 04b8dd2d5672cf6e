// Fusion by measurement (`--fusion tuned`): default's groups, except in the
// regions where aggressive groups the nodes otherwise (fusion_regions.h) and
// a tuning session measured aggressive's kernels there faster than
// default's. A tuning session with `--fusion tuned` tunes the tasks of both
// sides and logs one decision per region (tuning_log.h's FusionRecord);
// compiling with the log applies them. A region is known by its two sides'
// task keys, so a decision carries over to the same subgraph in another model.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "ir/graph/graph.h"
#include "src/driver/tuned_schedules.h"
#include "src/lower/lower_group.h"
#include "src/passes/fusion_regions.h"

namespace tessel::driver {

struct FusionRegionChoice {
  std::string key;                                   // fusion_region_key of the two sides
  std::vector<std::string> base_tasks, alternative_tasks;  // per group: its task key
  std::string base_ops, alternative_ops;             // "Flatten+Gemm | Softmax"
  bool decided = false;      // the log has a decision for it
  bool alternative = false;  // aggressive's groups were taken
  bool reverted = false;     // they were asked for but would have made the kernels depend in a cycle
};

std::string fusion_region_key(const std::vector<std::string>& base_tasks,
                              const std::vector<std::string>& alternative_tasks);

// g's groups under fusion tuned, the regions on `regions`. Each region takes
// aggressive's groups when `tuned` decided so, or, with `take_every_region`
// (a tuning session compiling the alternatives it measures), always. A user
// error when there is neither.
std::vector<passes::NodeGroup> tuned_fusion_groups(const graph::Graph& g, const lower::LayoutChoices& layouts,
                                                   const TunedSchedules* tuned, bool take_every_region,
                                                   std::vector<FusionRegionChoice>& regions);

// "fusion tuned: 3 regions where default and aggressive group otherwise: 1 as aggressive, ..."
// and a line per region.
void print_fusion_regions(const std::vector<FusionRegionChoice>& regions, std::ostream& out);

}  // namespace tessel::driver
