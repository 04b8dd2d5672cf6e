// What the tests of the default CPU schedule share: a workload scheduled by
// it, and the loops above a block.
#pragma once

#include <string>
#include <vector>

#include "schedules/defaults/cpu_defaults.h"
#include "schedules/tree_query.h"
#include "tests/unit/sched_workloads_util.h"

namespace tessel::sched_workloads {

using sched::apply_default_cpu_schedule;
using sched::CpuScheduleOptions;

// The workloads of these tests are small: with `options` made eager, every
// block is worth a parallel loop, as a large one would be
// (SchedParallelThreshold tests the threshold itself).
inline CpuScheduleOptions eager_parallel(CpuScheduleOptions options = {}) {
  options.min_parallel_cycles = 1;
  return options;
}

inline Schedule scheduled_workload(Workload w, const CpuScheduleOptions& options = eager_parallel(),
                                   const Shapes& shapes = {}) {
  Schedule sch(lower_workload(w, shapes));
  apply_default_cpu_schedule(sch, options);
  return sch;
}

inline std::vector<const tir::ForNode*> loops_of(const tir::PrimFunc& f, const std::string& block) {
  std::vector<const tir::ForNode*> out;
  tir::Stmt b = sched::find_block(f, block);
  EXPECT_TRUE(b.defined()) << "no block " << block << "\n" << f;
  if (!b.defined()) return out;
  for (const tir::Stmt& l : sched::loops_above(f, b.get())) out.push_back(l.as<tir::ForNode>());
  return out;
}

inline int64_t extent(const tir::ForNode* loop) {
  const auto* imm = loop->extent.as<tir::IntImmNode>();
  return imm ? imm->value : -1;
}

inline int count_kind(const std::vector<const tir::ForNode*>& loops, tir::ForKind kind) {
  int n = 0;
  for (const tir::ForNode* l : loops) n += l->for_kind == kind;
  return n;
}

}  // namespace tessel::sched_workloads
