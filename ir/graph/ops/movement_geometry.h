// Index geometry of the data-movement ops: Slice ranges, Pad amounts and
// Split sizes, resolved exactly per the ONNX spec. The shape functions and the
// reference kernels share it, so they cannot disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/core/diagnostics.h"

namespace tessel::graph {
class OpRegistry;
}

namespace tessel::graph::ops {

// The parts of the movement family's registration; register_movement_ops
// (movement.cpp) calls the others.
void register_movement_index_ops(OpRegistry& r);        // Pad, Gather, Tile, ... (movement_index.cpp)
void register_movement_scatter_ops(OpRegistry& r);      // GatherND, ScatterND, ScatterElements
void register_movement_trilu_range_ops(OpRegistry& r);  // Trilu, Range (movement_trilu_range.cpp)

// What one axis of a Slice asks for, axis already normalised.
struct SliceRequest {
  int axis = 0;
  int64_t start = 0, end = 0, step = 1;
};

// The elements start, start + step, ... (count of them) along one axis.
struct SliceAxis {
  int64_t start = 0, step = 1, count = 0;
};

// Pairs starts/ends/axes/steps (axes default 0..n-1, steps default 1), checks
// equal lengths, unique in-range axes and non-zero steps.
std::vector<SliceRequest> slice_requests(int rank, const std::vector<int64_t>& starts,
                                         const std::vector<int64_t>& ends,
                                         const std::optional<std::vector<int64_t>>& axes,
                                         const std::optional<std::vector<int64_t>>& steps, const Span& span);

// Clamps start and end for a dimension of size dim as the spec says: negative
// values count from the end; start into [0, dim] ([0, dim-1] for negative
// steps), end into [0, dim] ([-1, dim-1] for negative steps).
SliceAxis slice_axis(int64_t dim, const SliceRequest& r);

// Pad amounts per input axis (negative values crop), from the ONNX `pads`
// layout [b_0, b_1, ..., e_0, e_1, ...] over `axes` (default: every axis).
struct PadAmounts {
  std::vector<int64_t> begin, end;
};
PadAmounts pad_amounts(int rank, const std::vector<int64_t>& pads,
                       const std::optional<std::vector<int64_t>>& axes, const Span& span);

// Output size of one padded axis. Cropping happens before padding (as ONNX
// Runtime does), so more cropping than the axis holds is a UserError.
int64_t padded_dim(int64_t dim, int64_t begin, int64_t end, const Span& span);

// Sizes of the outputs of a Split of a dimension of size dim into n outputs:
// the `split` input when given, else num_outputs (> 0) chunks of
// ceil(dim / num_outputs) with a smaller last one, else n equal parts.
std::vector<int64_t> split_sizes(int64_t dim, const std::optional<std::vector<int64_t>>& split,
                                 int64_t num_outputs, size_t n, const Span& span);

}  // namespace tessel::graph::ops
