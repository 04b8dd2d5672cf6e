// Element access for generic reference kernels: the type each dtype computes
// in (f16/bf16 compute in float, everything else in itself), loads and stores
// through it, C-like value conversion with defined results, wrapping integer math.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ir/core/tensor.h"

namespace tessel::reference::kernels {

template <typename T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<Half> {
  using type = float;
};
template <>
struct ComputeOf<BFloat16> {
  using type = float;
};
// The type a kernel computes in for storage type T.
template <typename T>
using compute_t = typename ComputeOf<T>::type;

template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// A copy of a float tensor in another float dtype (f16 / bf16 compute through an f32 copy).
inline Tensor converted(const Tensor& t, DType dtype) {
  Tensor c(dtype, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) c.set_f64(i, t.get_f64(i));
  return c;
}

template <typename T>
compute_t<T> load(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, Half>)
    return half_to_float(p[i]);
  else if constexpr (std::is_same_v<T, BFloat16>)
    return bf16_to_float(p[i]);
  else
    return p[i];
}

template <typename T>
void store(T* p, int64_t i, compute_t<T> v) {
  if constexpr (std::is_same_v<T, Half>)
    p[i] = float_to_half(v);
  else if constexpr (std::is_same_v<T, BFloat16>)
    p[i] = float_to_bf16(v);
  else
    p[i] = v;
}

// A compute value of any type converted to compute type D. Floats to integers
// truncate toward zero, going through int64 and wrapping like numpy does on
// x86; NaN, infinities and values outside int64 give INT64_MIN before wrapping.
template <typename D, typename S>
D convert_value(S v) {
  if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (is_int_v<D> && std::is_floating_point_v<S>) {
    constexpr double kLimit = 9223372036854775808.0;  // 2^63
    double d = double(v);
    int64_t i = (d >= -kLimit && d < kLimit) ? int64_t(d) : std::numeric_limits<int64_t>::min();
    return D(i);  // modular since C++20
  } else {
    return D(v);
  }
}

// Integer +, -, *, negation that wrap around in T (two's complement) instead
// of overflowing; floats compute normally.
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (is_int_v<T>)
    return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));
  else
    return a + b;
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (is_int_v<T>)
    return T(std::make_unsigned_t<T>(a) - std::make_unsigned_t<T>(b));
  else
    return a - b;
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (is_int_v<T>)
    return T(std::make_unsigned_t<T>(a) * std::make_unsigned_t<T>(b));
  else
    return a * b;
}
template <typename T>
T wrap_neg(T a) {
  if constexpr (is_int_v<T>)
    return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));
  else
    return -a;
}

}  // namespace tessel::reference::kernels
