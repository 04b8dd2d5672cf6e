// Reference kernels of GatherND, ScatterND and ScatterElements. Scatters
// apply updates in index order, so with reduction none a repeated index keeps
// the last update (ONNX leaves that case undefined).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "ir/graph/ops/shape_helpers.h"
#include "src/reference/kernels/movement_copy.h"

namespace tessel::reference::kernels {

namespace {

using graph::Node;
using Inputs = std::vector<const Tensor*>;

int64_t checked_index(int64_t i, int64_t size, size_t axis, const Node& n) {
  TESSEL_USER_CHECK(i >= -size && i < size, n.span())
      << "index " << i << " is out of range [" << -size << ", " << size << ") for data axis " << axis;
  return i < 0 ? i + size : i;
}

int64_t product(const Dims& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= s[d];
  return p;
}

// Offset (in elements) of the index tuple idx[at .. at + k) into data axes [first, first + k).
int64_t tuple_offset(const std::vector<int64_t>& idx, size_t at, size_t k, const Dims& shape,
                     const Dims& strides, size_t first, const Node& n) {
  int64_t off = 0;
  for (size_t j = 0; j < k; ++j)
    off += checked_index(idx[at + j], shape[first + j], first + j, n) * strides[first + j];
  return off;
}

void gather_nd(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& data = *in[0];
  const Dims& ds = data.shape();
  const Dims& is = in[1]->shape();
  std::vector<int64_t> idx = in[1]->to_i64_vector();
  size_t b = size_t(n.attrs.get_int("batch_dims")), k = size_t(is.back());
  int64_t batches = product(ds, 0, b), per_batch = product(is, b, is.size() - 1);
  int64_t batch_stride = product(ds, b, ds.size());
  size_t chunk = size_t(product(ds, b + k, ds.size())) * dtype_size(data.dtype());
  Dims strides = contiguous_strides(ds);
  std::byte* dst = bytes_of(out[0]);
  for (int64_t bt = 0; bt < batches; ++bt)
    for (int64_t m = 0; m < per_batch; ++m, dst += chunk) {
      size_t at = size_t(bt * per_batch + m) * k;
      int64_t src = bt * batch_stride + tuple_offset(idx, at, k, ds, strides, b, n);
      if (chunk > 0) std::memcpy(dst, bytes_of(data) + size_t(src) * dtype_size(data.dtype()), chunk);
    }
}

// The type a reduction computes in: float for the 16-bit floats.
template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T>
acc_t<T> load_acc(T v) {
  if constexpr (std::is_same_v<T, Half>)
    return half_to_float(v);
  else if constexpr (std::is_same_v<T, BFloat16>)
    return bf16_to_float(v);
  else
    return v;
}

template <typename T>
T store_acc(acc_t<T> v) {
  if constexpr (std::is_same_v<T, Half>)
    return float_to_half(v);
  else if constexpr (std::is_same_v<T, BFloat16>)
    return float_to_bf16(v);
  else
    return T(v);
}

// a (+ * max min) b; integers wrap instead of overflowing.
template <typename T>
T combine(T a, T b, char op) {
  using A = acc_t<T>;
  A x = load_acc(a), y = load_acc(b);
  if constexpr (std::is_integral_v<A> && !std::is_same_v<A, bool>) {
    using U = std::make_unsigned_t<A>;
    if (op == '+') return T(U(x) + U(y));
    if (op == '*') return T(U(x) * U(y));
  } else if constexpr (!std::is_same_v<A, bool>) {
    if (op == '+') return store_acc<T>(x + y);
    if (op == '*') return store_acc<T>(x * y);
  }
  if constexpr (std::is_floating_point_v<A>)
    if ((op == '>' || op == '<') && std::isnan(y)) return store_acc<T>(y);  // as the tensor IR's max / min
  return op == '>' ? store_acc<T>(std::max(x, y)) : store_acc<T>(std::min(x, y));
}

char reduction_op(const Node& n) {
  const std::string& r = n.attrs.get_string("reduction");
  return r == "add" ? '+' : r == "mul" ? '*' : r == "max" ? '>' : r == "min" ? '<' : '=';
}

// out[dst + i] = out[dst + i] (op) upd[src + i] for i in [0, count).
void apply_update(Tensor& out, int64_t dst, const Tensor& upd, int64_t src, int64_t count, char op) {
  size_t es = dtype_size(out.dtype());
  if (count == 0) return;
  if (op == '=') {
    std::memcpy(bytes_of(out) + size_t(dst) * es, bytes_of(upd) + size_t(src) * es, size_t(count) * es);
    return;
  }
  TESSEL_ICHECK(!is_small(out.dtype())) << "a reduction of " << dtype_name(out.dtype()) << " updates";
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_small_bits_v<T>) {
      T* o = out.data<T>() + dst;
      const T* u = upd.data<T>() + src;
      for (int64_t i = 0; i < count; ++i) o[i] = combine(o[i], u[i], op);
    }
  });
}

void scatter_nd(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Dims& ds = in[0]->shape();
  const Dims& is = in[1]->shape();
  if (in[0]->nbytes() > 0) std::memcpy(out[0].raw(), in[0]->raw(), in[0]->nbytes());
  std::vector<int64_t> idx = in[1]->to_i64_vector();
  size_t k = size_t(is.back());
  int64_t updates = product(is, 0, is.size() - 1), chunk = product(ds, k, ds.size());
  Dims strides = contiguous_strides(ds);
  char op = reduction_op(n);
  for (int64_t m = 0; m < updates; ++m)
    apply_update(out[0], tuple_offset(idx, size_t(m) * k, k, ds, strides, 0, n), *in[2], m * chunk, chunk,
                 op);
}

void scatter_elements(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& data = *in[0];
  if (data.nbytes() > 0) std::memcpy(out[0].raw(), data.raw(), data.nbytes());
  int axis = graph::ops::normalize_axis(n.attrs.get_int("axis"), data.rank(), n.span());
  std::vector<int64_t> idx = in[1]->to_i64_vector();
  const Dims& shape = in[1]->shape();
  Dims strides = contiguous_strides(data.shape());
  char op = reduction_op(n);
  std::vector<int64_t> pos(shape.size(), 0);  // row-major position in indices
  for (size_t k = 0; k < idx.size(); ++k) {
    int64_t dst = 0;
    for (size_t d = 0; d < pos.size(); ++d) {
      int64_t at = int(d) == axis ? checked_index(idx[k], data.shape()[d], d, n) : pos[d];
      dst += at * strides[d];
    }
    apply_update(out[0], dst, *in[2], int64_t(k), 1, op);
    for (size_t d = pos.size(); d-- > 0 && ++pos[d] == shape[d];) pos[d] = 0;
  }
}

}  // namespace

void register_movement_scatter(KernelRegistry& r) {
  r.add("GatherND", gather_nd);
  r.add("ScatterND", scatter_nd);
  r.add("ScatterElements", scatter_elements);
}

}  // namespace tessel::reference::kernels
