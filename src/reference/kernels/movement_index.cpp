// Reference kernels of the data-movement ops that compute a source index per
// element: Pad (constant, reflect, edge, wrap), Gather, GatherElements.
#include <algorithm>
#include <cstring>

#include "ir/graph/ops/movement_geometry.h"
#include "ir/graph/ops/shape_helpers.h"
#include "src/reference/kernels/movement_copy.h"

namespace tessel::reference::kernels {

namespace {

using graph::Node;
using Inputs = std::vector<const Tensor*>;

// Input index of each output index along one padded axis of size n (-1: the
// constant). Negative pads crop first; the modes then see the cropped axis.
// Reflect follows numpy: pads longer than the axis keep reflecting.
std::vector<int64_t> pad_map(int64_t n, int64_t begin, int64_t end, const std::string& mode) {
  int64_t crop = std::max<int64_t>(-begin, 0);
  int64_t kept = n - crop - std::max<int64_t>(-end, 0);
  int64_t lead = std::max<int64_t>(begin, 0);
  std::vector<int64_t> map;
  for (int64_t o = 0; o < n + begin + end; ++o) {
    int64_t i = o - lead;
    if (i < 0 || i >= kept) {
      if (mode == "constant")
        i = -1;
      else if (mode == "edge")
        i = std::clamp<int64_t>(i, 0, kept - 1);
      else if (mode == "wrap")
        i = (i % kept + kept) % kept;
      else if (kept == 1)
        i = 0;  // reflect of one element repeats it
      else {
        int64_t period = 2 * (kept - 1);
        i = (i % period + period) % period;
        if (i >= kept) i = period - i;
      }
    }
    map.push_back(i < 0 ? -1 : crop + i);
  }
  return map;
}

void pad(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::optional<std::vector<int64_t>> axes;
  if (in.size() > 3 && in[3]) axes = in[3]->to_i64_vector();
  graph::ops::PadAmounts p = graph::ops::pad_amounts(x.rank(), in[1]->to_i64_vector(), axes, n.span());
  const std::string& mode = n.attrs.get_string("mode");
  std::vector<std::vector<int64_t>> maps;
  for (size_t d = 0; d < size_t(x.rank()); ++d)
    maps.push_back(pad_map(x.shape()[d], p.begin[d], p.end[d], mode));
  const void* fill = in.size() > 2 && in[2] && in[2]->numel() == 1 ? in[2]->raw() : nullptr;
  gather_axes(x, maps, fill, out[0]);
}

// Indices as int64 in [0, size): negative ones count from the end, others
// are a UserError naming the node.
std::vector<int64_t> checked_indices(const Tensor& idx, int64_t size, int axis, const Node& n) {
  std::vector<int64_t> v = idx.to_i64_vector();
  for (int64_t& i : v) {
    int64_t given = i;
    if (i < 0) i += size;
    TESSEL_USER_CHECK(i >= 0 && i < size, n.span())
        << "index " << given << " is out of range [" << -size << ", " << size << ") for data axis " << axis;
  }
  return v;
}

void gather(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& data = *in[0];
  int axis = graph::ops::normalize_axis(n.attrs.get_int("axis"), data.rank(), n.span());
  int64_t size = data.shape()[size_t(axis)];
  std::vector<int64_t> idx = checked_indices(*in[1], size, axis, n);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= data.shape()[size_t(d)];
  for (int d = axis + 1; d < data.rank(); ++d) inner *= data.shape()[size_t(d)];
  size_t chunk = size_t(inner) * dtype_size(data.dtype());
  if (chunk == 0) return;
  std::byte* dst = bytes_of(out[0]);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) {
      std::memcpy(dst, bytes_of(data) + size_t(o * size + i) * chunk, chunk);
      dst += chunk;
    }
}

void gather_elements(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& data = *in[0];
  const Tensor& indices = *in[1];
  int axis = graph::ops::normalize_axis(n.attrs.get_int("axis"), data.rank(), n.span());
  std::vector<int64_t> idx = checked_indices(indices, data.shape()[size_t(axis)], axis, n);
  if (idx.empty()) return;
  Dims strides = contiguous_strides(data.shape());
  const Dims& shape = indices.shape();
  size_t esize = dtype_size(data.dtype());
  std::vector<int64_t> pos(shape.size(), 0);  // row-major position in indices
  for (size_t k = 0; k < idx.size(); ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < pos.size(); ++d) src += (int(d) == axis ? idx[k] : pos[d]) * strides[d];
    std::memcpy(bytes_of(out[0]) + k * esize, bytes_of(data) + size_t(src) * esize, esize);
    for (size_t d = pos.size(); d-- > 0 && ++pos[d] == shape[d];) pos[d] = 0;
  }
}

}  // namespace

void register_movement_index(KernelRegistry& r) {
  r.add("Pad", pad);
  r.add("Gather", gather);
  r.add("GatherElements", gather_elements);
}

}  // namespace tessel::reference::kernels
