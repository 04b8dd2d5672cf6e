// The single definition of the tensor IR's scalar arithmetic (integer wrap-around, floor division, float to
// int, intrinsics), shared by the constant folder, the interpreter and the backends' constant handling, so
// that what the simplifier folds is what the program computes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "ir/core/dtype.h"
#include "ir/tensor/expr.h"

namespace tessel::tir {

// The value a dtype stores for v: integers keep their low bits (two's complement), bool is v != 0.
inline int64_t wrap_to(DType t, int64_t v) {
  if (is_small(t))
    return int64_t(uint64_t(v) & ((1u << small_types::width_bits(small_format(t))) - 1));  // a code
  switch (t) {
    case DType::kI32: return int32_t(v);
    case DType::kI8: return int8_t(v);
    case DType::kU8: return uint8_t(v);
    case DType::kI16: return int16_t(v);
    case DType::kU16: return uint16_t(v);
    case DType::kU32: return uint32_t(v);
    case DType::kBool: return v != 0;
    default: return v;
  }
}

// Two's complement arithmetic on int64 without signed-overflow UB.
inline int64_t wrapping_add(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) + uint64_t(b));
}
inline int64_t wrapping_sub(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) - uint64_t(b));
}
inline int64_t wrapping_mul(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) * uint64_t(b));
}

