// Reference kernels of the reduce ops: one generic fold over the reduced axes,
// accumulating floats in double and integers in int64 or, unsigned, uint64
// (wrapping like numpy);
// ArgMax / ArgMin walk the same way.
#include <cmath>
#include <limits>
#include <type_traits>

#include "ir/graph/ops/reduce_axes.h"
#include "ir/graph/ops/shape_helpers.h"
#include "src/reference/kernel_registry.h"
#include "src/reference/kernels/element_access.h"

namespace tessel::reference::kernels {

namespace {

enum class Fold { kSum, kMean, kProd, kMax, kMin, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// Calls f(in_index, out_index) for every input element, in row-major order;
// out_index is the row-major index of the output element it folds into.
template <typename F>
void for_each_folded(const Dims& shape, const std::vector<bool>& reduced, F&& f) {
  size_t rank = shape.size();
  Dims out_stride = shape;  // becomes the output's stride along each axis, 0 where reduced
  int64_t s = 1;
  for (size_t d = rank; d-- > 0;) {
    out_stride[d] = reduced[d] ? 0 : s;
    if (!reduced[d]) s *= shape[d];
  }
  int64_t total = num_elements(shape);
  std::vector<int64_t> index(rank, 0);
  int64_t out = 0;
  for (int64_t i = 0; i < total; ++i) {
    f(i, out);
    for (size_t d = rank; d-- > 0;) {  // odometer: bump the last axis, carry left
      out += out_stride[d];
      if (++index[d] < shape[d]) break;
      out -= out_stride[d] * shape[d];
      index[d] = 0;
    }
  }
}

template <typename A>
bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>)
    return std::isnan(v);
  else
    return false;
}

// Integer sums and products wrap around in two's complement like numpy's.
template <typename A>
A add(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return A(uint64_t(a) + uint64_t(b));
  else
    return a + b;
}
template <typename A>
A mul(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return A(uint64_t(a) * uint64_t(b));
  else
    return a * b;
}

// The fold of the empty set (ONNX: 0, 1, -inf / +inf or the dtype's limits).
template <typename T, typename A>
A fold_init(Fold k) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  if (k == Fold::kProd) return A(1);
  if (k == Fold::kMax || k == Fold::kLogSumExp)
    return kFloat ? A(-std::numeric_limits<double>::infinity()) : A(std::numeric_limits<T>::lowest());
  if (k == Fold::kMin)
    return kFloat ? A(std::numeric_limits<double>::infinity()) : A(std::numeric_limits<T>::max());
  return A(0);
}

// One step; `shift` is the group's maximum (LogSumExp only). NaN wins max/min.
template <typename A>
A fold_step(Fold k, A acc, A x, A shift) {
  switch (k) {
    case Fold::kSum:
    case Fold::kMean:
    case Fold::kLogSum: return add(acc, x);
    case Fold::kProd: return mul(acc, x);
    case Fold::kMax: return (x > acc || is_nan(x)) ? x : acc;
    case Fold::kMin: return (x < acc || is_nan(x)) ? x : acc;
    case Fold::kL1: return add(acc, x < 0 ? mul(x, A(-1)) : x);
    case Fold::kL2:
    case Fold::kSumSquare: return add(acc, mul(x, x));
    case Fold::kLogSumExp: return acc + A(std::exp(double(x - shift)));
  }
  return acc;
}

template <typename A>
A fold_finish(Fold k, A acc, int64_t count, A shift) {
  switch (k) {
    case Fold::kMean:
      if constexpr (std::is_integral_v<A>)
        return count == 0 ? A(0) : A(acc / count);
      else
        return acc / A(count);  // NaN for the empty set
    case Fold::kL2: return A(std::sqrt(double(acc)));
    case Fold::kLogSum: return A(std::log(double(acc)));
    case Fold::kLogSumExp:
      // log(sum(exp(x - m))) + m, stable; an infinite (or empty: -inf) maximum is the answer.
      return std::isinf(double(shift)) ? shift : A(std::log(double(acc)) + double(shift));
    default: return acc;
  }
}

// A real result to storage type T; integers truncate, out-of-range values saturate.
template <typename T, typename A>
T to_storage(A v) {
  if constexpr (std::is_floating_point_v<T> || std::is_integral_v<A>) {
    return T(v);
  } else {
    if (std::isnan(v)) return T(0);
    double lo = double(std::numeric_limits<T>::lowest()), hi = double(std::numeric_limits<T>::max());
    return T(v < lo ? lo : (v > hi ? hi : v));
  }
}

