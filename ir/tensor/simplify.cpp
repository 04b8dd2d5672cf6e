// The Analyzer (variable bounds) and the statement simplifier: expressions
// are simplified under the ranges of the loops and block iteration variables
// around them; provable ifs, empty loops and extent-1 loops go away.
#include "ir/tensor/simplify.h"

#include "ir/tensor/functor.h"
#include "ir/tensor/simplify_internal.h"

namespace tessel::tir {

using simplify_detail::bound_of;
using simplify_detail::Interval;
using simplify_detail::range_bound;
using simplify_detail::simplify_expr;
using simplify_detail::to_const_bound;
using simplify_detail::VarBounds;

ConstBound simplify_detail::range_bound(const Expr& min, const Expr& extent, const VarBounds& vars) {
  Interval lo = bound_of(min, vars);
  if (bound_of(extent, vars).hi <= 0) return to_const_bound({lo.lo, lo.lo}, kIndexType);
  Interval hi = bound_of(min + extent - 1, vars);
  return to_const_bound({lo.lo, hi.hi}, kIndexType);
}

void Analyzer::bind(const Var& v, int64_t min, int64_t extent) {
  int64_t max = min;
  bool overflow = extent > 0 && __builtin_add_overflow(min, extent - 1, &max);
  ConstBound b{min, overflow ? std::nullopt : std::optional<int64_t>(max)};
  if (!bounds_.count(v.get())) bound_vars_.push_back(v);
  bounds_[v.get()] = b;
}

void Analyzer::bind(const Var& v, const Range& range) {
  ConstBound b = range_bound(range.min, range.extent, bounds_);
  if (!bounds_.count(v.get())) bound_vars_.push_back(v);
  bounds_[v.get()] = b;
}

ConstBound Analyzer::bound(const Expr& e) const {
  return to_const_bound(bound_of(simplify_expr(e, bounds_), bounds_), e->dtype);
}

Expr Analyzer::simplify(const Expr& e) const {
  return simplify_expr(e, bounds_);
}

bool Analyzer::can_prove(const Expr& cond) const {
  return is_const_int(simplify_expr(cond, bounds_), 1);
}

Expr simplify(const Expr& e) {
  return simplify_expr(e, {});
}

namespace {

Stmt empty_stmt() {
  return make_seq({});
}
bool is_empty(const Stmt& s) {
  const SeqNode* seq = s.as<SeqNode>();
  return seq && seq->stmts.empty();
}

class StmtSimplifier : public StmtMutator {
 public:
  using StmtMutator::mutate;
  Expr mutate(const Expr& e) override { return simplify_expr(e, vars_); }
  Stmt mutate(const Stmt& s) override {
    if (s.defined() && s->kind == StmtKind::kIfThenElse)
      return mutate_if(static_cast<const IfThenElseNode&>(*s), s);
    return StmtMutator::mutate(s);
  }

 protected:
  Stmt mutate_for(const ForNode& node, const Stmt& self) override {
    Expr min = mutate(node.min), extent = mutate(node.extent);
    if (bound_of(extent, vars_).hi <= 0) return empty_stmt();  // never runs
    bool keep = node.for_kind == ForKind::kThreadBound || !node.annotations.empty();
    if (!keep && is_const_int(extent, 1)) return mutate(substitute(node.body, {{node.var.get(), min}}));
    size_t mark = saved_.size();
    set_bound(node.var.get(), range_bound(min, extent, vars_));
    Stmt body = mutate(node.body);
    restore(mark);
    if (is_empty(body)) return body;
    if (min.same_as(node.min) && extent.same_as(node.extent) && body.same_as(node.body)) return self;
    return make_for(node.var, min, extent, node.for_kind, body, node.thread_tag, node.annotations);
  }