// Integer divisions for b != 0 (the caller decides what division by zero does). Dividing by -1 negates
// with wrap-around, as two's complement hardware does without the INT64_MIN / -1 trap.
inline int64_t trunc_div(int64_t a, int64_t b) {
  return b == -1 ? wrapping_sub(0, a) : a / b;
}
inline int64_t floor_div(int64_t a, int64_t b) {
  if (b == -1) return wrapping_sub(0, a);
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
// The result has the sign of b (or is 0), and a == floor_div(a, b) * b + floor_mod(a, b) modulo 2^64.
inline int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Shifts as expr.h defines them, on the int64 an integer is held in (the
// caller wraps to the dtype); unsigned 64-bit values shift right logically
// (shift_right_u64).
inline int64_t shift_left_bits(int64_t x, int64_t y) {
  return y < 0 || y >= 64 ? 0 : int64_t(uint64_t(x) << y);
}
inline int64_t shift_right_bits(int64_t x, int64_t y) {
  return y < 0 || y >= 64 ? (x < 0 ? -1 : 0) : x >> y;
}
inline uint64_t shift_right_u64(uint64_t x, uint64_t y) {
  return y >= 64 ? 0 : x >> y;
}

// An integer arithmetic kind (add ... max) on stored values, before wrap_to; nullopt for division by
// zero (an error at run time, left alone by the folder) and for kinds that are not arithmetic.
inline std::optional<int64_t> apply_int_arith(ExprKind kind, int64_t x, int64_t y) {
  switch (kind) {
    case ExprKind::kAdd: return wrapping_add(x, y);
    case ExprKind::kSub: return wrapping_sub(x, y);
    case ExprKind::kMul: return wrapping_mul(x, y);
    case ExprKind::kDiv: return y == 0 ? std::nullopt : std::optional<int64_t>(trunc_div(x, y));
    case ExprKind::kFloorDiv: return y == 0 ? std::nullopt : std::optional<int64_t>(floor_div(x, y));
    case ExprKind::kFloorMod: return y == 0 ? std::nullopt : std::optional<int64_t>(floor_mod(x, y));
    case ExprKind::kMin: return std::min(x, y);
    case ExprKind::kMax: return std::max(x, y);
    case ExprKind::kBitAnd: return x & y;
    case ExprKind::kBitOr: return x | y;
    case ExprKind::kBitXor: return x ^ y;
    case ExprKind::kShl: return shift_left_bits(x, y);
    case ExprKind::kShr: return shift_right_bits(x, y);
    default: return std::nullopt;
  }
}

// Float Min and Max: a NaN operand, on either side, makes the result NaN, so that a max reduction
// (ReduceMax, MaxPool) sees every NaN, as numpy's does; otherwise std::max / std::min (of -0 and +0,
// the first operand here). Not std::max alone, which keeps x when y is NaN. The LLVM backend emits
// llvm.maximum / llvm.minimum with no-signed-zeros (on x86 a max, an unordered compare and a blend):
// the same NaNs and values, and of two equal zeros either one (without nsz, ordering -0 below +0
// cost three more instructions per max).
template <typename T>
T float_max(T x, T y) {
  if (std::isnan(y)) return y;
  return x < y ? y : x;  // x when x is NaN
}
template <typename T>
T float_min(T x, T y) {
  if (std::isnan(y)) return y;
  return y < x ? y : x;  // x when x is NaN
}

// A comparison kind on two values of one numeric class (C's operators: NaN compares unequal to all);
// nullopt for kinds that are not comparisons.
template <typename T>
std::optional<bool> apply_comparison(ExprKind kind, T x, T y) {
  switch (kind) {
    case ExprKind::kEQ: return x == y;
    case ExprKind::kNE: return x != y;
    case ExprKind::kLT: return x < y;
    case ExprKind::kLE: return x <= y;
    case ExprKind::kGT: return x > y;
    case ExprKind::kGE: return x >= y;
    default: return std::nullopt;
  }
}

template <typename T>
T float_floor_div(T a, T b) {
  return std::floor(a / b);
}
template <typename T>
T float_floor_mod(T a, T b) {
  return a - std::floor(a / b) * b;
}

// float -> int64 as x86 does it: truncation, and the "integer indefinite" value INT64_MIN for NaN and
// out-of-range inputs (C++ leaves those undefined). Narrower integers then wrap (wrap_to).
inline int64_t float_to_int(double x) {
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return std::numeric_limits<int64_t>::min();
  return int64_t(x);
}

// The value a float of dtype t holds for v: f32, f16 and bf16 round to their precision (and are computed
// in float), f64 keeps v.
inline double float_stored_value(DType t, double v) {
  switch (t) {
    case DType::kF64: return v;
    case DType::kF16: return half_to_float(float_to_half(float(v)));
    case DType::kBF16: return bf16_to_float(float_to_bf16(float(v)));
    default: return float(v);
  }
}

// An intrinsic on floats, in the precision T (float for f32/f16/bf16, double for f64); y is the second
// operand of pow and fmod. The predicates isnan/isinf give 1 or 0.
template <typename T>
T apply_intrinsic(Intrinsic op, T x, T y) {
  switch (op) {
    case Intrinsic::k_exp: return std::exp(x);
    case Intrinsic::k_log: return std::log(x);
    case Intrinsic::k_sqrt: return std::sqrt(x);
    case Intrinsic::k_rsqrt: return T(1) / std::sqrt(x);
    case Intrinsic::k_tanh: return std::tanh(x);
    case Intrinsic::k_erf: return std::erf(x);
    case Intrinsic::k_sigmoid: return T(1) / (T(1) + std::exp(-x));
    case Intrinsic::k_pow: return std::pow(x, y);
    case Intrinsic::k_fabs: return std::fabs(x);
    case Intrinsic::k_floor: return std::floor(x);
    case Intrinsic::k_ceil: return std::ceil(x);
    case Intrinsic::k_round: return std::nearbyint(x);  // default rounding mode: half to even, as ONNX Round
    case Intrinsic::k_sin: return std::sin(x);
    case Intrinsic::k_cos: return std::cos(x);
    case Intrinsic::k_tan: return std::tan(x);
    case Intrinsic::k_asin: return std::asin(x);
    case Intrinsic::k_acos: return std::acos(x);
    case Intrinsic::k_atan: return std::atan(x);
    case Intrinsic::k_sinh: return std::sinh(x);
    case Intrinsic::k_cosh: return std::cosh(x);
    case Intrinsic::k_asinh: return std::asinh(x);
    case Intrinsic::k_acosh: return std::acosh(x);
    case Intrinsic::k_atanh: return std::atanh(x);
    case Intrinsic::k_fmod: return std::fmod(x, y);
    case Intrinsic::k_isnan: return std::isnan(x);
    case Intrinsic::k_isinf: return std::isinf(x);
    case Intrinsic::k_bitcast: break;  // not arithmetic: the evaluators reinterpret bits
  }
  return x;
}

}  // namespace tessel::tir
