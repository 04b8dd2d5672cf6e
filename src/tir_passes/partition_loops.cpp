// partition_vector_loops: vectorized loops split where their guards change.
#include "src/tir_passes/partition_loops.h"

#include <algorithm>

#include "ir/tensor/functor.h"
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

// Narrows w to where atom holds, when atom is (v + c) op k or (-v + c) op k.
void narrow(const Expr& atom, const Var& v, Window& w) {
  ExprKind op = atom->kind;
  if (op != ExprKind::kLT && op != ExprKind::kLE && op != ExprKind::kGT && op != ExprKind::kGE) return;
  if (!uses_var(atom, v.get()) || binary_a(*atom)->dtype != v->dtype || binary_b(*atom)->dtype != v->dtype) return;
  Expr d = binary_a(*atom) - binary_b(*atom);  // atom: d op 0
  int sign = 0;
  std::optional<int64_t> c;
  if ((c = constant_of(d - v))) {
    sign = 1;
  } else if ((c = constant_of(d + v))) {
    sign = -1;
  } else {
    return;
  }
  if (sign < 0) {  // -v + c op 0  <=>  v - c (flipped op) 0
    op = op == ExprKind::kLT ? ExprKind::kGT : op == ExprKind::kLE ? ExprKind::kGE
         : op == ExprKind::kGT ? ExprKind::kLT : ExprKind::kLE;
    c = -*c;
  }
  // v + c op 0
  switch (op) {
    case ExprKind::kLT: w.hi = std::min(w.hi, -*c); break;
    case ExprKind::kLE: w.hi = std::min(w.hi, -*c + 1); break;
    case ExprKind::kGT: w.lo = std::max(w.lo, -*c + 1); break;
    default: w.lo = std::max(w.lo, -*c); break;
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

class VectorLoopPartitioner : public StmtMutator {
 public:
  explicit VectorLoopPartitioner(int64_t min_middle) : min_middle_(min_middle) {}

 protected:
  Stmt mutate_for(const ForNode& node, const Stmt& self) override {
    Stmt inner = StmtMutator::mutate_for(node, self);
    const auto* loop = inner.as<ForNode>();
    std::optional<int64_t> min = constant_of(node.min), extent = constant_of(node.extent);
    bool vectorized = node.for_kind == ForKind::kVectorized;
    if (!loop || !(vectorized || node.for_kind == ForKind::kSerial) || !min || !extent) return inner;
    Window w{*min, *min + *extent};
    for (const Expr& atom : guard_atoms(loop->body, !vectorized)) narrow(atom, loop->var, w);
    if ((w.lo == *min && w.hi == *min + *extent) || w.hi - w.lo < min_middle_) return inner;
    std::vector<Stmt> parts;
    for (auto [lo, hi] : {std::pair{*min, w.lo}, std::pair{w.lo, w.hi}, std::pair{w.hi, *min + *extent}}) {
      if (hi <= lo) continue;
      Var v = var(loop->var->name, loop->var->dtype);  // each copy defines its own variable
      Stmt body = substitute(loop->body, VarMap{{loop->var.get(), v}});
      parts.push_back(simplify(make_for(v, int_imm(lo), int_imm(hi - lo), loop->for_kind, body, loop->thread_tag,
                                        loop->annotations)));
    }
    return make_seq(std::move(parts));
  }

 private:
  int64_t min_middle_;
};

}  // namespace

PrimFunc partition_vector_loops(const PrimFunc& func, int64_t min_middle) {
  return with_body(*func, VectorLoopPartitioner(min_middle).mutate(func->body));
}

}  // namespace tessel::tir_passes
