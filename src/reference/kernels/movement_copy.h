// Element copies that every data-movement kernel is built from. They move
// elements as raw bytes, so one kernel serves every dtype (f16 and bool too).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/core/tensor.h"
#include "src/reference/kernel_registry.h"

namespace tessel::reference::kernels {

// The other parts of the movement kernels' registration; register_movement
// (movement.cpp) calls them.
void register_movement_index(KernelRegistry& r);        // movement_index.cpp
void register_movement_scatter(KernelRegistry& r);      // movement_scatter.cpp
void register_movement_trilu_range(KernelRegistry& r);  // movement_trilu_range.cpp

// dst[i] = src[offset + sum_d i_d * strides[d]] for every index i of shape
// (row-major into dst); offsets and strides in elements, strides may be
// negative or zero. A transpose, a strided slice, a broadcast.
void strided_copy(const Tensor& src, int64_t offset, const std::vector<int64_t>& strides, const Dims& shape,
                  Tensor& dst);

// Along each axis d, output index o reads input index maps[d][o], or is
// `fill` (one element of the tensor's dtype; zeros if null) where any map
// holds -1. maps[d] has out.shape()[d] entries, each -1 or in [0, in dim).
void gather_axes(const Tensor& in, const std::vector<std::vector<int64_t>>& maps, const void* fill,
                 Tensor& out);

// Copies `bytes` bytes; tensors' raw storage as std::byte pointers.
const std::byte* bytes_of(const Tensor& t);
std::byte* bytes_of(Tensor& t);

}  // namespace tessel::reference::kernels
