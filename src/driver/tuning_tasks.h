// The tuner's tasks: one per distinct fused group of a compiled model, keyed
// by the structural hash of the group's lowered function with its blocks
// named by position (b0, b1, ...: the names of values, nodes and blocks do
// not count, so MobileNet's repeated blocks are one task run several times),
// weighted by how often the model runs it. A schedule found for the task
// applies to each of its kernels with the blocks mapped back by position. The task table is what
// `tessel tasks` prints and a tuning session prints first: where the model's
// time goes under the default schedules, so that trials go where they pay.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include <numeric>

#include "src/driver/compile_model.h"
#include "src/driver/run_compiled.h"

namespace tessel::driver {

struct TuningTask {
  std::string key;              // 16 hex digits: tir::structural_hash of the lowered function
  std::string name;             // the group name of its first kernel
  tir::PrimFunc func;           // the lowered function (before any schedule), blocks named by position
  std::vector<size_t> kernels;  // indices into the compiled kernels (plan order) that run it
  std::vector<uint64_t> calls;  // per kernel: its calls in one run of the model (a loop's body: every step)
  double flops = 0, bytes = 0;  // per run of one kernel
  // Per input of func: not a constant (an activation a model run has just
  // written, or the model's input), so found in cache (MeasureOptions::warm_inputs).
  std::vector<bool> warm_inputs;

  size_t weight() const { return size_t(std::accumulate(calls.begin(), calls.end(), uint64_t(0))); }
};

// f with its blocks renamed b0, b1, ... in program order.
tir::PrimFunc with_canonical_block_names(const tir::PrimFunc& f);
// "%016llx" of the structural hash of `lowered` as it is (canonical names: extract_tasks).
std::string task_key(const tir::PrimFunc& lowered);

// The tasks of a compiled model, in the order their first kernels run.
std::vector<TuningTask> extract_tasks(const CompiledGraph& compiled);

// One row per task, the costliest first: runs per inference, FLOPs and
// bytes per run, the default schedule's median per run (the median of its
// kernels' medians in `profile`), and its share of the time in kernels.
void print_task_table(const std::vector<TuningTask>& tasks, const ModelProfile& profile, std::ostream& out);

}  // namespace tessel::driver
