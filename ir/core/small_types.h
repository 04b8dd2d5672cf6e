// The element types narrower than the compute types, held one per byte: the
// 8-bit floats (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, the exponent-only E8M0),
// the 4-bit float E2M1 and the 4- and 2-bit integers. They are storage
// formats: a value is decoded to a float (or an integer) to compute and
// encoded back. Standard library only, header only: the model runtime's
// conversion functions use it as the compiler does.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace tessel::small_types {

enum class Format : uint8_t { kE4M3FN, kE4M3FNUZ, kE5M2, kE5M2FNUZ, kE8M0, kE2M1, kI4, kU4, kI2, kU2 };

constexpr int width_bits(Format f) {
  switch (f) {
    case Format::kE2M1:
    case Format::kI4:
    case Format::kU4: return 4;
    case Format::kI2:
    case Format::kU2: return 2;
    default: return 8;
  }
}

constexpr bool is_integer_format(Format f) {
  return f == Format::kI4 || f == Format::kU4 || f == Format::kI2 || f == Format::kU2;
}

// The layout of a float format with a sign: exponent and mantissa bits, bias,
// the largest finite magnitude's code, and how NaN and infinity are spelled.
struct FloatLayout {
  int exponent_bits, mantissa_bits, bias;
  uint8_t max_code;  // magnitude code of the largest finite value
  uint8_t sign_bit;  // 0x80, or 0x8 for E2M1
  bool fnuz;         // NaN is the negative zero's code; no -0, no infinity
  bool ieee;         // E5M2: an all-ones exponent is infinity (mantissa 0) or NaN
  bool fn;           // E4M3FN: the all-ones code is NaN; no infinity
};

inline FloatLayout float_layout(Format f) {
  switch (f) {
    case Format::kE4M3FN: return {4, 3, 7, 0x7E, 0x80, false, false, true};
    case Format::kE4M3FNUZ: return {4, 3, 8, 0x7F, 0x80, true, false, false};
    case Format::kE5M2: return {5, 2, 15, 0x7B, 0x80, false, true, false};
    case Format::kE5M2FNUZ: return {5, 2, 16, 0x7F, 0x80, true, false, false};
    default: return {2, 1, 1, 0x7, 0x8, false, false, false};  // E2M1
  }
}

// The value of a magnitude code (no sign) of a float layout.
inline double magnitude(const FloatLayout& l, uint32_t code) {
  uint32_t mantissa = code & ((1u << l.mantissa_bits) - 1), exponent = code >> l.mantissa_bits;
  if (exponent == 0) return std::ldexp(double(mantissa), 1 - l.bias - l.mantissa_bits);
  return std::ldexp(1.0 + std::ldexp(double(mantissa), -l.mantissa_bits), int(exponent) - l.bias);
}

inline double decode(Format f, uint8_t bits) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f) {
    case Format::kI4: return double(int8_t(uint8_t(bits << 4)) >> 4);
    case Format::kU4: return double(bits & 0xF);
    case Format::kI2: return double(int8_t(uint8_t(bits << 6)) >> 6);
    case Format::kU2: return double(bits & 0x3);
    case Format::kE8M0: return bits == 0xFF ? nan : std::ldexp(1.0, int(bits) - 127);
    default: break;
  }
  FloatLayout l = float_layout(f);
  uint32_t code = bits & (l.sign_bit - 1u);
  bool negative = (bits & l.sign_bit) != 0;
  if (l.fnuz && bits == 0x80) return nan;
  if (l.fn && code == 0x7F) return nan;
  uint32_t all_ones = (1u << l.exponent_bits) - 1;
  if (l.ieee && (code >> l.mantissa_bits) == all_ones)
    return (code & ((1u << l.mantissa_bits) - 1)) ? nan : (negative ? -INFINITY : INFINITY);
  double v = magnitude(l, code);
  return negative ? -v : v;
}

