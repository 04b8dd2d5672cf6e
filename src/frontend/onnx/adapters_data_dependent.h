// What the adapters of ops with data-dependent output extents share
// (adapters_data_dependent.cpp, adapters_nms.cpp).
#pragma once

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

// The [n, n] constant of dtype t whose entry (i, j) is 1 where j < i: which
// positions come before which.
graph::Value* earlier_positions(AdaptContext& c, int64_t n, DType t);

// y[.., i] = x[.., 0] + ... + x[.., i - 1] along the last axis, of static
// extent `n`, of an int64 tensor: work n times the tensor's size.
graph::Value* exclusive_prefix_along_last(AdaptContext& c, graph::Value* x, int64_t n);
// The same for an int64 vector of any static length, in blocks: linear work.
graph::Value* exclusive_prefix_sum(AdaptContext& c, graph::Value* x);

// The positions of a bool vector where it holds, in order, padded to its
// length with position 0; and how many hold (a scalar).
struct SelectedFirst {
  graph::Value* order = nullptr;
  graph::Value* count = nullptr;
};
SelectedFirst selected_first(AdaptContext& c, graph::Value* mask);

void register_non_max_suppression_adapter(AdapterTable& t);
void register_unique_adapter(AdapterTable& t);

}  // namespace tessel::onnx_frontend
