// Visitors, mutators and the substitutions built on them.
#include "ir/tensor/functor.h"

#include "ir/core/diagnostics.h"

namespace tessel::tir {

namespace {

template <typename T>
Ref<const T> ref_of(const Expr& e) {
  return Ref<const T>(static_cast<const T*>(e.get()));
}

}  // namespace

// ---- ExprVisitor

void ExprVisitor::visit(const Expr& e) {
  if (!e.defined()) return;
  if (const VarNode* v = e.as<VarNode>()) return visit_var(*v);
  if (const LoadNode* l = e.as<LoadNode>()) return visit_load(*l);
  visit_children(e);
}

void ExprVisitor::visit_load(const LoadNode& node) {
  for (const Expr& i : node.indices) visit(i);
}

void ExprVisitor::visit_children(const Expr& e) {
  const ExprNode& n = *e;
  if (is_binary(n.kind)) {
    visit(binary_a(n));
    visit(binary_b(n));
    return;
  }
  switch (n.kind) {
    case ExprKind::kNot: visit(static_cast<const NotNode&>(n).a); return;
    case ExprKind::kSelect: {
      const auto& s = static_cast<const SelectNode&>(n);
      visit(s.cond);
      visit(s.true_value);
      visit(s.false_value);
      return;
    }
    case ExprKind::kCast: visit(static_cast<const CastNode&>(n).value); return;
    case ExprKind::kLoad: visit_load(static_cast<const LoadNode&>(n)); return;
    case ExprKind::kCall:
      for (const Expr& a : static_cast<const CallNode&>(n).args) visit(a);
      return;
    default: return;  // leaves
  }
}

// ---- StmtVisitor

void StmtVisitor::visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s->kind) {
    case StmtKind::kFor: return visit_for(static_cast<const ForNode&>(*s));
    case StmtKind::kStore: return visit_store(static_cast<const StoreNode&>(*s));
    case StmtKind::kBlock: return visit_block(static_cast<const BlockNode&>(*s));
    case StmtKind::kAllocate: return visit_allocate(static_cast<const AllocateNode&>(*s));
    case StmtKind::kPrefetch: return visit_prefetch(static_cast<const PrefetchNode&>(*s));
    default: return visit_stmt_children(s);
  }
}

void StmtVisitor::visit_for(const ForNode& node) {
  visit(node.min);
  visit(node.extent);
  visit(node.body);
}

void StmtVisitor::visit_store(const StoreNode& node) {
  visit(node.value);
  for (const Expr& i : node.indices) visit(i);
}

void StmtVisitor::visit_prefetch(const PrefetchNode& node) {
  visit(node.offset);
}

void StmtVisitor::visit_allocate(const AllocateNode& node) {
  visit(node.body);
}

void StmtVisitor::visit_region(const BufferRegion& region) {
  for (const Range& r : region.region) {
    visit(r.min);
    visit(r.extent);
  }
}

void StmtVisitor::visit_block(const BlockNode& node) {
  for (const IterVar& iv : node.iter_vars) {
    visit(iv.dom.min);
    visit(iv.dom.extent);
  }
  for (const Expr& v : node.iter_values) visit(v);
  visit(node.predicate);
  for (const BufferRegion& r : node.reads) visit_region(r);
  for (const BufferRegion& r : node.writes) visit_region(r);
  visit(node.init);
  visit(node.body);
}

void StmtVisitor::visit_stmt_children(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::kFor: return visit_for(static_cast<const ForNode&>(*s));
    case StmtKind::kStore: return visit_store(static_cast<const StoreNode&>(*s));
    case StmtKind::kBlock: return visit_block(static_cast<const BlockNode&>(*s));
    case StmtKind::kAllocate: return visit_allocate(static_cast<const AllocateNode&>(*s));
    case StmtKind::kIfThenElse: {
      const auto& n = static_cast<const IfThenElseNode&>(*s);
      visit(n.cond);
      visit(n.then_case);
      visit(n.else_case);
      return;
    }
    case StmtKind::kSeq:
      for (const Stmt& c : static_cast<const SeqNode&>(*s).stmts) visit(c);
      return;
    case StmtKind::kBarrier: return;
    case StmtKind::kAssert: {
      const auto& n = static_cast<const AssertNode&>(*s);
      visit(n.cond);
      for (const Expr& v : n.values) visit(v);
      return;
    }
    case StmtKind::kPrefetch: return visit_prefetch(static_cast<const PrefetchNode&>(*s));
  }
}

