// Reference kernels of Clip, Cast, Identity and inference-mode Dropout.
#include <cstring>

#include "src/reference/kernels/elementwise.h"

namespace tessel::reference::kernels {

namespace {

using graph::Node;
using Inputs = std::vector<const Tensor*>;
using Outputs = std::vector<Tensor>;

// y = min(max(x, lo), hi) with each bound optional; when lo > hi every
// element becomes hi (the ONNX rule). NaN stays NaN.
void clip_kernel(const Node& n, const Inputs& in, Outputs& out) {
  dispatch_dtype(in[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (admits<TypeClass::kNumeric, T>()) {
      using C = compute_t<T>;
      const T* x = in[0]->data<T>();
      T* y = out[0].data<T>();
      const Tensor* lo_t = in.size() > 1 ? in[1] : nullptr;
      const Tensor* hi_t = in.size() > 2 ? in[2] : nullptr;
      for (int64_t i = 0; i < in[0]->numel(); ++i) {
        C v = load(x, i);
        if (lo_t) {
          C lo = load(lo_t->data<T>(), 0);
          v = v < lo ? lo : v;
        }
        if (hi_t) {
          C hi = load(hi_t->data<T>(), 0);
          v = hi < v ? hi : v;
        }
        store(y, i, v);
      }
    } else {
      unsupported_dtype(n, in[0]->dtype());
    }
  });
}

void cast_kernel(const Node&, const Inputs& in, Outputs& out) {
  const Tensor& src = *in[0];
  Tensor& dst = out[0];
  dispatch_dtype(src.dtype(), [&](auto src_tag) {
    using S = decltype(src_tag);
    dispatch_dtype(dst.dtype(), [&](auto dst_tag) {
      using D = decltype(dst_tag);
      const S* x = src.data<S>();
      D* y = dst.data<D>();
      for (int64_t i = 0; i < src.numel(); ++i) store(y, i, convert_value<compute_t<D>>(load(x, i)));
    });
  });
}

void copy_kernel(const Node&, const Inputs& in, Outputs& out) {
  if (in[0]->nbytes()) std::memcpy(out[0].raw(), in[0]->raw(), in[0]->nbytes());
}

void dropout_kernel(const Node& n, const Inputs& in, Outputs& out) {
  const Tensor* mode = in.size() > 2 ? in[2] : nullptr;
  TESSEL_USER_CHECK(!mode || mode->numel() != 1 || mode->get_i64(0) == 0, n.span())
      << "training-mode Dropout is not supported (training_mode is true)";
  copy_kernel(n, in, out);
  if (out.size() < 2) return;
  bool* mask = out[1].data<bool>();
  for (int64_t i = 0; i < out[1].numel(); ++i) mask[i] = true;
}

}  // namespace

void register_elementwise_special(KernelRegistry& r) {
  r.add("Clip", clip_kernel);
  r.add("Cast", cast_kernel);
  r.add("Identity", copy_kernel);
  r.add("Dropout", dropout_kernel);
}

}  // namespace tessel::reference::kernels
