#include "ir/tensor/float_bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessel::tir {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Whether a and b are the same expression: the same node, or nodes of the
// same kind, dtype and value whose operands are the same (variables and
// buffers by identity). The lowering builds a clamp from one operand node,
// which the passes may copy once per use. A shared subexpression counts once
// per path to it, so the walk gives up (not the same) after `budget` nodes.
bool same_within(const Expr& a, const Expr& b, int& budget) {
  if (a.same_as(b)) return true;
  if (--budget < 0 || !a.defined() || !b.defined() || a->kind != b->kind || a->dtype != b->dtype)
    return false;
  const ExprNode& x = *a;
  const ExprNode& y = *b;
  if (is_binary(x.kind))
    return same_within(binary_a(x), binary_a(y), budget) && same_within(binary_b(x), binary_b(y), budget);
  auto all_same = [&](const std::vector<Expr>& p, const std::vector<Expr>& q) {
    if (p.size() != q.size()) return false;
    for (size_t i = 0; i < p.size(); ++i)
      if (!same_within(p[i], q[i], budget)) return false;
    return true;
  };
  switch (x.kind) {
    case ExprKind::kIntImm:
      return static_cast<const IntImmNode&>(x).value == static_cast<const IntImmNode&>(y).value;
    case ExprKind::kFloatImm: {
      double p = static_cast<const FloatImmNode&>(x).value, q = static_cast<const FloatImmNode&>(y).value;
      return p == q || (std::isnan(p) && std::isnan(q));
    }
    case ExprKind::kNot:
      return same_within(static_cast<const NotNode&>(x).a, static_cast<const NotNode&>(y).a, budget);
    case ExprKind::kCast:
      return same_within(static_cast<const CastNode&>(x).value, static_cast<const CastNode&>(y).value,
                         budget);
    case ExprKind::kSelect: {
      const auto& s = static_cast<const SelectNode&>(x);
      const auto& t = static_cast<const SelectNode&>(y);
      return same_within(s.cond, t.cond, budget) && same_within(s.true_value, t.true_value, budget) &&
             same_within(s.false_value, t.false_value, budget);
    }
    case ExprKind::kLoad: {
      const auto& l = static_cast<const LoadNode&>(x);
      const auto& m = static_cast<const LoadNode&>(y);
      return l.buffer.same_as(m.buffer) && all_same(l.indices, m.indices);
    }
    case ExprKind::kCall: {
      const auto& c = static_cast<const CallNode&>(x);
      const auto& d = static_cast<const CallNode&>(y);
      return c.op == d.op && all_same(c.args, d.args);
    }
    default: return false;  // variables (and anything else) by identity only
  }
}

bool same(const Expr& a, const Expr& b) {
  int budget = 4096;
  return same_within(a, b, budget);
}

FloatBounds unbounded() {
  return {-kInf, kInf, true};
}

FloatBounds either(const FloatBounds& a, const FloatBounds& b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi), a.may_be_nan || b.may_be_nan};
}

FloatBounds select_bounds(const SelectNode& s) {
  if (const auto* eq = s.cond.as<EQNode>(); eq && same(eq->a, eq->b) && same(s.true_value, eq->a)) {
    FloatBounds v = float_bounds(s.true_value);
    v.may_be_nan = false;  // the guard chose `other` for a NaN
    return either(v, float_bounds(s.false_value));
  }
  const auto* less = s.cond.as<LTNode>();
  if (!less) return unbounded();
  bool min = same(s.true_value, less->a) && same(s.false_value, less->b);
  bool max = same(s.true_value, less->b) && same(s.false_value, less->a);
  if (!min && !max) return unbounded();
  // A NaN operand fails the comparison, so either one can come through.
  FloatBounds a = float_bounds(less->a), b = float_bounds(less->b);
  bool nan = a.may_be_nan || b.may_be_nan;
  if (min) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi), nan};
  return {std::max(a.lo, b.lo), std::max(a.hi, b.hi), nan};
}

}  // namespace

FloatBounds float_bounds(const Expr& e) {
  if (!is_float(e->dtype)) return unbounded();
  if (const auto* c = e.as<FloatImmNode>()) return {c->value, c->value, std::isnan(c->value)};
  if (const auto* s = e.as<SelectNode>()) return select_bounds(*s);
  if (e->kind == ExprKind::kMin || e->kind == ExprKind::kMax) {  // std::min, std::max: NaN from either
    FloatBounds a = float_bounds(binary_a(*e)), b = float_bounds(binary_b(*e));
    bool nan = a.may_be_nan || b.may_be_nan;
    if (e->kind == ExprKind::kMin) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi), nan};
    return {std::max(a.lo, b.lo), std::max(a.hi, b.hi), nan};
  }
  if (const auto* c = e.as<CastNode>(); c && is_float(c->value->dtype) &&
                                        dtype_size(c->value->dtype) <= dtype_size(e->dtype) &&
                                        !is_small(e->dtype))
    return float_bounds(c->value);  // a widening conversion is exact
  return unbounded();
}

bool float_within(const Expr& e, double lo, double hi) {
  FloatBounds b = float_bounds(e);
  return !b.may_be_nan && b.lo >= lo && b.hi < hi;
}

}  // namespace tessel::tir
