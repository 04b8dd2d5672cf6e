// Compute definitions of the broadcasting elementwise ops: arithmetic, PRelu,
// Pow, Mod, comparisons, logic and the variadic Max/Min/Sum/Mean. Each input
// is read at the numpy broadcast of the output index. Integer semantics follow
// the reference kernels: arithmetic wraps, Div truncates, MIN / -1 wraps.
#include <climits>

#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

using namespace tir;

namespace {

// fn(a, b, ct) on the inputs converted to their compute dtype ct.
using BinaryFn = std::function<Expr(const Expr& a, const Expr& b, DType ct, const graph::Attrs& attrs)>;

// divides: an integer divisor is checked not to be zero first (Div, Mod).
void add_binary(LoweringRegistry& r, const std::string& op, int uses, BinaryFn fn, bool divides = false) {
  add_injective(
      r, op,
      [uses, fn, divides](LowerContext& ctx, const graph::Node& node, const std::vector<TensorExpr>& in) {
        std::vector<int64_t> shape = static_shape(node.outputs[0]->type, node.span());
        TensorExpr a = broadcast_once(ctx, node, share(ctx, node, in[0], uses), shape);
        TensorExpr b = broadcast_once(ctx, node, share(ctx, node, in[1], uses), shape);
        if (divides) require_nonzero(ctx, node, 1, b);
        DType out = output_dtype(node);
        graph::Attrs attrs = node.attrs;
        return std::vector<TensorExpr>{index_map(node, 0, [a, b, out, fn, attrs, shape](const Index& idx) {
          Expr x = at_broadcast(a, idx, shape), y = at_broadcast(b, idx, shape);
          DType ct = compute_dtype(x->dtype);
          return cast(out, fn(cast(ct, x), cast(ct, y), ct, attrs));
        })};
      });
}

// b with -1 replaced by 1, so that a division never computes MIN / -1.
Expr safe_divisor(const Expr& b, DType ct) {
  if (!is_signed(ct)) return b;
  return select(eq(b, const_of(ct, -1)), const_of(ct, 1), b);
}

Expr divide(const Expr& a, const Expr& b, DType ct) {
  if (is_float(ct) || !is_signed(ct)) return div(a, b);
  return select(eq(b, const_of(ct, -1)), const_of(ct, 0) - a, div(a, safe_divisor(b, ct)));
}

// fmod: the remainder has the dividend's sign (C's %); otherwise the
// divisor's (Python's %, floormod). A divisor of -1 leaves no remainder.
Expr modulo(const Expr& a, const Expr& b, DType ct, bool fmod) {
  if (is_float(ct)) return call(Intrinsic::k_fmod, {a, b});
  Expr d = safe_divisor(b, ct);
  if (!fmod) return floormod(a, d);
  return a - div(a, d) * d;
}

// The base's dtype is the result's: floats compute in the base's compute
// dtype; an integer base with a float exponent goes through f64 and truncates.
// Integer powers also go through f64, exact while |x^e| < 2^53; a negative
// exponent truncates 1 / x^-e (0 unless x is 1 or -1, and 0 for x = 0).
Expr power(const Expr& x, const Expr& e, DType base) {
  DType ct = compute_dtype(base);
  if (is_float(base))
    return cast(base, call(Intrinsic::k_pow, {cast(ct, x), cast(ct, cast(compute_dtype(e->dtype), e))}));
  Expr fx = cast(DType::kF64, x), fe = cast(DType::kF64, cast(compute_dtype(e->dtype), e));
  Expr p = float_to_int(call(Intrinsic::k_pow, {fx, fe}), base);
  if (is_float(e->dtype)) return p;
  Expr zero_to_negative = eq(x, const_of(base, 0)) && lt(e, const_of(e->dtype, 0));
  return select(zero_to_negative, const_of(base, 0), p);
}

void register_pow(LoweringRegistry& r) {
  add_injective(r, "Pow", [](LowerContext& ctx, const graph::Node& node, const std::vector<TensorExpr>& in) {
    TensorExpr a = share(ctx, node, in[0], 2), b = share(ctx, node, in[1], 2);
    DType out = output_dtype(node);
    std::vector<int64_t> shape = static_shape(node.outputs[0]->type, node.span());
    return std::vector<TensorExpr>{index_map(node, 0, [a, b, out, shape](const Index& idx) {
      return power(at_broadcast(a, idx, shape), at_broadcast(b, idx, shape), out);
    })};
  });
}

// fold(fn) over every input, the running value rounded to the output dtype
// after each step (as the reference keeps it in the output).
void add_variadic(LoweringRegistry& r, const std::string& op,
                  std::function<Expr(const Expr&, const Expr&)> fn, bool mean = false) {
  add_injective(
      r, op, [fn, mean](LowerContext& ctx, const graph::Node& node, const std::vector<TensorExpr>& in) {
        std::vector<TensorExpr> xs;
        for (const TensorExpr& t : in) xs.push_back(share(ctx, node, t, 2));
        DType out = output_dtype(node);
        std::vector<int64_t> shape = static_shape(node.outputs[0]->type, node.span());
        return std::vector<TensorExpr>{index_map(node, 0, [xs, out, fn, mean, shape](const Index& idx) {
          DType ct = compute_dtype(out);
          Expr v = at_broadcast(xs[0], idx, shape);
          for (size_t k = 1; k < xs.size(); ++k)
            v = cast(out, fn(cast(ct, v), cast(ct, at_broadcast(xs[k], idx, shape))));
          if (!mean) return v;
          return cast(out, div(cast(DType::kF64, v), fconst(DType::kF64, double(xs.size()))));
        })};
      });
}

void register_arithmetic(LoweringRegistry& r) {
  using A = const graph::Attrs&;
  add_binary(r, "Add", 1, [](const Expr& a, const Expr& b, DType, A) { return a + b; });
  add_binary(r, "Sub", 1, [](const Expr& a, const Expr& b, DType, A) { return a - b; });
  add_binary(r, "Mul", 1, [](const Expr& a, const Expr& b, DType, A) { return a * b; });
  add_binary(
      r, "Div", 3, [](const Expr& a, const Expr& b, DType ct, A) { return divide(a, b, ct); }, true);
  add_binary(
      r, "Mod", 3,
      [](const Expr& a, const Expr& b, DType ct, A attrs) {
        return modulo(a, b, ct, attrs.get_int("fmod") != 0);
      },
      true);
  // The shape function made the slope broadcast to x's shape (one way).
  add_binary(r, "PRelu", 2, [](const Expr& x, const Expr& slope, DType ct, A) {
    return select(lt(x, const_of(ct, 0)), slope * x, x);
  });
  register_pow(r);
  // The tensor IR's max and min propagate NaN, as the reference's do.
  add_variadic(r, "Max", [](const Expr& a, const Expr& b) { return max(a, b); });
  add_variadic(r, "Min", [](const Expr& a, const Expr& b) { return min(a, b); });
  add_variadic(r, "Sum", [](const Expr& a, const Expr& b) { return a + b; });
  add_variadic(
      r, "Mean", [](const Expr& a, const Expr& b) { return a + b; }, true);
}

void register_comparisons(LoweringRegistry& r) {
  using A = const graph::Attrs&;
  add_binary(r, "Equal", 1, [](const Expr& a, const Expr& b, DType, A) { return eq(a, b); });
  add_binary(r, "BitwiseAnd", 1, [](const Expr& a, const Expr& b, DType, A) { return bit_and(a, b); });
  add_binary(r, "BitwiseOr", 1, [](const Expr& a, const Expr& b, DType, A) { return bit_or(a, b); });
  add_binary(r, "BitwiseXor", 1, [](const Expr& a, const Expr& b, DType, A) { return bit_xor(a, b); });
  add_binary(r, "BitShift", 1, [](const Expr& a, const Expr& b, DType, A attrs) {
    return attrs.get_string("direction") == "LEFT" ? shift_left(a, b) : shift_right(a, b);
  });
  add_binary(r, "Greater", 1, [](const Expr& a, const Expr& b, DType, A) { return gt(a, b); });
  add_binary(r, "Less", 1, [](const Expr& a, const Expr& b, DType, A) { return lt(a, b); });
  add_binary(r, "GreaterOrEqual", 1, [](const Expr& a, const Expr& b, DType, A) { return ge(a, b); });
  add_binary(r, "LessOrEqual", 1, [](const Expr& a, const Expr& b, DType, A) { return le(a, b); });
  add_binary(r, "And", 1, [](const Expr& a, const Expr& b, DType, A) { return logical_and(a, b); });
  add_binary(r, "Or", 1, [](const Expr& a, const Expr& b, DType, A) { return logical_or(a, b); });
  add_binary(r, "Xor", 1, [](const Expr& a, const Expr& b, DType, A) { return ne(a, b); });
}

}  // namespace

void register_elementwise_binary_lowerings(LoweringRegistry& r) {
  register_arithmetic(r);
  register_comparisons(r);
}

}  // namespace tessel::lower
