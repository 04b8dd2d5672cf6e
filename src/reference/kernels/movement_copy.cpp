// Byte-level element copies of the data-movement kernels.
#include "src/reference/kernels/movement_copy.h"

#include <cstring>

namespace tessel::reference::kernels {

namespace {

// Calls f(W{}) with W an unsigned word as wide as one element of dtype.
template <typename F>
void dispatch_width(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
  }
  TESSEL_ICHECK(false) << "no word type for " << dtype_name(dtype);
}

// Advances the row-major index idx over shape[0..size) (the outer axes);
// returns false after the last one.
bool next_index(std::vector<int64_t>& idx, const Dims& shape) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

template <typename W>
void strided_copy_as(const W* src, int64_t offset, const std::vector<int64_t>& strides, const Dims& shape,
                     W* dst) {
  if (shape.empty()) {
    dst[0] = src[offset];
    return;
  }
  int64_t inner = shape.back(), inner_stride = strides.back();
  std::vector<int64_t> idx(shape.size() - 1, 0);
  do {
    int64_t base = offset;
    for (size_t d = 0; d < idx.size(); ++d) base += idx[d] * strides[d];
    for (int64_t j = 0; j < inner; ++j) dst[j] = src[base + j * inner_stride];
    dst += inner;
  } while (next_index(idx, shape));
}

template <typename W>
void gather_axes_as(const W* src, const Dims& in_shape, const std::vector<std::vector<int64_t>>& maps, W fill,
                    const Dims& out_shape, W* dst) {
  if (out_shape.empty()) {
    dst[0] = src[0];
    return;
  }
  Dims strides = contiguous_strides(in_shape);
  const std::vector<int64_t>& inner_map = maps.back();
  int64_t inner = out_shape.back(), inner_stride = strides.back();
  std::vector<int64_t> idx(out_shape.size() - 1, 0);
  do {
    int64_t base = 0;
    bool inside = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t m = maps[d][size_t(idx[d])];
      inside = inside && m >= 0;
      base += m * strides[d];
    }
    for (int64_t j = 0; j < inner; ++j) {
      int64_t m = inner_map[size_t(j)];
      dst[j] = inside && m >= 0 ? src[base + m * inner_stride] : fill;
    }
    dst += inner;
  } while (next_index(idx, out_shape));
}

}  // namespace

const std::byte* bytes_of(const Tensor& t) {
  return static_cast<const std::byte*>(t.raw());
}
std::byte* bytes_of(Tensor& t) {
  return static_cast<std::byte*>(t.raw());
}

void strided_copy(const Tensor& src, int64_t offset, const std::vector<int64_t>& strides, const Dims& shape,
                  Tensor& dst) {
  TESSEL_ICHECK(strides.size() == shape.size() && src.dtype() == dst.dtype() &&
                num_elements(shape) == dst.numel())
      << "strided copy of " << src.type_str() << " to " << dst.type_str();
  if (dst.numel() == 0) return;
  dispatch_width(src.dtype(), [&](auto w) {
    using W = decltype(w);
    strided_copy_as(static_cast<const W*>(src.raw()), offset, strides, shape, static_cast<W*>(dst.raw()));
  });
}

void gather_axes(const Tensor& in, const std::vector<std::vector<int64_t>>& maps, const void* fill,
                 Tensor& out) {
  TESSEL_ICHECK(int(maps.size()) == out.rank() && in.rank() == out.rank() && in.dtype() == out.dtype())
      << "axis gather of " << in.type_str() << " to " << out.type_str();
  for (int d = 0; d < out.rank(); ++d)
    TESSEL_ICHECK(int64_t(maps[size_t(d)].size()) == out.shape()[size_t(d)]) << "map of axis " << d;
  if (out.numel() == 0) return;
  dispatch_width(in.dtype(), [&](auto w) {
    using W = decltype(w);
    W f{};
    if (fill) std::memcpy(&f, fill, sizeof(W));
    gather_axes_as(static_cast<const W*>(in.raw()), in.shape(), maps, f, out.shape(),
                   static_cast<W*>(out.raw()));
  });
}

}  // namespace tessel::reference::kernels
