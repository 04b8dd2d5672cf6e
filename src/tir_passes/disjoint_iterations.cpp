// iterations_disjoint: the per-iteration regions of a loop, apart or not.
#include "src/tir_passes/disjoint_iterations.h"

#include <optional>
#include <utility>

#include "ir/tensor/functor.h"

namespace tessel::tir_passes {

using namespace tir;

namespace {

// Some dimension's min is step * v + (terms free of v and of `also_free`)
// with |step| >= its extent: iterations that differ in v touch disjoint elements.
bool separated_by(const std::vector<IterationRegionDim>& dims, const Var& v, const std::vector<Var>& also_free,
                  const Analyzer& analyzer) {
  for (const IterationRegionDim& d : dims) {
    Expr step_expr = analyzer.simplify(substitute(d.min, {{v.get(), v + 1}}) - d.min);
    const int64_t* step = as_const_int(step_expr);
    if (!step || *step == INT64_MIN || (*step < 0 ? -*step : *step) < d.extent) continue;
    Expr rest = analyzer.simplify(d.min - v * *step);
    bool free = !uses_var(rest, v.get());
    for (const Var& w : also_free) free = free && !uses_var(d.min, w.get());
    if (free) return true;
  }
  return false;
}

// x // k -> q and x % k -> r for one variable x and constant k.
class QuotientRemainder : public ExprMutator {
 public:
  QuotientRemainder(const VarNode* x, int64_t k, Var q, Var r) : x_(x), k_(k), q_(std::move(q)), r_(std::move(r)) {}
  Expr mutate(const Expr& e) override {
    if (e->kind == ExprKind::kFloorDiv || e->kind == ExprKind::kFloorMod) {
      const int64_t* c = as_const_int(binary_b(*e));
      if (binary_a(*e).get() == x_ && c && *c == k_) return e->kind == ExprKind::kFloorDiv ? Expr(q_) : Expr(r_);
    }
    return mutate_children(e);
  }

 private:
  const VarNode* x_;
  int64_t k_;
  Var q_, r_;
};

// A loop over fused loops (parallel over channel tiles x rows) indexes by
// f // k and f % k: rewritten in q = f // k and r = f % k, iterations are
// disjoint when one dimension separates different q (and does not read r)
// and one separates different r (the same q).
bool fused_iterations_disjoint(const ForNode& f, const std::vector<IterationRegionDim>& dims,
                               const Analyzer& outer) {
  const int64_t* extent = as_const_int(f.extent);
  std::optional<int64_t> k;
  for (const IterationRegionDim& d : dims)
    walk_exprs(d.min, [&](const Expr& x) {
      if (x->kind != ExprKind::kFloorDiv && x->kind != ExprKind::kFloorMod) return;
      const auto* v = binary_a(*x).as<VarNode>();
      const int64_t* c = as_const_int(binary_b(*x));
      if (v == f.var.get() && c && *c > 1) k = k ? (*k == *c ? k : std::optional<int64_t>(-1)) : *c;
    });
  if (!extent || !k || *k < 0 || !is_const_int(f.min, 0)) return false;
  Var q = var(f.var->name + "_q"), r = var(f.var->name + "_r");
  std::vector<IterationRegionDim> split;
  for (const IterationRegionDim& d : dims) {
    Expr min = QuotientRemainder(f.var.get(), *k, q, r).mutate(d.min);
    if (uses_var(min, f.var.get())) return false;
    split.push_back({min, d.extent});
  }
  Analyzer analyzer = outer;
  analyzer.bind(q, 0, (*extent + *k - 1) / *k);
  analyzer.bind(r, 0, *k);
  return separated_by(split, q, {r}, analyzer) && separated_by(split, r, {}, analyzer);
}

}  // namespace

bool iterations_disjoint(const ForNode& loop, const std::vector<IterationRegionDim>& region, const Analyzer& outer) {
  return separated_by(region, loop.var, {}, outer) || fused_iterations_disjoint(loop, region, outer);
}

}  // namespace tessel::tir_passes