// ---- ExprMutator

Expr ExprMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  if (e->kind == ExprKind::kVar) return mutate_var(ref_of<VarNode>(e));
  if (const LoadNode* l = e.as<LoadNode>()) return mutate_load(*l, e);
  return mutate_children(e);
}

std::vector<Expr> ExprMutator::mutate_all(const std::vector<Expr>& exprs, bool* changed) {
  std::vector<Expr> out;
  out.reserve(exprs.size());
  for (const Expr& e : exprs) {
    out.push_back(mutate(e));
    if (!out.back().same_as(e)) *changed = true;
  }
  return out;
}

Expr ExprMutator::mutate_load(const LoadNode& node, const Expr& self) {
  bool changed = false;
  std::vector<Expr> indices = mutate_all(node.indices, &changed);
  return changed ? load(node.buffer, std::move(indices)) : self;
}

Expr ExprMutator::mutate_children(const Expr& e) {
  const ExprNode& n = *e;
  if (is_binary(n.kind)) {
    Expr a = mutate(binary_a(n)), b = mutate(binary_b(n));
    if (a.same_as(binary_a(n)) && b.same_as(binary_b(n))) return e;
    return binary(n.kind, std::move(a), std::move(b));
  }
  switch (n.kind) {
    case ExprKind::kNot: {
      const auto& node = static_cast<const NotNode&>(n);
      Expr a = mutate(node.a);
      return a.same_as(node.a) ? e : logical_not(std::move(a));
    }
    case ExprKind::kSelect: {
      const auto& node = static_cast<const SelectNode&>(n);
      Expr c = mutate(node.cond), t = mutate(node.true_value), f = mutate(node.false_value);
      if (c.same_as(node.cond) && t.same_as(node.true_value) && f.same_as(node.false_value)) return e;
      return select(std::move(c), std::move(t), std::move(f));
    }
    case ExprKind::kCast: {
      const auto& node = static_cast<const CastNode&>(n);
      Expr v = mutate(node.value);
      return v.same_as(node.value) ? e : cast(node.dtype, std::move(v));
    }
    case ExprKind::kLoad: return mutate_load(static_cast<const LoadNode&>(n), e);
    case ExprKind::kCall: {
      const auto& node = static_cast<const CallNode&>(n);
      bool changed = false;
      std::vector<Expr> args = mutate_all(node.args, &changed);
      return changed ? call_like(node, std::move(args)) : e;
    }
    default: return e;  // leaves
  }
}

// ---- StmtMutator

Stmt StmtMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s->kind) {
    case StmtKind::kFor: return mutate_for(static_cast<const ForNode&>(*s), s);
    case StmtKind::kStore: return mutate_store(static_cast<const StoreNode&>(*s), s);
    case StmtKind::kBlock: return mutate_block(static_cast<const BlockNode&>(*s), s);
    case StmtKind::kAllocate: return mutate_allocate(static_cast<const AllocateNode&>(*s), s);
    default: return mutate_stmt_children(s);
  }
}

Stmt StmtMutator::mutate_for(const ForNode& node, const Stmt& self) {
  Expr min = mutate(node.min), extent = mutate(node.extent);
  Stmt body = mutate(node.body);
  if (min.same_as(node.min) && extent.same_as(node.extent) && body.same_as(node.body)) return self;
  return make_for(node.var, std::move(min), std::move(extent), node.for_kind, std::move(body),
                  node.thread_tag, node.annotations);
}

Stmt StmtMutator::mutate_store(const StoreNode& node, const Stmt& self) {
  bool changed = false;
  Expr value = mutate(node.value);
  std::vector<Expr> indices = mutate_all(node.indices, &changed);
  if (!changed && value.same_as(node.value)) return self;
  return make_store(node.buffer, std::move(value), std::move(indices));
}

Stmt StmtMutator::mutate_prefetch(const PrefetchNode& node, const Stmt& self) {
  Expr offset = mutate(node.offset);
  return offset.same_as(node.offset) ? self : make_prefetch(node.buffer, std::move(offset), node.lines);
}

Stmt StmtMutator::mutate_allocate(const AllocateNode& node, const Stmt& self) {
  Stmt body = mutate(node.body);
  return body.same_as(node.body) ? self : make_allocate(node.buffer, std::move(body));
}

