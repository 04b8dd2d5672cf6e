// Reference kernels of the normalisations: BatchNormalization (inference),
// LayerNormalization, InstanceNormalization, GroupNormalization. Statistics
// are computed in double, two passes (mean, then the mean squared deviation).
#include <cmath>

#include "ir/graph/ops/shape_helpers.h"
#include "src/reference/kernels/nn_kernels.h"

namespace tessel::reference::kernels {

namespace {

struct Stats {
  double mean, inv_std;
};

template <typename T>
Stats stats_of(const T* x, int64_t n, double epsilon) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += double(x[i]);
  double mean = n > 0 ? sum / double(n) : 0.0;
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) sq += (double(x[i]) - mean) * (double(x[i]) - mean);
  double var = n > 0 ? sq / double(n) : 0.0;
  return {mean, 1.0 / std::sqrt(var + epsilon)};
}

// y = (x - mean) * inv_std * scale + shift over n elements.
template <typename T>
void normalize(const T* x, T* y, int64_t n, Stats s, double scale, double shift) {
  for (int64_t i = 0; i < n; ++i) y[i] = T((double(x[i]) - s.mean) * s.inv_std * scale + shift);
}

void batch_norm_kernel(const graph::Node& node, const std::vector<const Tensor*>& in,
                       std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<double> scale = as_doubles(in[1]), bias = as_doubles(in[2]);
  std::vector<double> mean = as_doubles(in[3]), var = as_doubles(in[4]);
  double eps = node.attrs.get_float("epsilon");
  int64_t channels = x.shape()[1], inner = dims_product(x.shape(), 2, x.shape().size());
  dispatch_float(x.dtype(), node, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* y = out[0].data<T>();
    for (int64_t p = 0; p < x.shape()[0] * channels; ++p) {
      size_t c = size_t(p % channels);
      normalize(xp + p * inner, y + p * inner, inner, Stats{mean[c], 1.0 / std::sqrt(var[c] + eps)}, scale[c],
                bias[c]);
    }
  });
}

// Scale or B broadcast (numpy, from the right) to the normalised shape, flat.
std::vector<double> broadcast_tail(const Tensor* t, const Dims& tail) {
  int64_t n = num_elements(tail);
  if (t == nullptr) return {};
  std::vector<double> out(static_cast<size_t>(n));
  Dims shape = t->shape();
  while (shape.size() > tail.size())
    shape.erase(shape.begin());  // leading 1s (checked by the shape function)
  shape.insert(shape.begin(), tail.size() - shape.size(), 1);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat, src = 0, stride = 1;
    for (size_t i = tail.size(); i-- > 0;) {
      int64_t idx = rest % tail[i];
      rest /= tail[i];
      src += (shape[i] == 1 ? 0 : idx) * stride;
      stride *= shape[i];
    }
    out[size_t(flat)] = t->get_f64(src);
  }
  return out;
}

void layer_norm_kernel(const graph::Node& node, const std::vector<const Tensor*>& in,
                       std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  int axis = graph::ops::normalize_axis(node.attrs.get_int("axis"), x.rank(), node.span());
  Dims tail(x.shape().begin() + axis, x.shape().end());
  int64_t inner = num_elements(tail), outer = dims_product(x.shape(), 0, size_t(axis));
  std::vector<double> scale = broadcast_tail(in[1], tail);
  std::vector<double> bias = broadcast_tail(in.size() > 2 ? in[2] : nullptr, tail);
  double eps = node.attrs.get_float("epsilon");
  dispatch_float(x.dtype(), node, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* y = out[0].data<T>();
    for (int64_t r = 0; r < outer; ++r) {
      Stats s = stats_of(xp + r * inner, inner, eps);
      for (int64_t j = 0; j < inner; ++j) {
        double v = (double(xp[r * inner + j]) - s.mean) * s.inv_std * scale[size_t(j)];
        y[r * inner + j] = T(bias.empty() ? v : v + bias[size_t(j)]);
      }
      if (out.size() > 1) out[1].set_f64(r, s.mean);
      if (out.size() > 2) out[2].set_f64(r, s.inv_std);
    }
  });
}

void instance_norm_kernel(const graph::Node& node, const std::vector<const Tensor*>& in,
                          std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<double> scale = as_doubles(in[1]), bias = as_doubles(in[2]);
  double eps = node.attrs.get_float("epsilon");
  int64_t channels = x.shape()[1], inner = dims_product(x.shape(), 2, x.shape().size());
  dispatch_float(x.dtype(), node, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* y = out[0].data<T>();
    for (int64_t p = 0; p < x.shape()[0] * channels; ++p) {
      size_t c = size_t(p % channels);
      normalize(xp + p * inner, y + p * inner, inner, stats_of(xp + p * inner, inner, eps), scale[c],
                bias[c]);
    }
  });
}

// Statistics per (sample, group of channels); scale and bias per channel.
void group_norm_kernel(const graph::Node& node, const std::vector<const Tensor*>& in,
                       std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<double> scale = as_doubles(in[1]), bias = as_doubles(in[2]);
  double eps = node.attrs.get_float("epsilon");
  int64_t groups = node.attrs.get_int("num_groups");
  int64_t channels = x.shape()[1], inner = dims_product(x.shape(), 2, x.shape().size());
  int64_t per_group = channels / groups;
  dispatch_float(x.dtype(), node, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* y = out[0].data<T>();
    for (int64_t ng = 0; ng < x.shape()[0] * groups; ++ng) {
      int64_t first = ng * per_group * inner;
      Stats s = stats_of(xp + first, per_group * inner, eps);
      for (int64_t ci = 0; ci < per_group; ++ci) {
        size_t c = size_t((ng % groups) * per_group + ci);
        int64_t at = first + ci * inner;
        normalize(xp + at, y + at, inner, s, scale[c], bias[c]);
      }
    }
  });
}

}  // namespace

void register_norm_kernels(KernelRegistry& r) {
  r.add("BatchNormalization", batch_norm_kernel);
  r.add("LayerNormalization", layer_norm_kernel);
  r.add("InstanceNormalization", instance_norm_kernel);
  r.add("GroupNormalization", group_norm_kernel);
}

}  // namespace tessel::reference::kernels
