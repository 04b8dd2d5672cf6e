// Compute definitions of the activation functions, written in the same
// operation order as the reference kernels (src/reference/kernels/
// elementwise.cpp) so that results agree to rounding; 16-bit floats compute
// in f32 and round once.
#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

using namespace tir;

namespace {

Expr attr_const(DType ct, const graph::Attrs& attrs, const char* name) {
  return fconst(ct, attrs.get_float(name));
}

// log(1 + t) accurate for small t (Kahan): where 1 + t rounds to 1 the answer
// is t, otherwise log(u) * t / (u - 1) cancels the rounding error of u.
Expr log1p(const Expr& t, DType ct) {
  Expr u = fconst(ct, 1.0) + t;
  return select(eq(u, fconst(ct, 1.0)), t, call(Intrinsic::k_log, {u}) * div(t, u - fconst(ct, 1.0)));
}

// max(x, 0) + log1p(exp(-|x|)): no overflow for large x.
Expr softplus(const Expr& x, DType ct) {
  Expr t = call(Intrinsic::k_exp, {call(Intrinsic::k_fabs, {x}) * fconst(ct, -1.0)});
  return std_max(x, fconst(ct, 0.0)) + log1p(t, ct);
}

Expr hard_sigmoid(const Expr& x, const Expr& alpha, const Expr& beta, DType ct) {
  return std_max(fconst(ct, 0.0), std_min(fconst(ct, 1.0), alpha * x + beta));
}

Expr gelu(const Expr& x, DType ct, bool tanh_approx) {
  Expr half_x = fconst(ct, 0.5) * x;
  if (tanh_approx) {
    Expr cube = fconst(ct, 0.044715) * x * x * x;
    Expr inner = fconst(ct, 0.7978845608028654) * (x + cube);  // sqrt(2 / pi)
    return half_x * (fconst(ct, 1.0) + call(Intrinsic::k_tanh, {inner}));
  }
  return half_x * (fconst(ct, 1.0) + call(Intrinsic::k_erf, {x * fconst(ct, 0.7071067811865476)}));
}

Expr elu(const Expr& x, const Expr& alpha, DType ct) {
  return select(lt(x, fconst(ct, 0.0)), alpha * (call(Intrinsic::k_exp, {x}) - fconst(ct, 1.0)), x);
}

Expr celu(const Expr& x, const Expr& alpha, DType ct) {
  Expr neg = alpha * (call(Intrinsic::k_exp, {div(x, alpha)}) - fconst(ct, 1.0));
  return std_max(fconst(ct, 0.0), x) + std_min(fconst(ct, 0.0), neg);
}

Expr selu(const Expr& x, const Expr& alpha, const Expr& gamma, DType ct) {
  Expr neg = alpha * call(Intrinsic::k_exp, {x}) - alpha;
  return gamma * select(le(x, fconst(ct, 0.0)), neg, x);
}

// Shrink: x + bias below -lambd, x - bias above lambd, else 0; an integer x
// is compared and shifted in double, then truncated back, as the reference does.
Expr shrink(const Expr& x, DType ct, const graph::Attrs& attrs) {
  DType wt = is_float(ct) ? ct : DType::kF64;
  Expr v = cast(wt, x), lambd = fconst(wt, attrs.get_float("lambd")),
       bias = fconst(wt, attrs.get_float("bias"));
  Expr r = select(lt(v, fconst(wt, 0.0) - lambd), v + bias, select(gt(v, lambd), v - bias, fconst(wt, 0.0)));
  return cast(ct, r);
}

}  // namespace

void register_activation_lowerings(LoweringRegistry& r) {
  using A = const graph::Attrs&;
  add_unary(r, "Relu", 2,
            [](const Expr& x, DType ct, A) { return select(lt(x, const_of(ct, 0)), const_of(ct, 0), x); });
  add_unary(r, "Sigmoid", 1, [](const Expr& x, DType, A) { return call(Intrinsic::k_sigmoid, {x}); });
  add_unary(r, "Softplus", 3, [](const Expr& x, DType ct, A) { return softplus(x, ct); });
  add_unary(r, "Mish", 4,
            [](const Expr& x, DType ct, A) { return x * call(Intrinsic::k_tanh, {softplus(x, ct)}); });
  add_unary(r, "Softsign", 2, [](const Expr& x, DType ct, A) {
    return div(x, fconst(ct, 1.0) + call(Intrinsic::k_fabs, {x}));
  });
  add_unary(r, "LeakyRelu", 3, [](const Expr& x, DType ct, A attrs) {
    return select(lt(x, fconst(ct, 0.0)), attr_const(ct, attrs, "alpha") * x, x);
  });
  add_unary(r, "HardSigmoid", 1, [](const Expr& x, DType ct, A attrs) {
    return hard_sigmoid(x, attr_const(ct, attrs, "alpha"), attr_const(ct, attrs, "beta"), ct);
  });
  add_unary(r, "HardSwish", 2, [](const Expr& x, DType ct, A) {
    Expr sixth = div(fconst(ct, 1.0), fconst(ct, 6.0));  // C(1) / C(6), as the reference divides
    return x * hard_sigmoid(x, sixth, fconst(ct, 0.5), ct);
  });
  add_unary(r, "Gelu", 5, [](const Expr& x, DType ct, A attrs) {
    return gelu(x, ct, attrs.get_string("approximate") == "tanh");
  });
  add_unary(r, "Elu", 3,
            [](const Expr& x, DType ct, A attrs) { return elu(x, attr_const(ct, attrs, "alpha"), ct); });
  add_unary(r, "Celu", 3,
            [](const Expr& x, DType ct, A attrs) { return celu(x, attr_const(ct, attrs, "alpha"), ct); });
  add_unary(r, "Selu", 3, [](const Expr& x, DType ct, A attrs) {
    return selu(x, attr_const(ct, attrs, "alpha"), attr_const(ct, attrs, "gamma"), ct);
  });
  add_unary(r, "Swish", 2, [](const Expr& x, DType ct, A attrs) {
    return x * call(Intrinsic::k_sigmoid, {attr_const(ct, attrs, "alpha") * x});
  });
  add_unary(r, "Shrink", 3, [](const Expr& x, DType ct, A attrs) { return shrink(x, ct, attrs); });
  add_unary(r, "ThresholdedRelu", 2, [](const Expr& x, DType ct, A attrs) {
    return select(gt(x, attr_const(ct, attrs, "alpha")), x, fconst(ct, 0.0));
  });
}

}  // namespace tessel::lower
