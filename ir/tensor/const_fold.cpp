// Constant folding for the simplifier: every expression kind, with the
// interpreter's semantics per dtype (integers wrap to their width; f32 in
// float, f64 in double). What would trap or is not defined is left alone.
#include <bit>
#include <cmath>
#include <limits>

#include "ir/tensor/simplify_internal.h"

namespace tessel::tir::simplify_detail {

int64_t wrap_to(DType t, int64_t v) {
  switch (t) {
    case DType::kI32: return int32_t(v);
    case DType::kI8: return int8_t(v);
    case DType::kU8: return uint8_t(v);
    case DType::kBool: return v != 0;
    default: return v;
  }
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

namespace {

// Integer division as the interpreter (and two's complement hardware without
// the trap) does it: dividing by -1 negates with wrap-around.
std::optional<int64_t> fold_int_arith(ExprKind kind, int64_t x, int64_t y) {
  switch (kind) {
    case ExprKind::kAdd: return wrapping_add(x, y);
    case ExprKind::kSub: return wrapping_sub(x, y);
    case ExprKind::kMul: return wrapping_mul(x, y);
    case ExprKind::kDiv:
      if (y == 0) return std::nullopt;
      return y == -1 ? wrapping_sub(0, x) : x / y;
    case ExprKind::kFloorDiv:
      if (y == 0) return std::nullopt;
      return y == -1 ? wrapping_sub(0, x) : floor_div(x, y);
    case ExprKind::kFloorMod:
      if (y == 0) return std::nullopt;
      return floor_mod(x, y);
    case ExprKind::kMin: return std::min(x, y);
    case ExprKind::kMax: return std::max(x, y);
    default: return std::nullopt;
  }
}

std::optional<bool> fold_compare(ExprKind kind, auto x, auto y) {
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

// The value the interpreter gives a FloatImm of dtype t.
double float_value_of(DType t, double v) {
  switch (t) {
    case DType::kF64: return v;
    case DType::kF16: return half_to_float(float_to_half(float(v)));
    case DType::kBF16: return bf16_to_float(float_to_bf16(float(v)));
    default: return float(v);
  }
}

template <typename T>
std::optional<T> fold_float_arith(ExprKind kind, T x, T y) {
  switch (kind) {
    case ExprKind::kAdd: return x + y;
    case ExprKind::kSub: return x - y;
    case ExprKind::kMul: return x * y;
    case ExprKind::kDiv:
      if (y == 0) return std::nullopt;
      return x / y;
    case ExprKind::kMin:
    case ExprKind::kMax:
      // std::min/max of a NaN, or of +0 and -0, depends on operand order,
      // and the backends may use fmin/fmax: leave those to run time.
      if (std::isnan(x) || std::isnan(y) || (x == y && std::signbit(x) != std::signbit(y)))
        return std::nullopt;
      return kind == ExprKind::kMin ? std::min(x, y) : std::max(x, y);
    default: return std::nullopt;  // floordiv/floormod on floats: not folded
  }
}

Expr fold_float_binary(ExprKind kind, DType t, double a, double b) {
  double x = float_value_of(t, a), y = float_value_of(t, b);
  if (is_comparison(kind)) {
    std::optional<bool> r = fold_compare(kind, x, y);
    return r ? bool_imm(*r) : Expr();
  }
  if (t == DType::kF64) {
    std::optional<double> r = fold_float_arith<double>(kind, x, y);
    return r ? float_imm(*r, t) : Expr();
  }
  if (t != DType::kF32) return {};  // f16/bf16 arithmetic stays in float until a store
  std::optional<float> r = fold_float_arith<float>(kind, float(x), float(y));
  return r ? float_imm(double(*r), t) : Expr();
}

}  // namespace

Expr fold_binary(ExprKind kind, const Expr& a, const Expr& b) {
  const FloatImmNode* fa = a.as<FloatImmNode>();
  const FloatImmNode* fb = b.as<FloatImmNode>();
  if (fa && fb) return fold_float_binary(kind, a->dtype, fa->value, fb->value);
  const int64_t* x = as_const_int(a);
  const int64_t* y = as_const_int(b);
  if (!x || !y) return {};
  DType t = a->dtype;
  if (kind == ExprKind::kAnd) return bool_imm(*x != 0 && *y != 0);
  if (kind == ExprKind::kOr) return bool_imm(*x != 0 || *y != 0);
  if (is_comparison(kind)) return bool_imm(*fold_compare(kind, *x, *y));
  if (t == DType::kBool) return {};  // arithmetic on bools: not a form lowering builds
  std::optional<int64_t> r = fold_int_arith(kind, *x, *y);
  return r ? int_imm(wrap_to(t, *r), t) : Expr();
}

Expr fold_not(const Expr& a) {
  const int64_t* x = as_const_int(a);
  return x ? bool_imm(*x == 0) : Expr();
}

Expr fold_cast(DType to, const Expr& value) {
  DType from = value->dtype;
  if (const int64_t* x = as_const_int(value)) {
    if (to == DType::kBool) return bool_imm(*x != 0);
    if (is_integer(to)) return int_imm(wrap_to(to, *x), to);
    if (to == DType::kF64) return float_imm(double(*x), to);
    return float_imm(float_value_of(to, double(float(*x))), to);
  }
  const FloatImmNode* f = value.as<FloatImmNode>();
  if (!f) return {};
  double x = float_value_of(from, f->value);
  if (to == DType::kBool) return bool_imm(x != 0);
  if (is_integer(to)) {
    // C leaves NaN and out-of-range conversions undefined: fold only exact ones.
    if (std::isnan(x)) return {};
    double t = std::trunc(x);
    const double lo = double(dtype_range(to).lo), hi = double(dtype_range(to).hi);
    if (to == DType::kI64 ? !(t >= -9223372036854775808.0 && t < 9223372036854775808.0) : (t < lo || t > hi))
      return {};
    return int_imm(int64_t(t), to);
  }
  if (to == DType::kF64) return float_imm(x, to);
  return float_imm(float_value_of(to, double(float(x))), to);
}

namespace {

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
    case Intrinsic::k_round: return std::nearbyint(x);  // half to even, as ONNX Round
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
    case Intrinsic::k_isnan:
    case Intrinsic::k_isinf: break;  // predicates: handled by the caller
  }
  return x;
}

}  // namespace

Expr fold_call(Intrinsic op, const std::vector<Expr>& args) {
  std::vector<double> values;
  for (const Expr& a : args) {
    const FloatImmNode* f = a.as<FloatImmNode>();
    if (!f) return {};
    values.push_back(float_value_of(a->dtype, f->value));
  }
  DType t = args[0]->dtype;
  if (op == Intrinsic::k_isnan) return bool_imm(std::isnan(values[0]));
  if (op == Intrinsic::k_isinf) return bool_imm(std::isinf(values[0]));
  double y = values.size() > 1 ? values[1] : 0.0;
  if (t == DType::kF64) return float_imm(apply_intrinsic<double>(op, values[0], y), t);
  if (t != DType::kF32) return {};  // f16/bf16 results stay in float precision until a store
  return float_imm(double(apply_intrinsic<float>(op, float(values[0]), float(y))), t);
}

}  // namespace tessel::tir::simplify_detail
