// `tessel check`: the compiled model against the reference executor on the
// same seeded inputs, output by output and, with per_kernel, kernel by
// kernel (each kernel fed the reference's values of its inputs, so the first
// kernel that diverges is named, not every kernel after it).
#pragma once

#include <ostream>

#include "ir/graph/graph.h"
#include "src/driver/compile_model.h"

namespace tessel::driver {

struct CheckOptions {
  CompileOptions compile;
  bool per_kernel = false;
  uint64_t seed = 0;
  double tolerance = 1e-4;  // on max|ours - reference| / max|reference|
};

// Prints the report; returns the number of outputs (and kernels) that fail.
int run_check(graph::Graph& g, const CheckOptions& options, std::ostream& out);

// max |got - want| and that divided by max |want| (0 when both are 0; exact
// comparison for integers and bools); NaN where exactly one side is NaN.
struct ErrorStats {
  double max_abs = 0;
  double max_rel = 0;
};
ErrorStats error_stats(const Tensor& got, const Tensor& want);

}  // namespace tessel::driver
