// The execution plan of a compiled graph: which buffer each kernel parameter
// is (a graph input or output, a weight, a slice of the scratch arena), the
// kernels in order, the loops of Scans, and the weights laid out 64-byte
// aligned. Intermediates share the arena by liveness
// (src/runtime/memory_planner.h); since every parameter of a step is live
// during the step, no kernel sees two parameters in the same memory, which
// the backend's noalias relies on.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph/graph.h"
#include "src/runtime/plan.h"

namespace tessel::driver {

struct CompiledKernel;

// The kernels [begin, end) of the plan order that are a Scan's body
// (ir/graph/scan.h); parent: the region whose body holds the Scan (-1: the
// model's graph). Regions come parents first.
struct ScanRegion {
  const graph::Node* scan = nullptr;
  int parent = -1;
  size_t begin = 0, end = 0;
};

struct ExecutionPlan {
  rt::Plan plan;
  std::vector<uint8_t> weights;
  uint64_t unshared_arena_bytes = 0;  // what the intermediates would take without reuse
};

ExecutionPlan build_execution_plan(const graph::Graph& g, const std::vector<CompiledKernel>& kernels,
                                   const std::vector<ScanRegion>& regions = {});

}  // namespace tessel::driver
