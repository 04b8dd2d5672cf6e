// Integer sets for region analysis: evaluation of an index expression over
// relaxed loop variables, unions and coverage. Every set over-approximates.
#include "ir/tensor/int_set.h"

#include <numeric>

#include "ir/core/diagnostics.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/simplify_internal.h"

namespace tessel::tir {

using namespace simplify_detail;

IntSet IntSet::point(Expr e) {
  return {std::move(e), int_imm(1), 1, true};
}
IntSet IntSet::interval(Expr min, Expr extent) {
  return {std::move(min), std::move(extent), 1, true};
}
IntSet IntSet::everything() {
  return {Expr(), Expr(), 1, false};
}

Expr IntSet::max() const {
  TESSEL_ICHECK(bounded) << "max() of an unbounded set";
  return simplify(min + (extent - 1));
}

namespace {

// Symbolic bounds [min, max] (inclusive), or unbounded.
struct Hull {
  Expr min, max;
  bool bounded = true;
  int64_t stride = 1;
};

class SetEvaluator {
 public:
  SetEvaluator(const RelaxMap& relax, const Analyzer& analyzer)
      : relax_(relax), outer_(analyzer.var_bounds()), all_(analyzer.var_bounds()) {
    // Ranges may refer to other relaxed variables: a pass per variable
    // settles every chain of such references.
    for (size_t pass = 0; pass < relax.size(); ++pass)
      for (const auto& [v, range] : relax) all_[v] = range_bound(range.min, range.extent, all_);
  }

  bool uses_relaxed(const Expr& e) const {
    bool found = false;
    walk_exprs(e, [&](const Expr& x) {
      found = found || (x->kind == ExprKind::kVar && relax_.count(static_cast<const VarNode*>(x.get())));
    });
    return found;
  }

  Expr simplify_all(const Expr& e) const { return simplify_expr(e, all_); }
  Expr simplify_outer(const Expr& e) const { return simplify_expr(e, outer_); }

  // e is simplified under all_. Recursion follows the expression's depth.
  Hull eval(const Expr& e) const {
    if (!uses_relaxed(e)) return {e, e};
    if (e->dtype != kIndexType) return numeric(e);
    switch (e->kind) {
      case ExprKind::kVar: return relaxed_var(static_cast<const VarNode*>(e.get()));
      case ExprKind::kMul:  // a product of two non-constants is an atom: constant bounds only
        if (!as_const_int(binary_a(*e)) && !as_const_int(binary_b(*e))) return numeric(e);
        return affine(e);
      case ExprKind::kAdd:
      case ExprKind::kSub: return affine(e);
      case ExprKind::kFloorDiv: return floordiv_hull(e);
      case ExprKind::kFloorMod: return floormod_hull(e);
      case ExprKind::kMin:
      case ExprKind::kMax: {
        Hull a = eval(binary_a(*e)), b = eval(binary_b(*e));
        if (!a.bounded || !b.bounded) return numeric(e);
        ExprKind k = e->kind;
        return {simplify_outer(binary(k, a.min, b.min)), simplify_outer(binary(k, a.max, b.max))};
      }
      case ExprKind::kSelect: {
        const auto& s = static_cast<const SelectNode&>(*e);
        Hull a = eval(s.true_value), b = eval(s.false_value);
        if (!a.bounded || !b.bounded) return numeric(e);
        return {simplify_outer(min(a.min, b.min)), simplify_outer(max(a.max, b.max))};
      }
      default: return numeric(e);
    }
  }

 private:
  // Constant bounds over every variable's range; unbounded when there are none.
  Hull numeric(const Expr& e) const {
    if (is_float(e->dtype)) return {{}, {}, false};
    Interval b = bound_of(e, all_);
    if (e->dtype == kIndexType && (b.lo == INT64_MIN || b.hi == INT64_MAX)) return {{}, {}, false};
    return {int_imm(b.lo, e->dtype), int_imm(b.hi, e->dtype)};
  }

  Hull relaxed_var(const VarNode* v) const {
    const Range& r = relax_.at(v);
    if (uses_relaxed(r.min) || uses_relaxed(r.extent)) return numeric(Expr(Ref<const VarNode>(v)));
    return {simplify_outer(r.min), simplify_outer(r.min + r.extent - 1)};
  }

  // sum(coeff * atom) + constant: the symbolic terms stay, each relaxed
  // term contributes its low or high end by the sign of its coefficient.
  Hull affine(const Expr& e) const {
    Affine form = to_affine(e);
    Affine lo, hi;
    lo.constant = hi.constant = form.constant;
    int64_t stride = 0;
    bool only_vars = true;
    for (const AffineTerm& t : form.terms) {
      if (!uses_relaxed(t.atom)) {
        if (!lo.add_term_exact(t.atom, t.coeff) || !hi.add_term_exact(t.atom, t.coeff)) return numeric(e);
        continue;
      }
      Hull h = eval(t.atom);
      if (!h.bounded || t.coeff == INT64_MIN) return numeric(e);
      only_vars = only_vars && t.atom->kind == ExprKind::kVar;
      stride = std::gcd(stride, t.coeff < 0 ? -t.coeff : t.coeff);
      if (!lo.add_exact(to_affine(t.coeff > 0 ? h.min : h.max), t.coeff) ||
          !hi.add_exact(to_affine(t.coeff > 0 ? h.max : h.min), t.coeff))
        return numeric(e);
    }
    // The hull holds the program's values only if neither e nor its ends wrap.
    if (!exact_bound(form, all_) || !exact_bound(lo, all_) || !exact_bound(hi, all_)) return numeric(e);
    return {simplify_outer(from_affine(lo)), simplify_outer(from_affine(hi)), true,
            only_vars && stride > 0 ? stride : 1};
  }

