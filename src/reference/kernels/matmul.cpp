// Reference kernels of MatMul (numpy semantics: 1-D operands, batch
// broadcasting) and Gemm. Both use one i-k-j loop: a row of accumulators,
// updated from contiguous rows of B.
#include <algorithm>
#include <type_traits>

#include "src/reference/kernels/nn_kernels.h"

namespace tessel::reference::kernels {

namespace {

// Float products sum in double (see conv.cpp for why); integer products in
// uint64, which wraps like the int32/int64 arithmetic of ONNX Runtime.
template <typename T>
using AccOf = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

// Calls store(i, row) with row[j] = sum_k a[i * K + k] * b[k * N + j].
template <typename T, typename Store>
void matmul_rows(int64_t m, int64_t n, int64_t k, const T* a, const T* b, Store&& store) {
  using Acc = AccOf<T>;
  std::vector<Acc> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), Acc(0));
    for (int64_t p = 0; p < k; ++p) {
      Acc av = Acc(a[i * k + p]);
      const T* brow = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[size_t(j)] += av * Acc(brow[j]);
    }
    store(i, row.data());
  }
}

// Batch offsets (in matrices) of A and B for each batch of the output.
std::vector<std::pair<int64_t, int64_t>> batch_offsets(Dims a, Dims b) {
  size_t rank = std::max(a.size(), b.size());
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) out[i] = std::max(a[i], b[i]);
  std::vector<std::pair<int64_t, int64_t>> offsets;
  for (int64_t flat = 0; flat < num_elements(out); ++flat) {
    int64_t rest = flat, ao = 0, bo = 0, as = 1, bs = 1;
    for (size_t i = rank; i-- > 0;) {
      int64_t idx = rest % out[i];
      rest /= out[i];
      ao += (a[i] == 1 ? 0 : idx) * as;
      bo += (b[i] == 1 ? 0 : idx) * bs;
      as *= a[i];
      bs *= b[i];
    }
    offsets.emplace_back(ao, bo);
  }
  return offsets;
}

void matmul_kernel(const graph::Node& node, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  Dims a = in[0]->shape(), b = in[1]->shape();
  if (a.size() == 1) a.insert(a.begin(), 1);  // [K] -> [1, K]
  if (b.size() == 1) b.push_back(1);          // [K] -> [K, 1]
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  auto offsets = batch_offsets(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
  dispatch_dtype(
      in[0]->dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
                      std::is_same_v<T, int64_t>) {
          const T* ap = in[0]->data<T>();
          const T* bp = in[1]->data<T>();
          T* y = out[0].data<T>();
          for (size_t batch = 0; batch < offsets.size(); ++batch) {
            T* yb = y + int64_t(batch) * m * n;
            matmul_rows<T>(m, n, k, ap + offsets[batch].first * m * k, bp + offsets[batch].second * k * n,
                           [&](int64_t i, const AccOf<T>* row) {
                             for (int64_t j = 0; j < n; ++j) yb[i * n + j] = T(row[j]);
                           });
          }
        } else {
          TESSEL_USER_ERROR(node.span())
              << "the reference executor runs MatMul on f16, bf16, f32, f64, i32 and i64 only, got "
              << dtype_name(in[0]->dtype());
        }
      });
}

// A contiguous [rows, cols] copy of t, transposed when `transpose`.
template <typename T>
std::vector<T> as_matrix(const Tensor& t, bool transpose) {
  const T* p = t.data<T>();
  std::vector<T> m(p, p + t.numel());
  if (!transpose) return m;
  int64_t r = t.shape()[0], c = t.shape()[1];
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) m[size_t(j * r + i)] = p[i * c + j];
  return m;
}

// Y = alpha * A'B' + beta * C. Integer Gemm stays exact when alpha and beta
// are whole numbers, as they are in practice; otherwise it goes through double.
template <typename T>
void gemm(const graph::Node& node, const std::vector<const Tensor*>& in, Tensor& y) {
  bool ta = node.attrs.get_int("transA") != 0, tb = node.attrs.get_int("transB") != 0;
  double alpha = node.attrs.get_float("alpha"), beta = node.attrs.get_float("beta");
  int64_t m = y.shape()[0], n = y.shape()[1], k = in[0]->shape()[ta ? 0 : 1];
  std::vector<T> a = as_matrix<T>(*in[0], ta), b = as_matrix<T>(*in[1], tb);
  const Tensor* c = in.size() > 2 ? in[2] : nullptr;
  // C broadcasts one way to [M, N]: a size-1 (or missing) dimension repeats.
  int64_t c_rows = c && c->rank() == 2 ? c->shape()[0] : 1;
  int64_t c_cols = c && c->rank() >= 1 ? c->shape().back() : 1;
  bool exact = std::is_integral_v<T> && alpha == double(int64_t(alpha)) && beta == double(int64_t(beta));
  T* out = y.data<T>();
  matmul_rows<T>(m, n, k, a.data(), b.data(), [&](int64_t i, const AccOf<T>* row) {
    for (int64_t j = 0; j < n; ++j) {
      const T cv = c ? c->data<T>()[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)] : T(0);
      if constexpr (std::is_integral_v<T>) {
        if (exact) {
          out[i * n + j] = T(uint64_t(int64_t(alpha)) * row[j] + uint64_t(int64_t(beta)) * uint64_t(cv));
          continue;
        }
        out[i * n + j] = T(alpha * double(int64_t(row[j])) + beta * double(cv));
      } else {
        out[i * n + j] = T(alpha * row[j] + beta * double(cv));
      }
    }
  });
}

void gemm_kernel(const graph::Node& node, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  dispatch_dtype(in[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
                  std::is_same_v<T, int64_t>) {
      gemm<T>(node, in, out[0]);
    } else {
      TESSEL_USER_ERROR(node.span()) << "the reference executor runs Gemm on f32, f64, i32 and i64 only, got "
                                     << dtype_name(in[0]->dtype());
    }
  });
}

}  // namespace

void register_linear_kernels(KernelRegistry& r) {
  r.add("MatMul", through_f32(matmul_kernel));
  r.add("Gemm", gemm_kernel);
}

}  // namespace tessel::reference::kernels