Range StmtMutator::mutate_range(const Range& r, bool* changed) {
  Range out{mutate(r.min), mutate(r.extent)};
  if (!out.min.same_as(r.min) || !out.extent.same_as(r.extent)) *changed = true;
  return out;
}

BufferRegion StmtMutator::mutate_region(const BufferRegion& r, bool* changed) {
  BufferRegion out{r.buffer, {}};
  for (const Range& range : r.region) out.region.push_back(mutate_range(range, changed));
  return out;
}

Stmt StmtMutator::mutate_block(const BlockNode& node, const Stmt& self) {
  bool changed = false;
  std::vector<IterVar> iter_vars;
  for (const IterVar& iv : node.iter_vars)
    iter_vars.push_back({iv.var, mutate_range(iv.dom, &changed), iv.kind});
  std::vector<Expr> values = mutate_all(node.iter_values, &changed);
  Expr predicate = mutate(node.predicate);
  std::vector<BufferRegion> reads, writes;
  for (const BufferRegion& r : node.reads) reads.push_back(mutate_region(r, &changed));
  for (const BufferRegion& r : node.writes) writes.push_back(mutate_region(r, &changed));
  Stmt init = mutate(node.init), body = mutate(node.body);
  if (!changed && predicate.same_as(node.predicate) && init.same_as(node.init) && body.same_as(node.body))
    return self;
  return make_ref<BlockNode>(node.name, std::move(iter_vars), std::move(values), std::move(predicate),
                             std::move(reads), std::move(writes), std::move(init), std::move(body),
                             node.alloc_buffers, node.annotations);
}

Stmt StmtMutator::mutate_stmt_children(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::kIfThenElse: {
      const auto& n = static_cast<const IfThenElseNode&>(*s);
      Expr cond = mutate(n.cond);
      Stmt t = mutate(n.then_case), f = mutate(n.else_case);
      if (cond.same_as(n.cond) && t.same_as(n.then_case) && f.same_as(n.else_case)) return s;
      return make_if(std::move(cond), std::move(t), std::move(f));
    }
    case StmtKind::kSeq: {
      const auto& n = static_cast<const SeqNode&>(*s);
      bool changed = false;
      std::vector<Stmt> stmts;
      for (const Stmt& c : n.stmts) {
        stmts.push_back(mutate(c));
        if (!stmts.back().same_as(c)) changed = true;
      }
      return changed ? make_seq(std::move(stmts)) : s;
    }
    case StmtKind::kBarrier: return s;
    case StmtKind::kAssert: {
      const auto& n = static_cast<const AssertNode&>(*s);
      bool changed = false;
      Expr cond = mutate(n.cond);
      std::vector<Expr> values = mutate_all(n.values, &changed);
      if (!changed && cond.same_as(n.cond)) return s;
      return make_assert(std::move(cond), n.message, std::move(values));
    }
    case StmtKind::kPrefetch: return mutate_prefetch(static_cast<const PrefetchNode&>(*s), s);
    default: return mutate(s);
  }
}

// ---- Walks and substitutions

void walk(const Stmt& s, const std::function<bool(const Stmt&)>& f) {
  std::vector<Stmt> stack{s};
  while (!stack.empty()) {
    Stmt cur = std::move(stack.back());
    stack.pop_back();
    if (!cur.defined() || !f(cur)) continue;
    std::vector<Stmt> children;
    switch (cur->kind) {
      case StmtKind::kFor: children = {static_cast<const ForNode&>(*cur).body}; break;
      case StmtKind::kAllocate: children = {static_cast<const AllocateNode&>(*cur).body}; break;
      case StmtKind::kIfThenElse: {
        const auto& n = static_cast<const IfThenElseNode&>(*cur);
        children = {n.then_case, n.else_case};
        break;
      }
      case StmtKind::kSeq: children = static_cast<const SeqNode&>(*cur).stmts; break;
      case StmtKind::kBlock: {
        const auto& n = static_cast<const BlockNode&>(*cur);
        children = {n.init, n.body};
        break;
      }
      default: break;
    }
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
  }
}

namespace {

class ExprWalker : public StmtVisitor {
 public:
  explicit ExprWalker(const std::function<void(const Expr&)>& f) : f_(f) {}
  using StmtVisitor::visit;
  void visit(const Expr& e) override {
    if (!e.defined()) return;
    f_(e);
    if (const VarNode* v = e.as<VarNode>()) return visit_var(*v);
    visit_children(e);
  }

 private:
  const std::function<void(const Expr&)>& f_;
};

class VarSubstituter : public StmtMutator {
 public:
  explicit VarSubstituter(const VarMap& map) : map_(map) {}