  Hull floordiv_hull(const Expr& e) const {
    const int64_t* c = as_const_int(binary_b(*e));
    if (!c || *c <= 0) return numeric(e);
    Hull x = eval(binary_a(*e));
    if (!x.bounded) return numeric(e);
    return {simplify_outer(floordiv(x.min, *c)), simplify_outer(floordiv(x.max, *c))};
  }

  // The full period unless the operand provably stays within one.
  Hull floormod_hull(const Expr& e) const {
    const int64_t* c = as_const_int(binary_b(*e));
    if (!c || *c <= 0) return numeric(e);
    Hull x = eval(binary_a(*e));
    if (x.bounded) {
      Expr same_period = eq(floordiv(x.min, *c), floordiv(x.max, *c));
      if (is_const_int(simplify_outer(same_period), 1)) {
        Expr lo = simplify_outer(floormod(x.min, *c));
        return {lo, simplify_outer(lo + (x.max - x.min)), true, x.stride};
      }
    }
    return numeric(e);  // [0, c - 1], or tighter when the operand's constant bounds say so
  }

  const RelaxMap& relax_;
  VarBounds outer_, all_;
};

}  // namespace

IntSet eval_set(const Expr& e, const RelaxMap& relax, const Analyzer& analyzer) {
  SetEvaluator evaluator(relax, analyzer);
  Expr simplified = evaluator.simplify_all(e);
  if (!evaluator.uses_relaxed(simplified)) return IntSet::point(simplified);
  Hull h = evaluator.eval(simplified);
  if (!h.bounded) return IntSet::everything();
  Expr extent = evaluator.simplify_outer(h.max - h.min + 1);
  return {h.min, extent, is_const_int(extent, 1) ? 1 : h.stride, true};
}

std::vector<IntSet> eval_region(const std::vector<Range>& region, const RelaxMap& relax,
                                const Analyzer& analyzer) {
  std::vector<IntSet> out;
  for (const Range& r : region) {
    if (is_const_int(r.extent, 1)) {
      out.push_back(eval_set(r.min, relax, analyzer));
      continue;
    }
    IntSet lo = eval_set(r.min, relax, analyzer);
    IntSet hi = eval_set(r.min + r.extent - 1, relax, analyzer);
    if (!lo.bounded || !hi.bounded) {
      out.push_back(IntSet::everything());
      continue;
    }
    Expr extent = analyzer.simplify(hi.max() - lo.min + 1);
    out.push_back(IntSet::interval(lo.min, extent));
  }
  return out;
}

namespace {

// The stride a set's points keep; 0 for a single point (it fits any lattice).
int64_t lattice_step(const IntSet& s) {
  return is_const_int(s.extent, 1) ? 0 : s.stride;
}

}  // namespace

IntSet union_set(const IntSet& a, const IntSet& b, const Analyzer& analyzer) {
  if (!a.bounded || !b.bounded) return IntSet::everything();
  Expr lo = analyzer.simplify(min(a.min, b.min));
  Expr hi = analyzer.simplify(max(a.max(), b.max()));
  Expr extent = analyzer.simplify(hi - lo + 1);
  // Both lie on one lattice when their offsets differ by a multiple of the step.
  int64_t step = 1;
  Expr offset = analyzer.simplify(a.min - b.min);  // named: d points into it
  if (const int64_t* d = as_const_int(offset)) {
    if (*d != INT64_MIN) step = std::gcd(std::gcd(lattice_step(a), lattice_step(b)), *d < 0 ? -*d : *d);
    if (step == 0) step = 1;
  }
  return {lo, extent, step, true};
}

std::vector<Range> union_regions(const std::vector<std::vector<IntSet>>& regions, const Analyzer& analyzer) {
  TESSEL_ICHECK(!regions.empty()) << "union of no regions";
  std::vector<Range> out;
  for (size_t d = 0; d < regions[0].size(); ++d) {
    IntSet u = regions[0][d];
    for (size_t r = 1; r < regions.size(); ++r) {
      TESSEL_ICHECK(regions[r].size() == regions[0].size()) << "union of regions of different ranks";
      u = union_set(u, regions[r][d], analyzer);
    }
    TESSEL_ICHECK(u.bounded) << "union_regions: dimension " << d << " is unbounded; pass the buffer's shape";
    out.push_back({u.min, u.extent});
  }
  return out;
}

std::vector<Range> union_regions(const std::vector<std::vector<IntSet>>& regions,
                                 const std::vector<int64_t>& shape, const Analyzer& analyzer) {
  std::vector<std::vector<IntSet>> clipped = regions;
  for (std::vector<IntSet>& region : clipped) {
    TESSEL_ICHECK(region.size() == shape.size())
        << "region of rank " << region.size() << " for shape of rank " << shape.size();
    for (size_t d = 0; d < region.size(); ++d)
      if (!region[d].bounded) region[d] = IntSet::interval(int_imm(0), int_imm(shape[d]));
  }
  return union_regions(clipped, analyzer);
}

bool covers(const std::vector<Range>& outer, const std::vector<Range>& inner, const Analyzer& analyzer) {
  TESSEL_ICHECK(outer.size() == inner.size()) << "covers: ranks " << outer.size() << " and " << inner.size();
  for (size_t d = 0; d < outer.size(); ++d) {
    if (!analyzer.can_prove(le(outer[d].min, inner[d].min))) return false;
    if (!analyzer.can_prove(le(inner[d].min + inner[d].extent, outer[d].min + outer[d].extent))) return false;
  }
  return true;
}

}  // namespace tessel::tir
