// Slice ranges, Pad amounts and Split sizes of the data-movement ops.
#include "ir/graph/ops/movement_geometry.h"

#include <algorithm>

#include "ir/graph/ops/shape_helpers.h"

namespace tessel::graph::ops {

std::vector<SliceRequest> slice_requests(int rank, const std::vector<int64_t>& starts,
                                         const std::vector<int64_t>& ends,
                                         const std::optional<std::vector<int64_t>>& axes,
                                         const std::optional<std::vector<int64_t>>& steps, const Span& span) {
  size_t n = starts.size();
  TESSEL_USER_CHECK(ends.size() == n, span)
      << "'starts' has " << n << " elements but 'ends' has " << ends.size();
  TESSEL_USER_CHECK(!axes || axes->size() == n, span)
      << "'starts' has " << n << " elements but 'axes' has " << axes->size();
  TESSEL_USER_CHECK(!steps || steps->size() == n, span)
      << "'starts' has " << n << " elements but 'steps' has " << steps->size();
  std::vector<int64_t> all_axes;
  for (size_t i = 0; i < n; ++i) all_axes.push_back(int64_t(i));
  std::vector<int> norm = normalize_axes(axes ? *axes : all_axes, rank, span);
  std::vector<SliceRequest> out;
  for (size_t i = 0; i < n; ++i) {
    int64_t step = steps ? (*steps)[i] : 1;
    TESSEL_USER_CHECK(step != 0, span) << "'steps' must not contain 0";
    out.push_back({norm[i], starts[i], ends[i], step});
  }
  return out;
}

SliceAxis slice_axis(int64_t dim, const SliceRequest& r) {
  int64_t start = r.start < 0 ? r.start + dim : r.start;
  int64_t end = r.end < 0 ? r.end + dim : r.end;
  int64_t diff = 0;
  if (r.step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    diff = end - start;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    diff = start - end;
  }
  if (diff <= 0) return {0, 1, 0};
  // |step| without overflow for INT64_MIN.
  uint64_t mag = r.step > 0 ? uint64_t(r.step) : uint64_t(-(r.step + 1)) + 1;
  int64_t count = int64_t(1 + (uint64_t(diff) - 1) / mag);
  // With one element the step is never applied; 1 keeps offsets in range.
  return {start, count > 1 ? r.step : 1, count};
}

PadAmounts pad_amounts(int rank, const std::vector<int64_t>& pads,
                       const std::optional<std::vector<int64_t>>& axes, const Span& span) {
  std::vector<int64_t> all_axes;
  for (int i = 0; i < rank; ++i) all_axes.push_back(i);
  std::vector<int> norm = normalize_axes(axes ? *axes : all_axes, rank, span);
  size_t n = norm.size();
  TESSEL_USER_CHECK(pads.size() == 2 * n, span)
      << "'pads' must have " << 2 * n << " elements (two per padded axis), got " << pads.size();
  PadAmounts out{std::vector<int64_t>(size_t(rank), 0), std::vector<int64_t>(size_t(rank), 0)};
  for (size_t i = 0; i < n; ++i) {
    out.begin[size_t(norm[i])] = pads[i];
    out.end[size_t(norm[i])] = pads[n + i];
  }
  return out;
}

int64_t padded_dim(int64_t dim, int64_t begin, int64_t end, const Span& span) {
  int64_t crop = std::max<int64_t>(-begin, 0) + std::max<int64_t>(-end, 0);
  TESSEL_USER_CHECK(crop <= dim, span)
      << "pads " << begin << ", " << end << " crop more than the dimension of size " << dim << " holds";
  return dim + begin + end;
}

std::vector<int64_t> split_sizes(int64_t dim, const std::optional<std::vector<int64_t>>& split,
                                 int64_t num_outputs, size_t n, const Span& span) {
  TESSEL_USER_CHECK(!(split && num_outputs > 0), span)
      << "give either the 'split' input or the 'num_outputs' attribute, not both";
  if (split) {
    TESSEL_USER_CHECK(split->size() == n, span)
        << "'split' has " << split->size() << " entries but the node has " << n << " outputs";
    int64_t sum = 0;
    for (int64_t s : *split) {
      TESSEL_USER_CHECK(s >= 0, span) << "'split' entries must be non-negative, got " << s;
      TESSEL_USER_CHECK(!__builtin_add_overflow(sum, s, &sum), span) << "'split' entries sum past int64";
    }
    TESSEL_USER_CHECK(sum == dim, span)
        << "'split' sums to " << sum << " but the split axis has size " << dim;
    return *split;
  }
  if (num_outputs > 0) {
    TESSEL_USER_CHECK(size_t(num_outputs) == n, span)
        << "num_outputs is " << num_outputs << " but the node has " << n << " outputs";
    int64_t chunk = dim / num_outputs + (dim % num_outputs != 0 ? 1 : 0);  // ceil, without overflow
    std::vector<int64_t> out;
    for (int64_t left = dim; out.size() < n; left -= out.back()) out.push_back(std::min(chunk, left));
    return out;
  }
  TESSEL_USER_CHECK(dim % int64_t(n) == 0, span)
      << "the split axis of size " << dim << " does not divide into " << n << " equal outputs";
  return std::vector<int64_t>(n, dim / int64_t(n));
}

}  // namespace tessel::graph::ops