  // Domains, bindings and the predicate are in the enclosing loops' terms;
  // regions, init and body in the iteration variables'.
  Stmt mutate_block(const BlockNode& node, const Stmt& self) override {
    bool changed = false;
    std::vector<IterVar> iter_vars;
    for (const IterVar& iv : node.iter_vars)
      iter_vars.push_back({iv.var, mutate_range(iv.dom, &changed), iv.kind});
    std::vector<Expr> values = mutate_all(node.iter_values, &changed);
    Expr predicate = mutate(node.predicate);
    size_t mark = saved_.size();
    for (const IterVar& iv : iter_vars)
      set_bound(iv.var.get(), range_bound(iv.dom.min, iv.dom.extent, vars_));
    std::vector<BufferRegion> reads, writes;
    for (const BufferRegion& r : node.reads) reads.push_back(mutate_region(r, &changed));
    for (const BufferRegion& r : node.writes) writes.push_back(mutate_region(r, &changed));
    Stmt init = mutate(node.init), body = mutate(node.body);
    restore(mark);
    if (!changed && predicate.same_as(node.predicate) && init.same_as(node.init) && body.same_as(node.body))
      return self;
    return make_ref<BlockNode>(node.name, std::move(iter_vars), std::move(values), std::move(predicate),
                               std::move(reads), std::move(writes), std::move(init), std::move(body),
                               node.alloc_buffers, node.annotations);
  }

  Stmt mutate_allocate(const AllocateNode& node, const Stmt& self) override {
    Stmt body = mutate(node.body);
    if (is_empty(body)) return body;
    return body.same_as(node.body) ? self : make_allocate(node.buffer, std::move(body));
  }

 private:
  Stmt mutate_if(const IfThenElseNode& node, const Stmt& self) {
    Expr cond = mutate(node.cond);
    if (const int64_t* c = as_const_int(cond)) {
      if (*c) return mutate(node.then_case);
      return node.else_case.defined() ? mutate(node.else_case) : empty_stmt();
    }
    size_t mark = saved_.size();
    refine(cond, true);
    Stmt then_case = mutate(node.then_case);
    restore(mark);
    Stmt else_case;
    if (node.else_case.defined()) {
      refine(cond, false);
      else_case = mutate(node.else_case);
      restore(mark);
      if (is_empty(else_case)) else_case = Stmt();
    }
    if (is_empty(then_case)) {
      if (!else_case.defined()) return then_case;
      return make_if(simplify_expr(logical_not(cond), vars_), else_case);
    }
    if (cond.same_as(node.cond) && then_case.same_as(node.then_case) && else_case.same_as(node.else_case))
      return self;
    return make_if(cond, then_case, else_case);
  }

  // Tightens the bounds of variables compared with constants in cond, knowing
  // that cond evaluates to `holds`.
  void refine(const Expr& cond, bool holds) {
    simplify_detail::refine_bounds(cond, holds, vars_,
                                   [&](const VarNode* v, ConstBound b) { set_bound(v, b); });
  }

  void set_bound(const VarNode* v, ConstBound b) {
    auto it = vars_.find(v);
    saved_.push_back({v, it == vars_.end() ? std::nullopt : std::optional<ConstBound>(it->second)});
    vars_[v] = b;
  }
  void restore(size_t mark) {
    while (saved_.size() > mark) {
      auto& [v, old] = saved_.back();
      if (old) {
        vars_[v] = *old;
      } else {
        vars_.erase(v);
      }
      saved_.pop_back();
    }
  }

  VarBounds vars_;
  std::vector<std::pair<const VarNode*, std::optional<ConstBound>>> saved_;
};

}  // namespace

Stmt simplify(const Stmt& s) {
  if (!s.defined()) return s;
  return StmtSimplifier().mutate(s);
}

PrimFunc simplify(const PrimFunc& f) {
  Stmt body = simplify(f->body);
  return body.same_as(f->body) ? f : with_body(*f, body);
}

std::optional<int64_t> constant_offset(const Buffer& buffer, const std::vector<Expr>& indices, const VarMap& at) {
  int64_t offset = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    Expr value = simplify(substitute(indices[d], at));
    const auto* imm = value.as<IntImmNode>();
    if (!imm) return std::nullopt;
    offset += imm->value * buffer->strides[d];
  }
  return offset;
}

}  // namespace tessel::tir
