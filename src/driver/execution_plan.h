// The execution plan of a compiled graph: which buffer each kernel parameter
// is (a graph input or output, a weight, a slice of the scratch arena), the
// kernels in order, and the weights laid out 64-byte aligned. Intermediates
// share the arena by liveness (src/runtime/memory_planner.h); since every
// parameter of a step is live during the step, no kernel sees two parameters
// in the same memory, which the backend's noalias relies on.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph/graph.h"
#include "src/runtime/plan.h"

namespace tessel::driver {

struct CompiledKernel;

struct ExecutionPlan {
  rt::Plan plan;
  std::vector<uint8_t> weights;
  uint64_t unshared_arena_bytes = 0;  // what the intermediates would take without reuse
};

ExecutionPlan build_execution_plan(const graph::Graph& g, const std::vector<CompiledKernel>& kernels);

}  // namespace tessel::driver
