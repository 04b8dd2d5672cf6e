// The parts of the nn family's reference kernels, one per file, and the
// helpers they share. register_nn (nn.cpp) calls the register functions.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/graph/ops/window_geometry.h"
#include "src/reference/kernel_registry.h"

namespace tessel::reference::kernels {

void register_conv_kernels(KernelRegistry& r);     // Conv, ConvTranspose (conv.cpp)
void register_pool_kernels(KernelRegistry& r);     // MaxPool, AveragePool, Global*Pool (pool.cpp)
void register_linear_kernels(KernelRegistry& r);   // MatMul, Gemm (matmul.cpp)
void register_norm_kernels(KernelRegistry& r);     // the normalisations (norm.cpp)
void register_softmax_kernels(KernelRegistry& r);  // Softmax, LogSoftmax (softmax.cpp)

// Calls f(T{}) with T float or double; other dtypes are a UserError: the
// reference executor computes these ops in f32 and f64 only.
template <typename F>
void dispatch_float(DType dtype, const graph::Node& node, F&& f) {
  TESSEL_USER_CHECK(dtype == DType::kF32 || dtype == DType::kF64, node.span())
      << "the reference executor runs " << node.op << " on f32 and f64 only, got " << dtype_name(dtype);
  if (dtype == DType::kF32) return f(float{});
  f(double{});
}

// k run on f32 copies of its f16 / bf16 inputs, its outputs rounded back to
// the input's type once: how the compiled kernels compute the 16-bit floats.
Kernel through_f32(Kernel k);

// Floor and ceiling of a / b for b > 0 and any sign of a.
inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
inline int64_t ceil_div(int64_t a, int64_t b) {
  return -floor_div(-a, b);
}

// Product of dims[from, to).
inline int64_t dims_product(const Dims& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

// Per-element values of a float tensor (scale, bias, statistics) as doubles.
inline std::vector<double> as_doubles(const Tensor* t) {
  return t ? t->to_f64_vector() : std::vector<double>{};
}

// A window geometry of 1 to 3 spatial dimensions as exactly 3 (D, H, W):
// missing leading dimensions have size 1, kernel 1, stride 1 and no padding,
// so one 3-D loop nest serves 1-D, 2-D and 3-D ops.
struct Window3 {
  int64_t in[3], k[3], s[3], d[3], pad[3], pad_end[3], out[3];

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return k[0] * k[1] * k[2]; }
};

inline Window3 to_window3(const graph::ops::WindowGeometry& g, const graph::Node& node) {
  int n = g.spatial();
  TESSEL_USER_CHECK(n >= 1 && n <= 3, node.span())
      << "the reference executor runs " << node.op << " with 1 to 3 spatial dimensions, got " << n;
  Window3 w{};
  for (int i = 0; i < 3; ++i) {
    int j = i - (3 - n);
    size_t u = size_t(j);
    bool real = j >= 0;
    w.in[i] = real ? g.in[u] : 1;
    w.k[i] = real ? g.kernel[u] : 1;
    w.s[i] = real ? g.strides[u] : 1;
    w.d[i] = real ? g.dilations[u] : 1;
    w.pad[i] = real ? g.pad_begin[u] : 0;
    w.pad_end[i] = real ? g.pad_end[u] : 0;
    w.out[i] = real ? g.out[u] : 1;
  }
  return w;
}

// Spatial sizes of a tensor [N, C, spatial...].
inline std::vector<int64_t> spatial_dims(const Tensor& t) {
  return Dims(t.shape().begin() + 2, t.shape().end());
}

}  // namespace tessel::reference::kernels
