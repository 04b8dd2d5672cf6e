// Sliding-window geometry of Conv, ConvTranspose and the pooling ops: kernel,
// strides, dilations, resolved pads (auto_pad applied) and output sizes. The
// shape functions and the reference kernels share it, so they cannot disagree.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph/attr.h"

namespace tessel::graph::ops {

struct WindowGeometry {
  // One entry per spatial dimension. in/out/pad entries are -1 where the input
  // size is unknown (pads of SAME_* depend on it).
  std::vector<int64_t> in, kernel, strides, dilations, pad_begin, pad_end, out;

  int spatial() const { return int(in.size()); }
  int64_t extent(int i) const { return (kernel[size_t(i)] - 1) * dilations[size_t(i)] + 1; }
};

// Reads strides, dilations, pads and auto_pad from attrs (each may be empty:
// the ONNX defaults apply) and computes the output sizes of a Conv or a pool.
// ceil_mode follows ONNX/PyTorch: the output grows to cover a partial last
// window, unless that window would start in the end padding. Bad attribute
// values are UserErrors at span.
WindowGeometry window_geometry(const Attrs& attrs, const std::vector<int64_t>& in_spatial,
                               const std::vector<int64_t>& kernel, bool ceil_mode, const Span& span);

// ConvTranspose's geometry: `out` is the output size, pads are applied to the
// full transposed output s * (in - 1) + output_padding + extent. An
// output_shape attribute fixes `out` and determines the pads (an end pad may
// then be negative: the output grows past the last contribution).
WindowGeometry conv_transpose_geometry(const Attrs& attrs, const std::vector<int64_t>& in_spatial,
                                       const std::vector<int64_t>& kernel, const Span& span);

// The kernel_shape attribute when given (checked against weight_kernel where
// that is known, -1 entries unknown), otherwise weight_kernel.
std::vector<int64_t> conv_kernel_shape(const Attrs& attrs, const std::vector<int64_t>& weight_kernel,
                                       const Span& span);

}  // namespace tessel::graph::ops
