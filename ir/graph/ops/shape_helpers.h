// Helpers that shape functions of several op families share: axis
// normalisation, numpy broadcasting over possibly-unknown dimensions.
#pragma once

#include <vector>

#include "ir/graph/op_registry.h"

namespace tessel::graph::ops {

// Maps axis in [-rank, rank) to [0, rank); anything else is a UserError.
int normalize_axis(int64_t axis, int rank, const Span& span);
std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int rank, const Span& span);

// Numpy broadcasting of several shapes. Unknown dimensions broadcast to
// unknown unless the other side fixes them; a mismatch is a UserError.
std::vector<Dim> broadcast_dims(const std::vector<const TensorType*>& types, const Span& span);

// Requires every listed input to have the dtype of input 0.
void check_same_dtype(const InferContext& ctx, const std::vector<size_t>& inputs);

// Elements of the node's first output, 0 when its shape is not static.
int64_t output_elements(const Node& node);

}  // namespace tessel::graph::ops
