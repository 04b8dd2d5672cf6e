// partition_vector_loops: vectorized loops split where their guards change.
#include "src/tir_passes/partition_loops.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "ir/tensor/functor.h"
#include "ir/tensor/scalar_semantics.h"
#include "ir/tensor/simplify.h"

namespace tessel::tir_passes {

using namespace tir;

namespace {

// The half-open range [lo, hi) of the loop variable in which every test holds.
struct Window {
  int64_t lo, hi;
};

void split_conjunction(const Expr& e, std::vector<Expr>& atoms) {
  if (e->kind == ExprKind::kAnd) {
    split_conjunction(binary_a(*e), atoms);
    split_conjunction(binary_b(*e), atoms);
    return;
  }
  atoms.push_back(e);
}

std::optional<int64_t> constant_of(const Expr& e) {
  Expr s = simplify(e);  // named: imm points into it
  const auto* imm = s.as<IntImmNode>();
  return imm ? std::optional<int64_t>(imm->value) : std::nullopt;
}

// Narrows w to where atom holds for every value of the other variables in
// it: atom is (a * v + rest) op k for a constant a != 0, rest bounded by
// `known` (the loops around v and inside it). A tap's guard, 0 <= v + k6 - 1
// < 112 with k6 in [0, 3), holds for v in [1, 111); a stride phase's,
// 0 <= 2 * v + p - 1 < 56 with p in [0, 2), for v in [1, 28).
void narrow(const Expr& atom, const Var& v, const Analyzer& known, Window& w) {
  ExprKind op = atom->kind;
  if (op != ExprKind::kLT && op != ExprKind::kLE && op != ExprKind::kGT && op != ExprKind::kGE) return;
  if (!uses_var(atom, v.get()) || binary_a(*atom)->dtype != v->dtype || binary_b(*atom)->dtype != v->dtype) return;
  Expr d = binary_a(*atom) - binary_b(*atom);  // atom: d op 0
  std::optional<int64_t> a =
      constant_of(substitute(d, {{v.get(), int_imm(1)}}) - substitute(d, {{v.get(), int_imm(0)}}));
  if (!a || *a == 0 || *a == INT64_MIN) return;
  Expr rest = simplify(d - v * *a);
  if (uses_var(rest, v.get())) return;
  ConstBound b = known.bound(rest);
  constexpr int64_t kLimit = int64_t(1) << 60;
  if (!b.min || !b.max || *b.min <= -kLimit || *b.max >= kLimit) return;
  int64_t lo = *b.min, hi = *b.max, c = *a;  // rest in [lo, hi]
  if (c < 0) {                               // c * v + rest op 0  <=>  (-c) * v + (-rest) (flipped op) 0
    op = op == ExprKind::kLT ? ExprKind::kGT : op == ExprKind::kLE ? ExprKind::kGE
         : op == ExprKind::kGT ? ExprKind::kLT : ExprKind::kLE;
    std::tie(lo, hi) = std::pair{-hi, -lo};
    c = -c;
  }
  // c * v + rest op 0 for every rest in [lo, hi], c > 0
  switch (op) {
    case ExprKind::kLT: w.hi = std::min(w.hi, floor_div(-hi - 1, c) + 1); break;
    case ExprKind::kLE: w.hi = std::min(w.hi, floor_div(-hi, c) + 1); break;
    case ExprKind::kGT: w.lo = std::max(w.lo, -floor_div(lo - 1, c)); break;  // c * v >= 1 - lo
    default: w.lo = std::max(w.lo, -floor_div(lo, c)); break;                 // c * v >= -lo
  }
}

// The tests in select and if conditions of `body`; with `vector_only`, only
// those inside a vectorized loop of it.
std::vector<Expr> guard_atoms(const Stmt& body, bool vector_only) {
  std::vector<Expr> atoms;
  walk(body, [&](const Stmt& s) {
    const auto* loop = s.as<ForNode>();
    if (vector_only && !(loop && loop->for_kind == ForKind::kVectorized)) return true;
    Stmt scope = vector_only ? loop->body : body;
    walk_exprs(scope, [&](const Expr& e) {
      if (const auto* sel = e.as<SelectNode>()) split_conjunction(sel->cond, atoms);
    });
    walk(scope, [&](const Stmt& inner) {
      if (const auto* branch = inner.as<IfThenElseNode>()) split_conjunction(branch->cond, atoms);
      return true;
    });
    return false;
  });
  return atoms;
}

// The constant ranges of the loops inside s, bound into `known`.
void bind_inner_loops(const Stmt& s, Analyzer& known) {
  walk(s, [&](const Stmt& x) {
    if (const auto* f = x.as<ForNode>()) {
      std::optional<int64_t> min = constant_of(f->min), extent = constant_of(f->extent);
      if (min && extent) known.bind(f->var, *min, *extent);
    }
    return true;
  });
}

// Splits loops bottom-up; the parts are simplified afterwards, with every
// enclosing loop's range known, so that a guard that mentions them folds too.
class VectorLoopPartitioner : public StmtMutator {
 public:
  explicit VectorLoopPartitioner(int64_t min_middle) : min_middle_(min_middle) {}

