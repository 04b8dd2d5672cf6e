// Which axes a reduce op folds: resolved from its axes input and attributes
// the same way for the shape functions (reduce.cpp) and the reference kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/core/diagnostics.h"

namespace tessel::graph::ops {

// reduced[d] is true when axis d of a rank-`rank` input is folded. Empty axes
// fold every axis, or none when noop_with_empty_axes is set. Axes out of range
// or repeated are a UserError.
std::vector<bool> reduced_axes(const std::vector<int64_t>& axes, int rank, bool noop_with_empty_axes,
                               const Span& span);

}  // namespace tessel::graph::ops