// float -> integer as x86 converts (truncation; NaN and values outside int64
// give INT64_MIN), then the low bits: ONNX's casts to the small integers wrap.
inline uint8_t encode_integer(Format f, double x) {
  int64_t i = (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? int64_t(x) : INT64_MIN;
  return uint8_t(uint64_t(i) & ((1u << width_bits(f)) - 1));
}

// E8M0 rounds up to a power of two; 0 becomes the smallest, negatives and
// NaN the NaN code; past 2^127 saturates to it or is NaN.
inline uint8_t encode_e8m0(double x, bool saturate) {
  if (std::isnan(x) || x < 0) return 0xFF;
  if (x == 0) return 0;
  if (std::isinf(x)) return saturate ? 0xFE : 0xFF;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  int code = (e - 1) + 127 + (m != 0.5 ? 1 : 0);
  if (code < 0) return 0;
  if (code > 254) return saturate ? 0xFE : 0xFF;
  return uint8_t(code);
}

// Round to nearest, ties to even, among the finite magnitudes; beyond the
// largest: saturate to it (always for E2M1, which has no infinity or NaN),
// or infinity / NaN where rounding overflows.
inline uint8_t encode_float(Format f, double x, bool saturate) {
  FloatLayout l = float_layout(f);
  bool always_saturates = f == Format::kE2M1;
  if (std::isnan(x)) return l.fnuz ? 0x80 : always_saturates ? 0x8 : 0x7F;
  uint8_t sign = std::signbit(x) ? l.sign_bit : 0;
  double a = std::fabs(x);
  uint8_t overflow = l.fnuz ? 0x80 : uint8_t(sign | (l.ieee ? 0x7C : 0x7F));
  double top = magnitude(l, l.max_code);
  double half_ulp = (top - magnitude(l, l.max_code - 1u)) / 2;
  if (a > top) {
    bool rounds_over = a > top + half_ulp || (a == top + half_ulp && (l.max_code & 1));
    if (saturate || always_saturates || !rounds_over) return uint8_t(sign | l.max_code);
    return overflow;
  }
  uint32_t lo = 0, hi = l.max_code;  // the largest code whose magnitude is <= a
  while (lo < hi) {
    uint32_t mid = (lo + hi + 1) / 2;
    if (magnitude(l, mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  uint32_t code = lo;
  if (code < l.max_code) {
    double below = a - magnitude(l, code), above = magnitude(l, code + 1) - a;
    if (above < below || (above == below && (code & 1))) ++code;
  }
  if (code == 0 && l.fnuz) return 0;  // no negative zero
  return uint8_t(sign | code);
}

// Where encode(f, x, false) differs from encode(f, x, true): magnitudes above
// `threshold` (or equal to it, when ties_overflow) give the code below for
// their sign. E2M1 always saturates (never_overflows).
struct Overflow {
  bool never_overflows = false;
  double threshold = 0;
  bool ties_overflow = false;
  uint8_t positive_code = 0, negative_code = 0;
};

inline Overflow overflow_of(Format f) {
  if (f == Format::kE2M1 || is_integer_format(f)) return {true, 0, false, 0, 0};
  if (f == Format::kE8M0) return {false, std::ldexp(1.0, 127), false, 0xFF, 0xFF};
  FloatLayout l = float_layout(f);
  double top = magnitude(l, l.max_code);
  double threshold = top + (top - magnitude(l, l.max_code - 1u)) / 2;
  uint8_t code = l.fnuz ? 0x80 : l.ieee ? 0x7C : 0x7F;
  return {false, threshold, (l.max_code & 1) != 0, code, uint8_t(l.fnuz ? 0x80 : (code | 0x80))};
}

inline uint8_t encode(Format f, double x, bool saturate) {
  if (is_integer_format(f)) return encode_integer(f, x);
  if (f == Format::kE8M0) return encode_e8m0(x, saturate);
  return encode_float(f, x, saturate);
}

}  // namespace tessel::small_types
