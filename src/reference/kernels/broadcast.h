// Numpy broadcasting for reference kernels: walks the output in row-major
// order and keeps, for every input, the offset of the element it reads.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ir/core/tensor.h"

namespace tessel::reference::kernels {

// Calls f(out_index, offsets) for every element of out_shape, where
// offsets[k] is the row-major offset in input k (shape in_shapes[k], which
// broadcasts to out_shape). N is the number of inputs.
template <size_t N, typename F>
void for_each_broadcast(const Dims& out_shape, const std::array<const Dims*, N>& in_shapes, F&& f) {
  const size_t rank = out_shape.size();
  // strides[k][d]: how far input k's offset moves when output dim d moves by one.
  std::vector<std::array<int64_t, N>> strides(rank);
  for (size_t k = 0; k < N; ++k) {
    const Dims& in = *in_shapes[k];
    Dims s = contiguous_strides(in);
    size_t offset = rank - in.size();
    for (size_t d = 0; d < rank; ++d) strides[d][k] = (d < offset || in[d - offset] == 1) ? 0 : s[d - offset];
  }
  int64_t total = num_elements(out_shape);
  std::vector<int64_t> index(rank, 0);
  std::array<int64_t, N> offsets{};
  for (int64_t i = 0; i < total; ++i) {
    f(i, offsets);
    // Advance the odometer: bump the last dimension, carry leftwards.
    for (size_t d = rank; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) offsets[k] += strides[d][k];
      if (++index[d] < out_shape[d]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= strides[d][k] * out_shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace tessel::reference::kernels
