// Reference kernels of Conv and ConvTranspose (1-D to 3-D, groups, dilations).
// Loop order, for speed without tricks: per output channel, a plane of
// accumulators; per input channel and kernel tap, one scalar weight times a
// contiguous input row added to a contiguous accumulator row.
#include <algorithm>
#include <type_traits>

#include "src/reference/kernels/nn_kernels.h"

namespace tessel::reference::kernels {

namespace {

using graph::ops::WindowGeometry;

// Accumulators are double even for f32. ONNX Runtime sums in float, in an
// order of its own; with double sums the difference to it is ORT's rounding
// error alone, not the sum of two float errors, which keeps long reductions
// (C x kernel taps in the thousands) well inside the comparison tolerance.
using Acc = double;

struct ConvShape {
  int64_t batch, in_channels, out_channels, group;
  Window3 w;
};

// acc[o] += weight * x[o * stride + offset] for o in [lo, hi).
template <typename T>
void axpy_row(Acc* acc, const T* x, int64_t stride, int64_t offset, int64_t lo, int64_t hi, Acc weight) {
  if (lo >= hi) return;
  const T* src = x + (lo * stride + offset);
  Acc* dst = acc + lo;
  int64_t n = hi - lo;
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] += weight * Acc(src[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] += weight * Acc(src[i * stride]);
}

// One input plane times one kernel into one output accumulator plane (Conv).
template <typename T>
void conv_plane(const Window3& w, const T* x, const T* kernel, Acc* acc) {
  for (int64_t kd = 0; kd < w.k[0]; ++kd)
    for (int64_t kh = 0; kh < w.k[1]; ++kh)
      for (int64_t kw = 0; kw < w.k[2]; ++kw) {
        Acc weight = Acc(kernel[(kd * w.k[1] + kh) * w.k[2] + kw]);
        int64_t off = kw * w.d[2] - w.pad[2];  // input column of output column 0
        int64_t lo = std::max<int64_t>(0, ceil_div(-off, w.s[2]));
        int64_t hi = std::min(w.out[2], floor_div(w.in[2] - 1 - off, w.s[2]) + 1);
        for (int64_t od = 0; od < w.out[0]; ++od) {
          int64_t id = od * w.s[0] - w.pad[0] + kd * w.d[0];
          if (id < 0 || id >= w.in[0]) continue;
          for (int64_t oh = 0; oh < w.out[1]; ++oh) {
            int64_t ih = oh * w.s[1] - w.pad[1] + kh * w.d[1];
            if (ih < 0 || ih >= w.in[1]) continue;
            axpy_row(acc + (od * w.out[1] + oh) * w.out[2], x + (id * w.in[1] + ih) * w.in[2], w.s[2], off,
                     lo, hi, weight);
          }
        }
      }
}

// The transpose: input position i scatters to output position i * s - pad + k * d.
template <typename T>
void conv_transpose_plane(const Window3& w, const T* x, const T* kernel, Acc* acc) {
  for (int64_t kd = 0; kd < w.k[0]; ++kd)
    for (int64_t kh = 0; kh < w.k[1]; ++kh)
      for (int64_t kw = 0; kw < w.k[2]; ++kw) {
        Acc weight = Acc(kernel[(kd * w.k[1] + kh) * w.k[2] + kw]);
        int64_t off = kw * w.d[2] - w.pad[2];  // output column of input column 0
        int64_t lo = std::max<int64_t>(0, ceil_div(-off, w.s[2]));
        int64_t hi = std::min(w.in[2], floor_div(w.out[2] - 1 - off, w.s[2]) + 1);
        for (int64_t id = 0; id < w.in[0]; ++id) {
          int64_t od = id * w.s[0] - w.pad[0] + kd * w.d[0];
          if (od < 0 || od >= w.out[0]) continue;
          for (int64_t ih = 0; ih < w.in[1]; ++ih) {
            int64_t oh = ih * w.s[1] - w.pad[1] + kh * w.d[1];
            if (oh < 0 || oh >= w.out[1]) continue;
            const T* src = x + (id * w.in[1] + ih) * w.in[2];
            Acc* dst = acc + (od * w.out[1] + oh) * w.out[2];
            for (int64_t i = lo; i < hi; ++i) dst[i * w.s[2] + off] += weight * Acc(src[i]);
          }
        }
      }
}

// An int32 sum (integer-valued, exact in the double accumulator) wraps as
// int32 accumulation does.
template <typename T>
T from_acc(Acc v) {
  if constexpr (std::is_integral_v<T>) {
    return T(int64_t(v));
  } else {
    return T(v);
  }
}

// Conv: W is [M, C / group, k...]. ConvTranspose: W is [C, M / group, k...].
template <typename T>
void run_conv(const ConvShape& p, bool transpose, const T* x, const T* w, const T* bias, T* y) {
  const Window3& win = p.w;
  int64_t cg = p.in_channels / p.group, mg = p.out_channels / p.group;
  std::vector<Acc> acc(size_t(win.out_plane()));
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      int64_t g = oc / mg;
      std::fill(acc.begin(), acc.end(), bias ? Acc(bias[oc]) : Acc(0));
      for (int64_t ci = 0; ci < cg; ++ci) {
        int64_t ic = g * cg + ci;
        const T* xp = x + (n * p.in_channels + ic) * win.in_plane();
        if (transpose) {
          conv_transpose_plane(win, xp, w + (ic * mg + oc % mg) * win.taps(), acc.data());
        } else {
          conv_plane(win, xp, w + (oc * cg + ci) * win.taps(), acc.data());
        }
      }
      T* yp = y + (n * p.out_channels + oc) * win.out_plane();
      for (int64_t i = 0; i < win.out_plane(); ++i) yp[i] = from_acc<T>(acc[size_t(i)]);
    }
}

void conv_kernel(const graph::Node& node, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  bool transpose = node.op == "ConvTranspose";
  Dims wk(w.shape().begin() + 2, w.shape().end());
  std::vector<int64_t> kernel = graph::ops::conv_kernel_shape(node.attrs, wk, node.span());
  WindowGeometry g =
      transpose ? graph::ops::conv_transpose_geometry(node.attrs, spatial_dims(x), kernel, node.span())
                : graph::ops::window_geometry(node.attrs, spatial_dims(x), kernel, false, node.span());
  ConvShape p{x.shape()[0], x.shape()[1], out[0].shape()[1], node.attrs.get_int("group"),
              to_window3(g, node)};
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* bias = in.size() > 2 && in[2] ? in[2]->data<T>() : nullptr;
    run_conv<T>(p, transpose, x.data<T>(), w.data<T>(), bias, out[0].data<T>());
  };
  // int32: the integer convolutions of ConvInteger and QLinearConv.
  if (x.dtype() == DType::kI32) return run(int32_t{});
  dispatch_float(x.dtype(), node, run);
}

}  // namespace

void register_conv_kernels(KernelRegistry& r) {
  r.add("Conv", through_f32(conv_kernel));
  r.add("ConvTranspose", through_f32(conv_kernel));
}

}  // namespace tessel::reference::kernels