 protected:
  Expr mutate_var(const Var& v) override {
    auto it = map_.find(v.get());
    return it == map_.end() ? Expr(v) : it->second;
  }

 private:
  const VarMap& map_;
};

class BufferSubstituter : public StmtMutator {
 public:
  explicit BufferSubstituter(const BufferMap& map) : map_(map) {}

 protected:
  Buffer lookup(const Buffer& b) const {
    auto it = map_.find(b.get());
    return it == map_.end() ? b : it->second;
  }
  Expr mutate_load(const LoadNode& node, const Expr& self) override {
    bool changed = false;
    std::vector<Expr> indices = mutate_all(node.indices, &changed);
    Buffer b = lookup(node.buffer);
    if (!changed && b.same_as(node.buffer)) return self;
    return load(std::move(b), std::move(indices));
  }
  Stmt mutate_store(const StoreNode& node, const Stmt& self) override {
    bool changed = false;
    Expr value = mutate(node.value);
    std::vector<Expr> indices = mutate_all(node.indices, &changed);
    Buffer b = lookup(node.buffer);
    if (!changed && value.same_as(node.value) && b.same_as(node.buffer)) return self;
    return make_store(std::move(b), std::move(value), std::move(indices));
  }
  Stmt mutate_prefetch(const PrefetchNode& node, const Stmt& self) override {
    Expr offset = mutate(node.offset);
    Buffer b = lookup(node.buffer);
    if (offset.same_as(node.offset) && b.same_as(node.buffer)) return self;
    return make_prefetch(std::move(b), std::move(offset), node.lines);
  }
  Stmt mutate_allocate(const AllocateNode& node, const Stmt& self) override {
    Stmt body = mutate(node.body);
    Buffer b = lookup(node.buffer);
    if (body.same_as(node.body) && b.same_as(node.buffer)) return self;
    return make_allocate(std::move(b), std::move(body));
  }
  Stmt mutate_block(const BlockNode& node, const Stmt& self) override {
    Stmt rebuilt = StmtMutator::mutate_block(node, self);
    const auto& n = static_cast<const BlockNode&>(*rebuilt);
    bool changed = !rebuilt.same_as(self);
    auto swap_regions = [&](const std::vector<BufferRegion>& regions) {
      std::vector<BufferRegion> out;
      for (const BufferRegion& r : regions) {
        out.push_back({lookup(r.buffer), r.region});
        if (!out.back().buffer.same_as(r.buffer)) changed = true;
      }
      return out;
    };
    std::vector<BufferRegion> reads = swap_regions(n.reads), writes = swap_regions(n.writes);
    std::vector<Buffer> allocs;
    for (const Buffer& b : n.alloc_buffers) {
      allocs.push_back(lookup(b));
      if (!allocs.back().same_as(b)) changed = true;
    }
    if (!changed) return self;
    return make_ref<BlockNode>(n.name, n.iter_vars, n.iter_values, n.predicate, std::move(reads),
                               std::move(writes), n.init, n.body, std::move(allocs), n.annotations);
  }

 private:
  const BufferMap& map_;
};

}  // namespace

void walk_exprs(const Stmt& s, const std::function<void(const Expr&)>& f) {
  ExprWalker(f).visit(s);
}
void walk_exprs(const Expr& e, const std::function<void(const Expr&)>& f) {
  ExprWalker(f).visit(e);
}

Expr substitute(const Expr& e, const VarMap& map) {
  return map.empty() ? e : VarSubstituter(map).mutate(e);
}
Stmt substitute(const Stmt& s, const VarMap& map) {
  return map.empty() ? s : VarSubstituter(map).mutate(s);
}
Stmt substitute_buffers(const Stmt& s, const BufferMap& map) {
  return map.empty() ? s : BufferSubstituter(map).mutate(s);
}
Expr substitute_buffers(const Expr& e, const BufferMap& map) {
  return map.empty() ? e : BufferSubstituter(map).mutate(e);
}

bool uses_var(const Expr& e, const VarNode* var) {
  bool found = false;
  walk_exprs(e, [&](const Expr& x) { found = found || x.get() == var; });
  return found;
}
bool uses_var(const Stmt& s, const VarNode* var) {
  bool found = false;
  walk_exprs(s, [&](const Expr& x) { found = found || x.get() == var; });
  return found;
}

}  // namespace tessel::tir
