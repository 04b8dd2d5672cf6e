// Reference kernels of the pooling ops: MaxPool (with its optional Indices),
// AveragePool, GlobalAveragePool and GlobalMaxPool.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "src/reference/kernels/nn_kernels.h"

namespace tessel::reference::kernels {

namespace {

// Input positions of the window of output o along one canonical dimension:
// calls f(i) for every tap inside [lo, hi).
template <typename F>
void for_taps(const Window3& w, int dim, int64_t o, int64_t lo, int64_t hi, F&& f) {
  for (int64_t k = 0; k < w.k[dim]; ++k) {
    int64_t i = o * w.s[dim] - w.pad[dim] + k * w.d[dim];
    if (i >= lo && i < hi) f(i);
  }
}

// Taps of the window inside [-pad_begin, in + pad_end), the divisor of an
// AveragePool with count_include_pad (a ceil-mode window may reach past it).
int64_t padded_taps(const Window3& w, const int64_t o[3]) {
  int64_t count = 1;
  for (int dim = 0; dim < 3; ++dim) {
    int64_t n = 0;
    for_taps(w, dim, o[dim], -w.pad[dim], w.in[dim] + w.pad_end[dim], [&](int64_t) { ++n; });
    count *= n;
  }
  return count;
}

// Calls f(output index, o[3]) for every output position of one plane.
template <typename F>
void for_outputs(const Window3& w, F&& f) {
  int64_t o[3], at = 0;
  for (o[0] = 0; o[0] < w.out[0]; ++o[0])
    for (o[1] = 0; o[1] < w.out[1]; ++o[1])
      for (o[2] = 0; o[2] < w.out[2]; ++o[2]) f(at++, o);
}

// Calls f(input index within the plane, i[3]) for every window tap inside the input.
template <typename F>
void for_window(const Window3& w, const int64_t o[3], F&& f) {
  for_taps(w, 0, o[0], 0, w.in[0], [&](int64_t i0) {
    for_taps(w, 1, o[1], 0, w.in[1], [&](int64_t i1) {
      for_taps(w, 2, o[2], 0, w.in[2],
               [&](int64_t i2) { f((i0 * w.in[1] + i1) * w.in[2] + i2, i0, i1, i2); });
    });
  });
}

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

// Indices are flat positions in the whole input; storage_order 1 counts the
// spatial dimensions column-major (the first spatial dimension fastest).
template <typename T>
void max_pool(const Window3& w, int64_t planes, bool column_major, const T* x, T* y, int64_t* indices) {
  for (int64_t p = 0; p < planes; ++p) {
    const T* xp = x + p * w.in_plane();
    for_outputs(w, [&](int64_t at, const int64_t o[3]) {
      T best = std::numeric_limits<T>::lowest();
      int64_t best_at = -1;
      // The first tap holding the maximum; a NaN is the maximum (as numpy's max and the
      // tensor IR's max: it propagates), its first occurrence the index.
      for_window(w, o, [&](int64_t i, int64_t i0, int64_t i1, int64_t i2) {
        if (best_at >= 0 && !(xp[i] > best || (is_nan(xp[i]) && !is_nan(best)))) return;
        best = xp[i];
        best_at = column_major ? i0 + i1 * w.in[0] + i2 * w.in[0] * w.in[1] : i;
      });
      y[p * w.out_plane() + at] = best;
      if (indices) indices[p * w.out_plane() + at] = best_at < 0 ? -1 : p * w.in_plane() + best_at;
    });
  }
}

template <typename T>
void average_pool(const Window3& w, int64_t planes, bool count_pad, const T* x, T* y) {
  for (int64_t p = 0; p < planes; ++p) {
    const T* xp = x + p * w.in_plane();
    for_outputs(w, [&](int64_t at, const int64_t o[3]) {
      double sum = 0;
      int64_t n = 0;
      for_window(w, o, [&](int64_t i, int64_t, int64_t, int64_t) {
        sum += double(xp[i]);
        ++n;
      });
      if (count_pad) n = padded_taps(w, o);
      y[p * w.out_plane() + at] = n > 0 ? T(sum / double(n)) : std::numeric_limits<T>::quiet_NaN();
    });
  }
}

Window3 pool_window(const graph::Node& node, const Tensor& x) {
  bool ceil_mode = node.attrs.get_int("ceil_mode") != 0;
  return to_window3(graph::ops::window_geometry(node.attrs, spatial_dims(x),
                                                node.attrs.get_ints("kernel_shape"), ceil_mode, node.span()),
                    node);
}

int64_t planes_of(const Tensor& x) {
  return x.shape()[0] * x.shape()[1];
}

void max_pool_kernel(const graph::Node& node, const std::vector<const Tensor*>& in,
                     std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  Window3 w = pool_window(node, x);
  bool column_major = node.attrs.get_int("storage_order") == 1;
  int64_t* indices = out.size() > 1 ? out[1].data<int64_t>() : nullptr;
  dispatch_dtype(x.dtype(),
                 [&](auto tag) {
                   using T = decltype(tag);
                   if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                 std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
                     max_pool<T>(w, planes_of(x), column_major, x.data<T>(), out[0].data<T>(), indices);
                   } else {
                     TESSEL_USER_ERROR(node.span())
                         << "the reference executor runs MaxPool on f32, f64, i8 and u8 only, got "
                         << dtype_name(x.dtype());
                   }
                 });
}

void average_pool_kernel(const graph::Node& node, const std::vector<const Tensor*>& in,
                         std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  Window3 w = pool_window(node, x);
  bool count_pad = node.attrs.get_int("count_include_pad") != 0;
  dispatch_float(x.dtype(), node, [&](auto tag) {
    using T = decltype(tag);
    average_pool<T>(w, planes_of(x), count_pad, x.data<T>(), out[0].data<T>());
  });
}

// Average or maximum over everything but N and C.
void global_pool_kernel(const graph::Node& node, const std::vector<const Tensor*>& in,
                        std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  bool is_max = node.op == "GlobalMaxPool";
  int64_t planes = planes_of(x), size = dims_product(x.shape(), 2, x.shape().size());
  dispatch_float(x.dtype(), node, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* y = out[0].data<T>();
    for (int64_t p = 0; p < planes; ++p, xp += size) {
      double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t i = 0; i < size; ++i) {
        double v = double(xp[i]);
        if (!is_max) {
          acc += v;
        } else if (std::isnan(v) || v > acc) {
          acc = v;  // a NaN stays: nothing is greater
        }
      }
      y[p] = T(is_max ? acc : acc / double(size));
    }
  });
}

}  // namespace

void register_pool_kernels(KernelRegistry& r) {
  r.add("MaxPool", max_pool_kernel);
  r.add("AveragePool", average_pool_kernel);
  r.add("GlobalAveragePool", global_pool_kernel);
  r.add("GlobalMaxPool", global_pool_kernel);
}

}  // namespace tessel::reference::kernels
