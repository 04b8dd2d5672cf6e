// Outputs whose extent along one axis only a run decides (NonZero, Compress,
// NonMaxSuppression): the kernels write them at their upper bound, the data in
// the first `size` entries along the axis; the caller gets them cut to size.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::rt {

// Moves the first `size` entries along `axis` of a dense row-major tensor of
// `dims` (the bound) to the front of its memory, so that it holds the dense
// tensor with dims[axis] = size. Each block moves to an address no later than
// its own, so the move is in place.
inline void compact_along_axis(void* data, const std::vector<int64_t>& dims, size_t element_bytes,
                               size_t axis, int64_t size) {
  int64_t outer = 1, inner = int64_t(element_bytes);
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  int64_t bound = dims[axis];
  if (size == bound || outer == 0 || inner == 0) return;
  auto* bytes = static_cast<uint8_t*>(data);
  for (int64_t o = 0; o < outer; ++o)
    std::memmove(bytes + o * size * inner, bytes + o * bound * inner, size_t(size * inner));
}

// After a run whose outputs are in the caller's memory: each output of
// plan.data_dependent compacted to its extent, which read_size reads from the
// extent's buffer; sizes[k], when given, receives the k-th extent. An extent
// outside [0, bound] is a StatusError (TESSEL_ERR_KERNEL_FAILED).
void cut_data_dependent_outputs(const Plan& plan, const std::function<int64_t(uint32_t buffer)>& read_size,
                                tessel_tensor* outputs, int64_t* sizes);

}  // namespace tessel::rt
