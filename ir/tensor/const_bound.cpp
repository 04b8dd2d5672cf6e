// Constant interval bounds of integer expressions, for the simplifier's
// decisions. Sound under wrap-around: an interval arithmetic result that
// leaves the dtype's range becomes the whole range, because the program's
// value may then have wrapped anywhere.
#include <algorithm>
#include <limits>

#include "ir/tensor/simplify_internal.h"

namespace tessel::tir::simplify_detail {

Interval dtype_range(DType t) {
  switch (t) {
    case DType::kI8: return {INT8_MIN, INT8_MAX};
    case DType::kU8: return {0, UINT8_MAX};
    case DType::kI16: return {INT16_MIN, INT16_MAX};
    case DType::kU16: return {0, UINT16_MAX};
    case DType::kI32: return {INT32_MIN, INT32_MAX};
    case DType::kU32: return {0, UINT32_MAX};
    case DType::kBool: return {0, 1};
    default: return {INT64_MIN, INT64_MAX};
  }
}

bool is_full_i64(const Interval& r) {
  return r.lo == INT64_MIN && r.hi == INT64_MAX;
}

ConstBound to_const_bound(const Interval& r, DType t) {
  ConstBound b{r.lo, r.hi};
  if (t == DType::kI64 || is_float(t)) {
    if (r.lo == INT64_MIN) b.min.reset();
    if (r.hi == INT64_MAX) b.max.reset();
  }
  return b;
}

Interval var_bound(const VarNode& v, const VarBounds& vars) {
  Interval r = dtype_range(v.dtype);
  auto it = vars.find(&v);
  if (it == vars.end()) return r;
  if (it->second.min) r.lo = std::max(r.lo, *it->second.min);
  if (it->second.max) r.hi = std::min(r.hi, *it->second.max);
  if (r.lo > r.hi) r.hi = r.lo;  // an empty binding: the code never runs, any value will do
  return r;
}

namespace {

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The interval of the mathematical results, or the dtype's range when that
// leaves it (or overflows int64 on the way).
Interval fit(DType t, std::initializer_list<std::optional<int64_t>> candidates) {
  Interval range = dtype_range(t);
  Interval out{INT64_MAX, INT64_MIN};
  for (const std::optional<int64_t>& c : candidates) {
    if (!c || *c < range.lo || *c > range.hi) return range;
    out.lo = std::min(out.lo, *c);
    out.hi = std::max(out.hi, *c);
  }
  return out;
}

Interval arith_bound(ExprKind kind, DType t, Interval a, Interval b) {
  switch (kind) {
    case ExprKind::kAdd: return fit(t, {checked_add(a.lo, b.lo), checked_add(a.hi, b.hi)});
    case ExprKind::kSub: {
      if (b.lo == INT64_MIN) return dtype_range(t);
      return fit(t, {checked_add(a.lo, -b.hi), checked_add(a.hi, -b.lo)});
    }
    default:
      return fit(t, {checked_mul(a.lo, b.lo), checked_mul(a.lo, b.hi), checked_mul(a.hi, b.lo),
                     checked_mul(a.hi, b.hi)});
  }
}

// Floor or truncating division by a divisor of one sign: monotone in each
// operand, so the extremes are at the corners.
Interval div_bound(ExprKind kind, DType t, Interval a, Interval b) {
  if (b.lo <= 0 && b.hi >= 0) return dtype_range(t);  // may divide by zero
  auto quotient = [&](int64_t x, int64_t y) -> std::optional<int64_t> {
    if (y == -1) return x == INT64_MIN ? std::nullopt : std::optional<int64_t>(-x);
    return kind == ExprKind::kDiv ? x / y : floor_div(x, y);
  };
  return fit(t, {quotient(a.lo, b.lo), quotient(a.lo, b.hi), quotient(a.hi, b.lo), quotient(a.hi, b.hi)});
}

Interval mod_bound(DType t, Interval a, Interval b) {
  if (b.is_const() && b.lo > 0) {
    int64_t c = b.lo;
    int64_t q = floor_div(a.lo, c);
    if (q == floor_div(a.hi, c)) return {a.lo - q * c, a.hi - q * c};  // within one period
    return {0, c - 1};
  }
  if (b.lo > 0) return a.lo >= 0 && a.hi < b.lo ? a : Interval{0, b.hi - 1};
  if (b.hi < 0) return {b.lo + 1, 0};
  return dtype_range(t);
}

Interval cast_bound(DType to, const Expr& value, const VarBounds& vars) {
  if (to == DType::kBool || !is_integer(to)) return dtype_range(to);
  if (is_float(value->dtype)) return dtype_range(to);
  Interval v = bound_of(value, vars);
  Interval range = dtype_range(to);
  return v.lo >= range.lo && v.hi <= range.hi ? v : range;
}

// Bounds of a node from its children's bounds (no affine view of itself).
Interval node_bound(const Expr& e, const VarBounds& vars) {
  const ExprNode& n = *e;
  DType t = n.dtype;
  switch (n.kind) {
    case ExprKind::kIntImm: {
      int64_t v = static_cast<const IntImmNode&>(n).value;
      return {v, v};
    }
    case ExprKind::kVar: return var_bound(static_cast<const VarNode&>(n), vars);
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
      return arith_bound(n.kind, t, bound_of(binary_a(n), vars), bound_of(binary_b(n), vars));
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
      return div_bound(n.kind, t, bound_of(binary_a(n), vars), bound_of(binary_b(n), vars));
    case ExprKind::kFloorMod: return mod_bound(t, bound_of(binary_a(n), vars), bound_of(binary_b(n), vars));
    case ExprKind::kMin:
    case ExprKind::kMax: {
      Interval a = bound_of(binary_a(n), vars), b = bound_of(binary_b(n), vars);
      if (n.kind == ExprKind::kMin) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::kSelect: {
      const auto& s = static_cast<const SelectNode&>(n);
      if (const int64_t* c = as_const_int(s.cond)) return bound_of(*c ? s.true_value : s.false_value, vars);
      Interval a = bound_of(s.true_value, vars), b = bound_of(s.false_value, vars);
      return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::kCast: return cast_bound(t, static_cast<const CastNode&>(n).value, vars);
    default: return dtype_range(t);  // comparisons and logic ([0, 1]), loads, calls
  }
}

}  // namespace

Interval bound_of(const Expr& e, const VarBounds& vars) {
  DType t = e->dtype;
  if (is_float(t)) return dtype_range(t);
  bool arith = e->kind == ExprKind::kAdd || e->kind == ExprKind::kSub || e->kind == ExprKind::kMul;
  if (t == DType::kI64 && arith) {
    // The affine view sees through cancellations: (i*16 + j) - i*16 is bounded like j.
    std::optional<Interval> r = exact_bound(to_affine(e), vars);
    return r ? *r : dtype_range(t);
  }
  return node_bound(e, vars);
}

std::optional<Interval> exact_bound(const Affine& form, const VarBounds& vars) {
  Interval sum{form.constant, form.constant};
  for (const AffineTerm& term : form.terms) {
    Interval b = node_bound(term.atom, vars);
    std::optional<int64_t> lo = checked_mul(b.lo, term.coeff), hi = checked_mul(b.hi, term.coeff);
    if (!lo || !hi) return std::nullopt;
    if (term.coeff < 0) std::swap(lo, hi);
    lo = checked_add(sum.lo, *lo);
    hi = checked_add(sum.hi, *hi);
    if (!lo || !hi) return std::nullopt;
    sum = {*lo, *hi};
  }
  return sum;
}

void refine_bounds(const Expr& cond, bool holds, const VarBounds& vars,
                   const std::function<void(const VarNode*, ConstBound)>& set) {
  if (cond->kind == (holds ? ExprKind::kAnd : ExprKind::kOr)) {  // every part holds (or fails)
    refine_bounds(binary_a(*cond), holds, vars, set);
    refine_bounds(binary_b(*cond), holds, vars, set);
    return;
  }
  if (const auto* n = cond.as<NotNode>()) return refine_bounds(n->a, !holds, vars, set);
  if (!is_comparison(cond->kind) || !is_integer(binary_a(*cond)->dtype)) return;
  ExprKind kind = cond->kind;
  const VarNode* v = binary_a(*cond).as<VarNode>();
  const int64_t* c = as_const_int(binary_b(*cond));
  if (!v || !c) {  // c op v: the mirrored comparison
    v = binary_b(*cond).as<VarNode>();
    c = as_const_int(binary_a(*cond));
    if (!v || !c) return;
    kind = mirrored_comparison(kind);
  }
  if (!holds) kind = negated_comparison(kind);
  Interval b = var_bound(*v, vars);
  int64_t x = *c;
  switch (kind) {
    case ExprKind::kLT:
      if (x > INT64_MIN) b.hi = std::min(b.hi, x - 1);
      break;
    case ExprKind::kLE: b.hi = std::min(b.hi, x); break;
    case ExprKind::kGT:
      if (x < INT64_MAX) b.lo = std::max(b.lo, x + 1);
      break;
    case ExprKind::kGE: b.lo = std::max(b.lo, x); break;
    case ExprKind::kEQ: b = {std::max(b.lo, x), std::min(b.hi, x)}; break;
    default: return;
  }
  if (b.lo > b.hi) return;  // the guarded code never runs: nothing to learn
  set(v, to_const_bound(b, v->dtype));
}

}  // namespace tessel::tir::simplify_detail
