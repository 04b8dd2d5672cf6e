// Reference kernels of the data-movement ops that move whole ranges:
// Transpose, Concat, Split, Slice, Tile, DepthToSpace, SpaceToDepth.
#include <cstring>

#include "ir/graph/ops/movement_geometry.h"
#include "ir/graph/ops/shape_helpers.h"
#include "src/reference/kernels/movement_copy.h"

namespace tessel::reference::kernels {

namespace {

using graph::Node;
using Inputs = std::vector<const Tensor*>;

// out = in viewed as view_shape, axes permuted by perm (out's shape must have
// the permuted view's element count).
void permute_copy(const Tensor& in, const Dims& view_shape, const std::vector<int>& perm, Tensor& out) {
  Dims view_strides = contiguous_strides(view_shape);
  std::vector<int64_t> strides;
  Dims shape;
  for (int p : perm) {
    strides.push_back(view_strides[size_t(p)]);
    shape.push_back(view_shape[size_t(p)]);
  }
  strided_copy(in, 0, strides, shape, out);
}

void transpose(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<int64_t> perm = n.attrs.get_ints("perm");
  std::vector<int> axes;
  for (int i = 0; i < x.rank(); ++i) axes.push_back(perm.empty() ? x.rank() - 1 - i : int(perm[size_t(i)]));
  for (int& a : axes) a = graph::ops::normalize_axis(a, x.rank(), n.span());
  permute_copy(x, x.shape(), axes, out[0]);
}

// Elements before and after `axis` in row-major order.
int64_t outer_size(const Dims& shape, int axis) {
  int64_t s = 1;
  for (int d = 0; d < axis; ++d) s *= shape[size_t(d)];
  return s;
}

int64_t inner_size(const Dims& shape, int axis) {
  int64_t s = 1;
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) s *= shape[d];
  return s;
}

void concat(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  Tensor& y = out[0];
  int axis = graph::ops::normalize_axis(n.attrs.get_int("axis"), y.rank(), n.span());
  size_t esize = dtype_size(y.dtype());
  int64_t outer = outer_size(y.shape(), axis);
  size_t out_row = size_t(y.shape()[size_t(axis)] * inner_size(y.shape(), axis)) * esize;
  size_t at = 0;  // byte offset of the current input inside an output row
  for (const Tensor* x : in) {
    size_t row = size_t(x->shape()[size_t(axis)] * inner_size(x->shape(), axis)) * esize;
    for (int64_t o = 0; o < outer && row > 0; ++o)
      std::memcpy(bytes_of(y) + size_t(o) * out_row + at, bytes_of(*x) + size_t(o) * row, row);
    at += row;
  }
}

void split(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  int axis = graph::ops::normalize_axis(n.attrs.get_int("axis"), x.rank(), n.span());
  size_t esize = dtype_size(x.dtype());
  int64_t outer = outer_size(x.shape(), axis);
  size_t in_row = size_t(x.shape()[size_t(axis)] * inner_size(x.shape(), axis)) * esize;
  size_t at = 0;
  for (Tensor& y : out) {
    size_t row = size_t(y.shape()[size_t(axis)] * inner_size(y.shape(), axis)) * esize;
    for (int64_t o = 0; o < outer && row > 0; ++o)
      std::memcpy(bytes_of(y) + size_t(o) * row, bytes_of(x) + size_t(o) * in_row + at, row);
    at += row;
  }
}

std::optional<std::vector<int64_t>> optional_ints(const Inputs& in, size_t i) {
  if (i >= in.size() || in[i] == nullptr) return std::nullopt;
  return in[i]->to_i64_vector();
}

void slice(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  auto requests = graph::ops::slice_requests(x.rank(), in[1]->to_i64_vector(), in[2]->to_i64_vector(),
                                             optional_ints(in, 3), optional_ints(in, 4), n.span());
  std::vector<int64_t> strides = contiguous_strides(x.shape());
  int64_t offset = 0;
  for (const graph::ops::SliceRequest& r : requests) {
    graph::ops::SliceAxis a = graph::ops::slice_axis(x.shape()[size_t(r.axis)], r);
    if (a.count == 0) return;  // the output is empty
    offset += a.start * strides[size_t(r.axis)];
    strides[size_t(r.axis)] *= a.step;
  }
  strided_copy(x, offset, strides, out[0].shape(), out[0]);
}

void tile(const Node&, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<std::vector<int64_t>> maps(size_t(x.rank()));
  for (size_t d = 0; d < maps.size(); ++d)
    for (int64_t o = 0; o < out[0].shape()[d]; ++o) maps[d].push_back(o % x.shape()[d]);
  gather_axes(x, maps, nullptr, out[0]);
}

// NCHW -> N, C/bs^2, H*bs, W*bs: the channel splits into (bs, bs, C') for
// DCR and (C', bs, bs) for CRD, then the block axes interleave with H and W.
void depth_to_space(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Dims& s = in[0]->shape();
  int64_t bs = n.attrs.get_int("blocksize"), c = s[1] / (bs * bs);
  if (n.attrs.get_string("mode") == "DCR")
    return permute_copy(*in[0], {s[0], bs, bs, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2}, out[0]);
  permute_copy(*in[0], {s[0], c, bs, bs, s[2], s[3]}, {0, 1, 4, 2, 5, 3}, out[0]);
}

// NCHW -> N, C*bs^2, H/bs, W/bs with the channel ordered (bs_h, bs_w, C).
void space_to_depth(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Dims& s = in[0]->shape();
  int64_t bs = n.attrs.get_int("blocksize");
  permute_copy(*in[0], {s[0], s[1], s[2] / bs, bs, s[3] / bs, bs}, {0, 3, 5, 1, 2, 4}, out[0]);
}

}  // namespace

void register_movement(KernelRegistry& r) {
  r.add("Transpose", transpose);
  r.add("Concat", concat);
  r.add("Split", split);
  r.add("Slice", slice);
  r.add("Tile", tile);
  r.add("DepthToSpace", depth_to_space);
  r.add("SpaceToDepth", space_to_depth);
  register_movement_index(r);
  register_movement_scatter(r);
  register_movement_trilu_range(r);
}

}  // namespace tessel::reference::kernels