 protected:
  Stmt mutate_for(const ForNode& node, const Stmt& self) override {
    std::optional<int64_t> min = constant_of(node.min), extent = constant_of(node.extent);
    if (min && extent) enclosing_.push_back({node.var, *min, *extent});
    Stmt inner = StmtMutator::mutate_for(node, self);
    if (min && extent) enclosing_.pop_back();
    const auto* loop = inner.as<ForNode>();
    bool vectorized = node.for_kind == ForKind::kVectorized;
    if (!loop || !(vectorized || node.for_kind == ForKind::kSerial) || !min || !extent) return inner;
    return split(*loop, *min, *extent, 0);
  }

 private:
  // The loop cut where its tests change: before, where every test that
  // changes inside it holds, after; each of those cut again where the tests
  // still changing there change (a Concat of four inputs read along the loop
  // gives four loops), at most kMostCuts deep.
  Stmt split(const ForNode& loop, int64_t min, int64_t extent, int depth) {
    constexpr int kMostCuts = 16;
    Analyzer known;
    for (const Enclosing& e : enclosing_) known.bind(e.var, e.min, e.extent);
    bind_inner_loops(loop.body, known);
    Window w{min, min + extent};
    for (const Expr& atom : guard_atoms(loop.body, loop.for_kind != ForKind::kVectorized)) {
      Window own{min, min + extent};
      narrow(atom, loop.var, known, own);
      bool decided = own.hi <= own.lo || (own.lo == min && own.hi == min + extent);
      if (!decided) w = {std::max(w.lo, own.lo), std::min(w.hi, own.hi)};
    }
    if ((w.lo == min && w.hi == min + extent) || w.hi - w.lo < min_middle_) return Stmt(&loop);
    std::vector<Stmt> parts;
    for (auto [lo, hi] : {std::pair{min, w.lo}, std::pair{w.lo, w.hi}, std::pair{w.hi, min + extent}}) {
      if (hi <= lo) continue;
      Var v = var(loop.var->name, loop.var->dtype);  // each copy defines its own variable
      Stmt body = substitute(loop.body, VarMap{{loop.var.get(), v}});
      Stmt part =
          make_for(v, int_imm(lo), int_imm(hi - lo), loop.for_kind, body, loop.thread_tag, loop.annotations);
      parts.push_back(depth < kMostCuts ? split(*part.as<ForNode>(), lo, hi - lo, depth + 1) : part);
    }
    return make_seq(std::move(parts));
  }

  struct Enclosing {
    Var var;
    int64_t min, extent;
  };
  int64_t min_middle_;
  std::vector<Enclosing> enclosing_;  // constant-range loops around the one being mutated, outermost first
};

}  // namespace

PrimFunc partition_vector_loops(const PrimFunc& func, int64_t min_middle) {
  return simplify(with_body(*func, VectorLoopPartitioner(min_middle).mutate(func->body)));
}

}  // namespace tessel::tir_passes
