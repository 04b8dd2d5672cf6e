// Compute definitions of the elementwise ops: every one is an index map that
// inlines into its consumer. This file holds the unary math ops and the
// family's registration; activations, binary ops and the special ops (Where,
// Clip, Cast, ...) live in elementwise_activation/binary/special.cpp.
#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

using namespace tir;

namespace {

Expr intrinsic(Intrinsic op, const Expr& x) {
  return call(op, {x});
}

Expr sign_of(const Expr& x, DType ct) {
  Expr zero = const_of(ct, 0), one = const_of(ct, 1);
  if (!is_float(ct)) {
    Expr minus = is_signed(ct) ? const_of(ct, -1) : zero;
    return select(gt(x, zero), one, select(lt(x, zero), minus, zero));
  }
  Expr nan_or_zero = select(call(Intrinsic::k_isnan, {x}), x, zero);
  return select(gt(x, zero), one, select(lt(x, zero), const_of(ct, -1), nan_or_zero));
}

Expr negate(const Expr& x, DType ct) {
  return is_float(ct) ? x * fconst(ct, -1.0) : const_of(ct, 0) - x;
}

Expr absolute(const Expr& x, DType ct) {
  if (is_float(ct)) return call(Intrinsic::k_fabs, {x});
  if (!is_signed(ct)) return x;
  return select(lt(x, const_of(ct, 0)), const_of(ct, 0) - x, x);
}

// IsInf with its detect_negative / detect_positive flags.
Expr is_inf(const Expr& x, DType ct, const graph::Attrs& attrs) {
  bool negative = attrs.get_int("detect_negative") != 0, positive = attrs.get_int("detect_positive") != 0;
  if (!negative && !positive) return bool_imm(false);
  Expr inf = call(Intrinsic::k_isinf, {x});
  if (negative && positive) return inf;
  Expr side = positive ? gt(x, const_of(ct, 0)) : lt(x, const_of(ct, 0));
  return logical_and(inf, side);
}

void register_math(LoweringRegistry& r) {
  auto simple = [&r](const char* op, Intrinsic fn) {
    add_unary(r, op, 1, [fn](const Expr& x, DType, const graph::Attrs&) { return intrinsic(fn, x); });
  };
  simple("Exp", Intrinsic::k_exp);
  simple("Log", Intrinsic::k_log);
  simple("Sqrt", Intrinsic::k_sqrt);
  simple("Erf", Intrinsic::k_erf);
  simple("Tanh", Intrinsic::k_tanh);
  simple("Sin", Intrinsic::k_sin);
  simple("Cos", Intrinsic::k_cos);
  simple("Tan", Intrinsic::k_tan);
  simple("Asin", Intrinsic::k_asin);
  simple("Acos", Intrinsic::k_acos);
  simple("Atan", Intrinsic::k_atan);
  simple("Sinh", Intrinsic::k_sinh);
  simple("Cosh", Intrinsic::k_cosh);
  simple("Asinh", Intrinsic::k_asinh);
  simple("Acosh", Intrinsic::k_acosh);
  simple("Atanh", Intrinsic::k_atanh);
  simple("IsNaN", Intrinsic::k_isnan);
  add_unary(r, "IsInf", 2, [](const Expr& x, DType ct, const graph::Attrs& a) { return is_inf(x, ct, a); });
  simple("Floor", Intrinsic::k_floor);
  simple("Ceil", Intrinsic::k_ceil);
  add_unary(r, "Reciprocal", 1,
            [](const Expr& x, DType ct, const graph::Attrs&) { return div(fconst(ct, 1.0), x); });
  add_unary(r, "Round", 4,
            [](const Expr& x, DType, const graph::Attrs&) { return intrinsic(Intrinsic::k_round, x); });
  add_unary(r, "Neg", 1, [](const Expr& x, DType ct, const graph::Attrs&) { return negate(x, ct); });
  add_unary(r, "Abs", 2, [](const Expr& x, DType ct, const graph::Attrs&) { return absolute(x, ct); });
  add_unary(r, "Sign", 4, [](const Expr& x, DType ct, const graph::Attrs&) { return sign_of(x, ct); });
  add_unary(r, "Not", 1, [](const Expr& x, DType, const graph::Attrs&) { return logical_not(x); });
  add_unary(r, "BitwiseNot", 1,
            [](const Expr& x, DType ct, const graph::Attrs&) { return bit_xor(x, const_of(ct, -1)); });
}

}  // namespace

void register_elementwise_lowerings(LoweringRegistry& r) {
  register_math(r);
  register_activation_lowerings(r);
  register_elementwise_binary_lowerings(r);
  register_elementwise_special_lowerings(r);
}

}  // namespace tessel::lower
