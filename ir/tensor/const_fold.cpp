// Constant folding for the simplifier: every expression kind, with the
// interpreter's semantics per dtype (scalar_semantics.h: integers wrap to their
// width; f32 in float, f64 in double). What would trap or C leaves undefined is
// left alone.
#include <bit>
#include <cmath>
#include <limits>

#include "ir/tensor/scalar_semantics.h"
#include "ir/tensor/simplify_internal.h"

namespace tessel::tir::simplify_detail {

namespace {

template <typename T>
std::optional<T> fold_float_arith(ExprKind kind, T x, T y) {
  switch (kind) {
    case ExprKind::kAdd: return x + y;
    case ExprKind::kSub: return x - y;
    case ExprKind::kMul: return x * y;
    case ExprKind::kDiv:
      if (y == 0) return std::nullopt;
      return x / y;
    case ExprKind::kMin: return float_min(x, y);
    case ExprKind::kMax: return float_max(x, y);
    default: return std::nullopt;  // floordiv/floormod on floats: not folded
  }
}

Expr fold_float_binary(ExprKind kind, DType t, double a, double b) {
  double x = float_stored_value(t, a), y = float_stored_value(t, b);
  if (is_comparison(kind)) {
    std::optional<bool> r = apply_comparison(kind, x, y);
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

// u64 constants are held as their bits in an int64: compared, divided and
// ordered unsigned; +, -, * wrap the same either way.
Expr fold_u64_binary(ExprKind kind, uint64_t x, uint64_t y) {
  if (is_comparison(kind)) return bool_imm(*apply_comparison(kind, x, y));
  uint64_t r;
  switch (kind) {
    case ExprKind::kAdd: r = x + y; break;
    case ExprKind::kSub: r = x - y; break;
    case ExprKind::kMul: r = x * y; break;
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
      if (y == 0) return {};
      r = x / y;
      break;
    case ExprKind::kFloorMod:
      if (y == 0) return {};
      r = x % y;
      break;
    case ExprKind::kMin: r = std::min(x, y); break;
    case ExprKind::kMax: r = std::max(x, y); break;
    case ExprKind::kBitAnd: r = x & y; break;
    case ExprKind::kBitOr: r = x | y; break;
    case ExprKind::kBitXor: r = x ^ y; break;
    case ExprKind::kShl: r = uint64_t(shift_left_bits(int64_t(x), int64_t(y))); break;
    case ExprKind::kShr: r = shift_right_u64(x, y); break;
    default: return {};
  }
  return int_imm(int64_t(r), DType::kU64);
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
  if (t == DType::kU64) return fold_u64_binary(kind, uint64_t(*x), uint64_t(*y));
  if (is_comparison(kind)) return bool_imm(*apply_comparison(kind, *x, *y));
  if (t == DType::kBool) return {};  // arithmetic on bools: not a form lowering builds
  std::optional<int64_t> r = apply_int_arith(kind, *x, *y);
  return r ? int_imm(wrap_to(t, *r), t) : Expr();
}

Expr fold_not(const Expr& a) {
  const int64_t* x = as_const_int(a);
  return x ? bool_imm(*x == 0) : Expr();
}

Expr fold_cast(DType to, const Expr& value) {
  DType from = value->dtype;
  if (is_small(to) || is_small(from)) return {};  // the runtime's conversions decide those
  if (const int64_t* x = as_const_int(value)) {
    if (to == DType::kBool) return bool_imm(*x != 0);
    if (is_integer(to)) return int_imm(wrap_to(to, *x), to);
    if (from == DType::kU64) {
      uint64_t u = uint64_t(*x);
      return float_imm(to == DType::kF64 ? double(u) : float_stored_value(to, double(float(u))), to);
    }
    if (to == DType::kF64) return float_imm(double(*x), to);
    return float_imm(float_stored_value(to, double(float(*x))), to);
  }
  const FloatImmNode* f = value.as<FloatImmNode>();
  if (!f) return {};
  double x = float_stored_value(from, f->value);
  if (to == DType::kBool) return bool_imm(x != 0);
  if (is_integer(to)) {
    // C leaves NaN and out-of-range conversions undefined: fold only exact ones.
    if (std::isnan(x)) return {};
    double t = std::trunc(x);
    const double lo = double(dtype_range(to).lo), hi = double(dtype_range(to).hi);
    if (to == DType::kI64 ? !(t >= -9223372036854775808.0 && t < 9223372036854775808.0) : (t < lo || t > hi))
      return {};
    return int_imm(wrap_to(to, float_to_int(x)), to);  // in range: the truncation t
  }
  if (to == DType::kF64) return float_imm(x, to);
  return float_imm(float_stored_value(to, double(float(x))), to);
}

Expr fold_call(Intrinsic op, const std::vector<Expr>& args) {
  if (op == Intrinsic::k_bitcast) return {};
  std::vector<double> values;
  for (const Expr& a : args) {
    const FloatImmNode* f = a.as<FloatImmNode>();
    if (!f) return {};
    values.push_back(float_stored_value(a->dtype, f->value));
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
