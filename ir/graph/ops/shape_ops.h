// Pieces of the shape family shared across its files: the second half of its
// registration, and the range of dimensions a Shape node reports (the shape
// function and the reference kernel both resolve it here).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

namespace tessel::graph {
class OpRegistry;
}

namespace tessel::graph::ops {

// Shape, Size, ConstantOfShape (shape_query.cpp); register_shape_ops calls it.
void register_shape_query_ops(OpRegistry& r);

// [first, last) of the input's dimensions per Shape-15's start/end: negative
// values count from the back, both clamp to [0, rank], last < first is empty.
inline std::pair<int, int> shape_range(int rank, int64_t start, int64_t end) {
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return int(std::clamp<int64_t>(v, 0, rank));
  };
  int first = clamp(start);
  return {first, std::max(first, clamp(end))};
}

}  // namespace tessel::graph::ops
