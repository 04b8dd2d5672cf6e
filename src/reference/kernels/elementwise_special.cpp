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

// A cast from or to a storage-only type, element by element through double
// (the small integers through their integer value); `saturate` as Cast's.
void cast_small(const Node& n, const Tensor& src, Tensor& dst) {
  bool saturate = n.attrs.get_int("saturate") != 0;
  bool integer_source = is_integer(src.dtype()) || src.dtype() == DType::kBool ||
                        (is_small(src.dtype()) && small_types::is_integer_format(small_format(src.dtype())));
  for (int64_t i = 0; i < src.numel(); ++i) {
    double d = src.get_f64(i);
    if (is_small(dst.dtype())) {
      small_types::Format f = small_format(dst.dtype());
      uint8_t bits = small_types::is_integer_format(f) && integer_source
                         ? uint8_t(uint64_t(src.get_i64(i)) & ((1u << small_types::width_bits(f)) - 1))
                         : small_types::encode(f, d, saturate);
      static_cast<uint8_t*>(dst.raw())[i] = bits;
      continue;
    }
    dispatch_dtype(dst.dtype(), [&](auto dst_tag) {
      using D = decltype(dst_tag);
      if constexpr (!is_small_bits_v<D>) store(dst.data<D>(), i, convert_value<compute_t<D>>(d));
    });
  }
}

void cast_kernel(const Node& n, const Inputs& in, Outputs& out) {
  const Tensor& src = *in[0];
  Tensor& dst = out[0];
  if (is_small(src.dtype()) || is_small(dst.dtype())) return cast_small(n, src, dst);
  dispatch_dtype(src.dtype(), [&](auto src_tag) {
    using S = decltype(src_tag);
    dispatch_dtype(dst.dtype(), [&](auto dst_tag) {
      using D = decltype(dst_tag);
      if constexpr (!is_small_bits_v<S> && !is_small_bits_v<D>) {
        const S* x = src.data<S>();
        D* y = dst.data<D>();
        for (int64_t i = 0; i < src.numel(); ++i) store(y, i, convert_value<compute_t<D>>(load(x, i)));
      }
    });
  });
}

void copy_kernel(const Node&, const Inputs& in, Outputs& out) {
  if (in[0]->nbytes()) std::memcpy(out[0].raw(), in[0]->raw(), in[0]->nbytes());
}

// Training mode passes everything only at ratio 0 (absent: 0.5); any other
// ratio would drop at random.
void dropout_kernel(const Node& n, const Inputs& in, Outputs& out) {
  const Tensor* mode = in.size() > 2 ? in[2] : nullptr;
  const Tensor* ratio = in.size() > 1 ? in[1] : nullptr;
  double r = ratio ? ratio->get_f64(0) : 0.5;
  TESSEL_USER_CHECK(!mode || mode->get_i64(0) == 0 || r == 0, n.span())
      << "training-mode Dropout with ratio " << r << " drops at random, which a compiled model does not";
  copy_kernel(n, in, out);
  if (out.size() < 2) return;
  bool* mask = out[1].data<bool>();
  for (int64_t i = 0; i < out[1].numel(); ++i) mask[i] = true;
}

}  // namespace

void register_elementwise_special(KernelRegistry& r) {
  r.add("Clip", clip_kernel);
  r.add("Cast", cast_kernel);
  r.add("BitCast", copy_kernel);  // the output's bytes are the input's
  r.add("Identity", copy_kernel);
  r.add("Dropout", dropout_kernel);
}

}  // namespace tessel::reference::kernels
