// Reference kernels of the shape ops. Reshape, Flatten, Squeeze and Unsqueeze
// copy the bytes unchanged; Expand broadcasts; Shape, Size, ConstantOfShape
// write metadata or a fill. All move raw bytes, so every dtype works.
#include <cstring>

#include "ir/graph/ops/shape_ops.h"
#include "src/reference/kernel_registry.h"
#include "src/reference/kernels/movement_copy.h"

namespace tessel::reference::kernels {

namespace {

using graph::Node;
using Inputs = std::vector<const Tensor*>;

// The output has the input's elements in the same row-major order.
void same_bytes(const Node&, const Inputs& in, std::vector<Tensor>& out) {
  TESSEL_ICHECK(in[0]->nbytes() == out[0].nbytes()) << in[0]->type_str() << " vs " << out[0].type_str();
  if (out[0].nbytes() > 0) std::memcpy(out[0].raw(), in[0]->raw(), out[0].nbytes());
}

// Reads input element (index aligned to the right) with stride 0 along the
// axes it broadcasts.
void expand(const Node&, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  Dims in_strides = contiguous_strides(x.shape());
  std::vector<int64_t> strides(size_t(y.rank()), 0);
  size_t lead = size_t(y.rank() - x.rank());
  for (size_t d = 0; d < size_t(x.rank()); ++d) strides[lead + d] = x.shape()[d] == 1 ? 0 : in_strides[d];
  strided_copy(x, 0, strides, y.shape(), y);
}

void shape(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  auto [first, last] = graph::ops::shape_range(x.rank(), n.attrs.get_int("start"), n.attrs.get_int("end"));
  for (int d = first; d < last; ++d) out[0].set_i64(d - first, x.shape()[size_t(d)]);
}

void size(const Node&, const Inputs& in, std::vector<Tensor>& out) {
  out[0].set_i64(0, in[0]->numel());
}

void constant_of_shape(const Node& n, const Inputs&, std::vector<Tensor>& out) {
  const Tensor& value = n.attrs.get_tensor("value");
  size_t esize = dtype_size(value.dtype());
  std::byte* dst = bytes_of(out[0]);
  for (int64_t i = 0; i < out[0].numel(); ++i) std::memcpy(dst + size_t(i) * esize, value.raw(), esize);
}

}  // namespace

void register_shape(KernelRegistry& r) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) r.add(op, same_bytes);
  r.add("Expand", expand);
  r.add("Shape", shape);
  r.add("Size", size);
  r.add("ConstantOfShape", constant_of_shape);
}

}  // namespace tessel::reference::kernels
