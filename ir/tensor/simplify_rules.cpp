// The expression rewriter: children first, then constant folding, the affine
// canonical form of i64 arithmetic, floordiv/floormod under known bounds,
// min/max and comparisons decided by bounds, and boolean folding. Float
// expressions are only constant-folded (never reassociated).
#include <algorithm>
#include <numeric>

#include "ir/core/diagnostics.h"
#include "ir/tensor/simplify_internal.h"

namespace tessel::tir::simplify_detail {

namespace {

bool is_exact(const Affine& form, const VarBounds& vars) {
  return exact_bound(form, vars).has_value();
}

// Terms whose coefficient g divides go to `high` (divided by g), the others
// and the constant to `low`: form = g * high + low.
void split_by(const Affine& form, int64_t g, Affine* high, Affine* low) {
  for (const AffineTerm& t : form.terms) {
    if (t.coeff % g == 0) {
      high->add_term(t.atom, t.coeff / g);
    } else {
      low->add_term(t.atom, t.coeff);
    }
  }
  low->constant = form.constant;
}

// Divisors of c worth trying, largest first: c and its gcds with the coefficients.
std::vector<int64_t> candidate_divisors(const Affine& form, int64_t c) {
  std::vector<int64_t> out{c};
  for (const AffineTerm& t : form.terms) {
    if (t.coeff == INT64_MIN) continue;
    int64_t g = std::gcd(c, t.coeff < 0 ? -t.coeff : t.coeff);
    if (g > 1 && std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

// Whether a comparison of a - b with the given bounds is decided.
std::optional<bool> decide(ExprKind kind, int64_t lo, int64_t hi) {
  switch (kind) {
    case ExprKind::kLT: return hi < 0 ? std::optional(true) : lo >= 0 ? std::optional(false) : std::nullopt;
    case ExprKind::kLE: return hi <= 0 ? std::optional(true) : lo > 0 ? std::optional(false) : std::nullopt;
    case ExprKind::kGT: return lo > 0 ? std::optional(true) : hi <= 0 ? std::optional(false) : std::nullopt;
    case ExprKind::kGE: return lo >= 0 ? std::optional(true) : hi < 0 ? std::optional(false) : std::nullopt;
    case ExprKind::kEQ:
      if (lo == 0 && hi == 0) return true;
      return lo > 0 || hi < 0 ? std::optional(false) : std::nullopt;
    case ExprKind::kNE:
      if (lo == 0 && hi == 0) return false;
      return lo > 0 || hi < 0 ? std::optional(true) : std::nullopt;
    default: return std::nullopt;
  }
}

class Rewriter {
 public:
  explicit Rewriter(const VarBounds& vars) : vars_(vars) {}

  // Recursion follows the expression's depth; every rule builds its result
  // from already simplified parts.
  Expr visit(const Expr& e) {
    const ExprNode& n = *e;
    switch (n.kind) {
      case ExprKind::kIntImm:
      case ExprKind::kFloatImm: return e;
      case ExprKind::kVar: return visit_var(e);
      case ExprKind::kNot: return finish(e, rewrite_not(visit(static_cast<const NotNode&>(n).a)));
      case ExprKind::kSelect: {
        const auto& s = static_cast<const SelectNode&>(n);
        Expr cond = visit(s.cond);
        return finish(e, rewrite_select(cond, visit_arm(s.true_value, cond, true),
                                        visit_arm(s.false_value, cond, false)));
      }
      case ExprKind::kCast: {
        Expr v = visit(static_cast<const CastNode&>(n).value);
        Expr folded = fold_cast(n.dtype, v);
        return finish(e, folded.defined() ? folded : cast(n.dtype, v));
      }
      case ExprKind::kLoad: {
        const auto& l = static_cast<const LoadNode&>(n);
        std::vector<Expr> indices;
        for (const Expr& i : l.indices) indices.push_back(visit(i));
        return finish(e, load(l.buffer, std::move(indices)));
      }
      case ExprKind::kCall: {
        const auto& c = static_cast<const CallNode&>(n);
        std::vector<Expr> args;
        for (const Expr& a : c.args) args.push_back(visit(a));
        Expr folded = fold_call(c.op, args);
        return finish(e, folded.defined() ? folded : call_like(c, std::move(args)));
      }
      default: break;
    }
    TESSEL_ICHECK(is_binary(n.kind)) << expr_kind_name(n.kind);
    return finish(e, rewrite_binary(n.kind, visit(binary_a(n)), visit(binary_b(n))));
  }

 private:
  // A select evaluates only the arm its condition picks (select(i >= 1,
  // X[i - 1], 0) reads padding so): each arm is simplified knowing the
  // condition's outcome.
  Expr visit_arm(const Expr& arm, const Expr& cond, bool holds) {
    VarBounds refined = vars_;
    bool learned = false;
    refine_bounds(cond, holds, refined, [&](const VarNode* v, ConstBound b) {
      refined[v] = b;
      learned = true;
    });
    return learned ? Rewriter(refined).visit(arm) : visit(arm);
  }

  Expr visit_var(const Expr& e) {
    if (is_float(e->dtype)) return e;
    Interval b = var_bound(static_cast<const VarNode&>(*e), vars_);
    if (!b.is_const()) return e;
    return e->dtype == DType::kBool ? bool_imm(b.lo != 0) : int_imm(b.lo, e->dtype);
  }

  // A result whose bounds pin it to one value becomes that constant; a
  // result equal to the original is the original (sharing survives).
  Expr finish(const Expr& original, Expr r) {
    if (is_integer(r->dtype) && r->kind != ExprKind::kIntImm) {
      Interval b = bound_of(r, vars_);
      if (b.is_const()) r = int_imm(b.lo, r->dtype);
    }
    return expr_equal(r, original) ? original : r;
  }

  Expr rewrite_binary(ExprKind kind, const Expr& a, const Expr& b) {
    if (Expr folded = fold_binary(kind, a, b); folded.defined()) return folded;
    bool index = a->dtype == kIndexType;
    switch (kind) {
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
        return index ? rewrite_affine(binary(kind, a, b)) : rewrite_plain_arith(kind, a, b);
      case ExprKind::kDiv: return rewrite_div(a, b);
      case ExprKind::kFloorDiv: return rewrite_floordiv(a, b);
      case ExprKind::kFloorMod: return rewrite_floormod(a, b);
      case ExprKind::kMin:
      case ExprKind::kMax: return rewrite_min_max(kind, a, b);
      case ExprKind::kAnd:
      case ExprKind::kOr: return rewrite_logic(kind, a, b);
      case ExprKind::kBitAnd:
      case ExprKind::kBitOr:
      case ExprKind::kBitXor:
      case ExprKind::kShl:
      case ExprKind::kShr: return binary(kind, a, b);
      default: return rewrite_compare(kind, a, b);
    }
  }

  Expr rewrite_affine(const Expr& e) {
    Affine form = to_affine(e);
    merge_floor_pairs(&form);
    return from_affine(form);
  }

  // Integers other than i64: identities that hold under wrap-around. Floats:
  // nothing (x + 0.0 is not x when x is -0.0).
  Expr rewrite_plain_arith(ExprKind kind, const Expr& a, const Expr& b) {
    if (!is_integer(a->dtype)) return binary(kind, a, b);
    if (kind == ExprKind::kAdd && is_const_int(a, 0)) return b;
    if ((kind == ExprKind::kAdd || kind == ExprKind::kSub) && is_const_int(b, 0)) return a;
    if (kind == ExprKind::kSub && expr_equal(a, b)) return int_imm(0, a->dtype);
    if (kind == ExprKind::kMul) {
      if (is_const_int(a, 1)) return b;
      if (is_const_int(b, 1)) return a;
      if (is_const_int(a, 0) || is_const_int(b, 0)) return int_imm(0, a->dtype);
    }
    return binary(kind, a, b);
  }

  Expr rewrite_div(const Expr& a, const Expr& b) {
    if (!is_integer(a->dtype)) return div(a, b);
    if (is_const_int(b, 1)) return a;
    const int64_t* c = as_const_int(b);
    // A non-negative dividend divides the same way truncating or flooring.
    if (a->dtype == kIndexType && c && *c > 0 && bound_of(a, vars_).lo >= 0) {
      Expr r = rewrite_floordiv(a, b);
      const auto* fd = r.as<FloorDivNode>();
      if (!fd || !fd->a.same_as(a) || !fd->b.same_as(b)) return r;
    }
    return div(a, b);
  }

  Expr rewrite_floordiv(const Expr& a, const Expr& b) {
    if (!is_integer(a->dtype)) return floordiv(a, b);
    if (is_const_int(b, 1)) return a;
    const int64_t* cp = as_const_int(b);
    if (a->dtype != kIndexType || !cp || *cp <= 0) return floordiv(a, b);
    const int64_t c = *cp;
    if (const auto* inner = a.as<FloorDivNode>()) {  // (x // c1) // c == x // (c1 * c)
      const int64_t* c1 = as_const_int(inner->b);
      int64_t product;
      if (c1 && *c1 > 0 && !__builtin_mul_overflow(*c1, c, &product))
        return rewrite_floordiv(inner->a, int_imm(product));
    }
    Affine form = to_affine(a);
    if (!is_exact(form, vars_)) return floordiv(a, b);
    // a = g * high + low with low inside one period [g*m, g*m + g):
    // a // c == (high + m) // (c / g).
    for (int64_t g : candidate_divisors(form, c)) {
      Affine high, low;
      split_by(form, g, &high, &low);
      std::optional<Interval> lb = exact_bound(low, vars_);
      if (!lb) continue;
      int64_t m = floor_div(lb->lo, g);
      if (floor_div(lb->hi, g) != m) continue;
      if (__builtin_add_overflow(high.constant, m, &high.constant) || !is_exact(high, vars_)) continue;
      return g == c ? from_affine(high) : rewrite_floordiv(from_affine(high), int_imm(c / g));
    }
    // a // c == high + (low // c), with the multiples of c taken out of low's constant.
    Affine high, low;
    split_by(form, c, &high, &low);
    int64_t kq = floor_div(low.constant, c);
    if (high.terms.empty() && kq == 0) return floordiv(a, b);
    low.constant -= kq * c;
    if (!is_exact(low, vars_)) return floordiv(a, b);
    high.constant = kq;
    high.add_term(rewrite_floordiv(from_affine(low), b), 1);  // low has no multiple of c: one level
    return from_affine(high);
  }

  Expr rewrite_floormod(const Expr& a, const Expr& b) {
    if (!is_integer(a->dtype)) return floormod(a, b);
    if (is_const_int(b, 1)) return int_imm(0, a->dtype);
    const int64_t* cp = as_const_int(b);
    if (a->dtype != kIndexType || !cp || *cp <= 0) return floormod(a, b);
    const int64_t c = *cp;
    if (const auto* inner = a.as<FloorModNode>()) {  // (x % c1) % c == x % c when c divides c1
      const int64_t* c1 = as_const_int(inner->b);
      if (c1 && *c1 > 0 && *c1 % c == 0) return rewrite_floormod(inner->a, b);
    }
    Affine form = to_affine(a);
    if (!is_exact(form, vars_)) return floormod(a, b);
    // a = g * high + low, low in [g*m, g*m + g):
    // a % c == g * ((high + m) % (c / g)) + (low - g*m).
    for (int64_t g : candidate_divisors(form, c)) {
      Affine high, low;
      split_by(form, g, &high, &low);
      std::optional<Interval> lb = exact_bound(low, vars_);
      if (!lb) continue;
      int64_t m = floor_div(lb->lo, g);
      if (floor_div(lb->hi, g) != m) continue;
      if (__builtin_sub_overflow(low.constant, g * m, &low.constant)) continue;
      if (g == c) return from_affine(low);
      if (__builtin_add_overflow(high.constant, m, &high.constant) || !is_exact(high, vars_)) continue;
      Affine result;
      result.add(to_affine(rewrite_floormod(from_affine(high), int_imm(c / g))), g);
      result.add(low);
      return from_affine(result);
    }
    Affine high, low;
    split_by(form, c, &high, &low);
    int64_t kq = floor_div(low.constant, c);
    if (high.terms.empty() && kq == 0) return floormod(a, b);
    low.constant -= kq * c;
    if (!is_exact(low, vars_)) return floormod(a, b);
    return rewrite_floormod(from_affine(low), b);  // low has no multiple of c: one level
  }

  // Bounds of the value of a - b (as integers, no wrap-around), when known.
  std::optional<Interval> difference_bound(const Expr& a, const Expr& b) {
    if (a->dtype == kIndexType) {
      Affine fa = to_affine(a), fb = to_affine(b);
      // Without wrap-around in the subtraction, fa - fb is exactly a - b.
      if (is_exact(fa, vars_) && is_exact(fb, vars_) && fa.add_exact(fb, -1))
        if (std::optional<Interval> d = exact_bound(fa, vars_)) return d;
    }
    Interval ia = bound_of(a, vars_), ib = bound_of(b, vars_);
    __int128 lo = __int128(ia.lo) - ib.hi, hi = __int128(ia.hi) - ib.lo;
    if (lo < INT64_MIN || hi > INT64_MAX) return std::nullopt;
    return Interval{int64_t(lo), int64_t(hi)};
  }

  Expr rewrite_min_max(ExprKind kind, const Expr& a, const Expr& b) {
    if (!is_integer(a->dtype)) return binary(kind, a, b);
    if (expr_equal(a, b)) return a;
    bool is_min = kind == ExprKind::kMin;
    if (std::optional<Interval> d = difference_bound(a, b)) {
      if (d->hi <= 0) return is_min ? a : b;
      if (d->lo >= 0) return is_min ? b : a;
    }
    // min(min(x, c1), c2) == min(x, min(c1, c2)), likewise for max.
    if (as_const_int(b) && a->kind == kind && as_const_int(binary_b(*a)))
      return binary(kind, binary_a(*a), fold_binary(kind, binary_b(*a), b));
    return binary(kind, a, b);
  }

  Expr rewrite_compare(ExprKind kind, const Expr& a, const Expr& b) {
    if (is_float(a->dtype)) return binary(kind, a, b);
    if (a->dtype == kIndexType) {  // a and b the same form: equal, whatever the bounds
      Affine d = to_affine(a);
      d.add(to_affine(b), -1);
      if (d.is_const() && d.constant == 0) return bool_imm(*decide(kind, 0, 0));
    }
    if (std::optional<Interval> d = difference_bound(a, b))
      if (std::optional<bool> r = decide(kind, d->lo, d->hi)) return bool_imm(*r);
    return binary(kind, a, b);
  }

  Expr rewrite_logic(ExprKind kind, const Expr& a, const Expr& b) {
    bool is_and = kind == ExprKind::kAnd;
    if (const int64_t* x = as_const_int(a)) return (*x != 0) == is_and ? b : a;
    if (const int64_t* y = as_const_int(b)) return (*y != 0) == is_and ? a : b;
    if (expr_equal(a, b)) return a;
    return binary(kind, a, b);
  }

  Expr rewrite_not(const Expr& a) {
    if (Expr folded = fold_not(a); folded.defined()) return folded;
    if (const auto* inner = a.as<NotNode>()) return inner->a;
    if (is_comparison(a->kind)) {
      const Expr& x = binary_a(*a);
      // !(x < y) is x >= y only without NaNs; == and != invert for every dtype.
      bool invertible = !is_float(x->dtype) || a->kind == ExprKind::kEQ || a->kind == ExprKind::kNE;
      if (invertible) return binary(negated_comparison(a->kind), x, binary_b(*a));
    }
    return logical_not(a);
  }

  Expr rewrite_select(const Expr& cond, const Expr& t, const Expr& f) {
    if (const int64_t* c = as_const_int(cond)) return *c ? t : f;
    if (expr_equal(t, f)) return t;
    return select(cond, t, f);
  }

  const VarBounds& vars_;
};

}  // namespace

Expr simplify_expr(const Expr& e, const VarBounds& vars) {
  if (!e.defined()) return e;
  return Rewriter(vars).visit(e);
}

}  // namespace tessel::tir::simplify_detail
