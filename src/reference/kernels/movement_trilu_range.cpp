// Reference kernels of Trilu (one triangle of each matrix kept, the rest
// zeroed, as raw bytes for every dtype) and Range (start + i * delta).
#include <cstring>

#include "src/reference/kernels/element_access.h"
#include "src/reference/kernels/movement_copy.h"

namespace tessel::reference::kernels {

namespace {

using graph::Node;
using Inputs = std::vector<const Tensor*>;

// Element (i, j) of each trailing matrix is kept when j - i >= k (upper) or
// j - i <= k (lower); every other element is zero (all-zero bytes in every dtype).
void trilu(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  bool upper = n.attrs.get_int("upper") != 0;
  int64_t k = in.size() > 1 && in[1] ? in[1]->get_i64(0) : 0;
  const Dims& s = x.shape();
  int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  size_t esize = dtype_size(x.dtype());
  const std::byte* src = bytes_of(x);
  std::byte* dst = bytes_of(out[0]);
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t i = (e / cols) % rows, j = e % cols;
    bool keep = upper ? j - i >= k : j - i <= k;
    size_t at = size_t(e) * esize;
    if (keep)
      std::memcpy(dst + at, src + at, esize);
    else
      std::memset(dst + at, 0, esize);
  }
}

// Element i is start + i * delta in the compute type (integers wrap), the
// ONNX definition; the shape function sized the output.
void range(const Node& n, const Inputs& in, std::vector<Tensor>& out) {
  dispatch_dtype(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool> && !is_small_bits_v<T>) {
      using C = compute_t<T>;
      C start = load(in[0]->data<T>(), 0), delta = load(in[2]->data<T>(), 0);
      T* y = out[0].data<T>();
      for (int64_t i = 0; i < out[0].numel(); ++i) store(y, i, wrap_add(start, wrap_mul(C(i), delta)));
    } else {
      TESSEL_USER_ERROR(n.span()) << "Range does not support dtype " << dtype_name(out[0].dtype());
    }
  });
}

}  // namespace

void register_movement_trilu_range(KernelRegistry& r) {
  r.add("Trilu", trilu);
  r.add("Range", range);
}

}  // namespace tessel::reference::kernels
