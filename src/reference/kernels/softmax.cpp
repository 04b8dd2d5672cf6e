// Reference kernels of Softmax and LogSoftmax (opset 13 semantics: along one
// axis). Shifted by the maximum for stability; exp and sums in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/graph/ops/shape_helpers.h"
#include "src/reference/kernels/nn_kernels.h"

namespace tessel::reference::kernels {

namespace {

// One softmax line of n elements, `stride` apart.
template <typename T>
void softmax_line(const T* x, T* y, int64_t n, int64_t stride, bool log) {
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, double(x[i * stride]));
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(double(x[i * stride]) - max);
  double log_sum = std::log(sum);
  for (int64_t i = 0; i < n; ++i) {
    double shifted = double(x[i * stride]) - max;
    y[i * stride] = T(log ? shifted - log_sum : std::exp(shifted) / sum);
  }
}

void softmax_kernel(const graph::Node& node, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  if (x.numel() == 0) return;
  size_t axis = size_t(graph::ops::normalize_axis(node.attrs.get_int("axis"), x.rank(), node.span()));
  int64_t outer = dims_product(x.shape(), 0, axis), n = x.rank() == 0 ? 1 : x.shape()[axis];
  int64_t inner = x.rank() == 0 ? 1 : dims_product(x.shape(), axis + 1, x.shape().size());
  bool log = node.op == "LogSoftmax";
  dispatch_float(x.dtype(), node, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* y = out[0].data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t first = o * n * inner + i;
        softmax_line(xp + first, y + first, n, inner, log);
      }
  });
}

}  // namespace

void register_softmax_kernels(KernelRegistry& r) {
  r.add("Softmax", through_f32(softmax_kernel));
  r.add("LogSoftmax", through_f32(softmax_kernel));
}

}  // namespace tessel::reference::kernels