// The fold of storage type T in accumulator type A (double or int64).
template <typename T, typename A>
void reduce_as(Fold k, const Tensor& x, const std::vector<bool>& reduced, Tensor& y) {
  const T* in = x.data<T>();
  T* out = y.data<T>();
  int64_t count = 1;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) count *= x.shape()[d];
  std::vector<A> shift(size_t(y.numel()), A(0));
  if (k == Fold::kLogSumExp) {
    shift.assign(size_t(y.numel()), fold_init<T, A>(Fold::kMax));
    for_each_folded(x.shape(), reduced, [&](int64_t i, int64_t o) {
      shift[o] = fold_step(Fold::kMax, shift[o], A(in[i]), A(0));
    });
  }
  std::vector<A> acc(size_t(y.numel()), fold_init<T, A>(k == Fold::kLogSumExp ? Fold::kSum : k));
  for_each_folded(x.shape(), reduced,
                  [&](int64_t i, int64_t o) { acc[o] = fold_step(k, acc[o], A(in[i]), shift[o]); });
  for (int64_t o = 0; o < y.numel(); ++o) out[o] = to_storage<T>(fold_finish(k, acc[o], count, shift[o]));
}

bool needs_real_math(Fold k) {
  return k == Fold::kL2 || k == Fold::kLogSum || k == Fold::kLogSumExp;
}

void reduce(Fold k, const graph::Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<int64_t> axes = in.size() > 1 && in[1] ? in[1]->to_i64_vector() : std::vector<int64_t>{};
  std::vector<bool> reduced =
      graph::ops::reduced_axes(axes, x.rank(), n.attrs.get_int("noop_with_empty_axes") != 0, n.span());
  if (x.dtype() == DType::kF16 || x.dtype() == DType::kBF16) {
    Tensor y(DType::kF32, out[0].shape());
    reduce_as<float, double>(k, converted(x, DType::kF32), reduced, y);
    out[0] = converted(y, x.dtype());
    return;
  }
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      reduce_as<T, double>(k, x, reduced, out[0]);
    } else if constexpr (std::is_integral_v<T>) {
      if (needs_real_math(k))
        reduce_as<T, double>(k, x, reduced, out[0]);
      else
        reduce_as<T, std::conditional_t<std::is_unsigned_v<T>, uint64_t, int64_t>>(k, x, reduced, out[0]);
    }
  });
}

// The index along `axis` of the first (or, with select_last_index, the last)
// maximum / minimum; NaN counts as the extreme, as in numpy.
template <typename T>
void arg_reduce_as(bool is_max, bool last, int axis, const Tensor& x, Tensor& y) {
  const T* in = x.data<T>();
  int64_t* out = y.data<int64_t>();
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < x.shape().size(); ++d) inner *= x.shape()[d];
  int64_t extent = x.shape()[size_t(axis)];
  std::vector<bool> reduced(size_t(x.rank()), false);
  reduced[size_t(axis)] = true;
  std::vector<T> best(size_t(y.numel()));
  for_each_folded(x.shape(), reduced, [&](int64_t i, int64_t o) {
    int64_t k = (i / inner) % extent;
    T v = in[i], b = best[size_t(o)];
    bool same = v == b || (is_nan(v) && is_nan(b));
    bool better = k == 0 || (is_max ? v > b : v < b) || (last && same) || (is_nan(v) && !is_nan(b));
    if (!better) return;
    best[size_t(o)] = v;
    out[o] = k;
  });
}

void arg_reduce(bool is_max, const graph::Node& n, const std::vector<const Tensor*>& in,
                std::vector<Tensor>& out) {
  Tensor x = *in[0];
  if (x.dtype() == DType::kF16 || x.dtype() == DType::kBF16) x = converted(x, DType::kF32);
  int axis = graph::ops::normalize_axis(n.attrs.get_int("axis"), x.rank(), n.span());
  bool last = n.attrs.get_int("select_last_index") != 0;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
      arg_reduce_as<T>(is_max, last, axis, x, out[0]);
  });
}

}  // namespace

void register_reduce(KernelRegistry& r) {
  const std::pair<const char*, Fold> ops[] = {
      {"ReduceSum", Fold::kSum},       {"ReduceMean", Fold::kMean},
      {"ReduceProd", Fold::kProd},     {"ReduceMax", Fold::kMax},
      {"ReduceMin", Fold::kMin},       {"ReduceL1", Fold::kL1},
      {"ReduceL2", Fold::kL2},         {"ReduceSumSquare", Fold::kSumSquare},
      {"ReduceLogSum", Fold::kLogSum}, {"ReduceLogSumExp", Fold::kLogSumExp}};
  for (const auto& [op, fold] : ops)
    r.add(op, [fold = fold](const graph::Node& n, const std::vector<const Tensor*>& in,
                            std::vector<Tensor>& out) { reduce(fold, n, in, out); });
  r.add("ArgMax", [](const graph::Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
    arg_reduce(true, n, in, out);
  });
  r.add("ArgMin", [](const graph::Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
    arg_reduce(false, n, in, out);
  });
}

}  // namespace tessel::reference::kernels
