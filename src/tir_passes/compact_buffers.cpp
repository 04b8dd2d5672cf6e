// Allocations moved to the lowest common ancestor of their accesses, buffers
// shrunk to the region accessed below it, indices shifted by the region's min.
#include "src/tir_passes/compact_buffers.h"

#include <optional>
#include <unordered_set>

#include "ir/core/diagnostics.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/int_set.h"
#include "ir/tensor/simplify.h"
#include "src/tir_passes/disjoint_iterations.h"

namespace tessel::tir_passes {

using namespace tir;

namespace {

bool uses_buffer(const Expr& e, const BufferNode* buffer) {
  bool found = false;
  if (!e.defined()) return false;
  walk_exprs(e, [&](const Expr& x) {
    if (const LoadNode* l = x.as<LoadNode>()) found = found || l->buffer.get() == buffer;
  });
  return found;
}

// Whether s, or any statement below it, loads or stores `buffer`.
bool uses_buffer(const Stmt& s, const BufferNode* buffer) {
  if (!s.defined()) return false;
  bool found = false;
  walk(s, [&](const Stmt& x) {
    if (const StoreNode* st = x.as<StoreNode>()) found = found || st->buffer.get() == buffer;
    return !found;
  });
  if (found) return true;
  walk_exprs(s, [&](const Expr& x) {
    if (const LoadNode* l = x.as<LoadNode>()) found = found || l->buffer.get() == buffer;
  });
  return found;
}

struct Loop {
  Var var;
  Range range;
};

// The region of every load and store of one buffer below a statement, each
// with the loops between the statement and the access relaxed; inside the
// then-branch of `affine <= constant` conditions the relaxed loops' ranges
// shrink to the values that can satisfy it (a predicate of an inexact split).
class RegionCollector : public StmtVisitor {
 public:
  RegionCollector(const BufferNode* buffer, const Analyzer& outer) : buffer_(buffer), outer_(outer) {}
  std::vector<std::vector<IntSet>> regions;

  // A loop around the statement visited whose iterations all share the
  // buffer (a thread loop around a shared buffer's placement): relaxed too.
  void relax_enclosing(const Var& v, const Range& range) {
    relax_[v.get()] = range;
    loops_.push_back(v);
  }

  using StmtVisitor::visit;
  void visit(const Stmt& s) override {
    const IfThenElseNode* n = s.as<IfThenElseNode>();
    if (!n) return StmtVisitor::visit(s);
    visit(n->cond);
    std::vector<std::pair<const VarNode*, Range>> saved;
    std::vector<Expr> at_most_zero;
    collect_at_most_zero(n->cond, at_most_zero);
    for (const Expr& e : at_most_zero) tighten(e, saved);
    visit(n->then_case);
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) relax_[it->first] = it->second;
    visit(n->else_case);
  }

 protected:
  void visit_for(const ForNode& node) override {
    visit(node.min);
    visit(node.extent);
    relax_[node.var.get()] = {node.min, node.extent};
    loops_.push_back(node.var);
    visit(node.body);
    loops_.pop_back();
    relax_.erase(node.var.get());
  }
  void visit_load(const LoadNode& node) override {
    if (node.buffer.get() == buffer_) record(node.indices);
    StmtVisitor::visit_load(node);
  }
  void visit_store(const StoreNode& node) override {
    if (node.buffer.get() == buffer_) record(node.indices);
    StmtVisitor::visit_store(node);
  }

 private:
  void record(const std::vector<Expr>& indices) {
    std::vector<Range> points;
    for (const Expr& i : indices) points.push_back({i, int_imm(1)});
    regions.push_back(eval_region(points, relax_, outer_));
  }

  // Index comparisons of a conjunction as expressions that are <= 0 where it holds.
  static void collect_at_most_zero(const Expr& cond, std::vector<Expr>& out) {
    const ExprNode& n = *cond;
    if (n.kind == ExprKind::kAnd) {
      collect_at_most_zero(binary_a(n), out);
      collect_at_most_zero(binary_b(n), out);
      return;
    }
    if (!is_comparison(n.kind) || binary_a(n)->dtype != kIndexType) return;
    const Expr &a = binary_a(n), &b = binary_b(n);
    switch (n.kind) {
      case ExprKind::kLT: out.push_back(a - b + 1); return;
      case ExprKind::kLE: out.push_back(a - b); return;
      case ExprKind::kGT: out.push_back(b - a + 1); return;
      case ExprKind::kGE: out.push_back(b - a); return;
      case ExprKind::kEQ: out.push_back(a - b), out.push_back(b - a); return;
      default: return;
    }
  }

  // Every variable bound: the outer ones and the relaxed loops over their current ranges.
  Analyzer all_vars() const {
    Analyzer all = outer_;
    for (const Var& v : loops_) all.bind(v, relax_.at(v.get()));
    return all;
  }

  // Where e = c * v + rest <= 0 for a relaxed loop v of constant range:
  // c * v <= -min(rest) bounds v from one side.
  void tighten(const Expr& e, std::vector<std::pair<const VarNode*, Range>>& saved) {
    for (const Var& v : loops_) {
      Range& range = relax_.at(v.get());
      const int64_t *lo = as_const_int(range.min), *extent = as_const_int(range.extent);
      if (!lo || !extent || *extent < 1 || !uses_var(e, v.get())) continue;
      Analyzer all = all_vars();
      Expr coeff =
          all.simplify(substitute(e, {{v.get(), int_imm(1)}}) - substitute(e, {{v.get(), int_imm(0)}}));
      const int64_t* c = as_const_int(coeff);
      if (!c || *c == 0 || *c == INT64_MIN) continue;
      Expr rest = all.simplify(e - v * *c);
      std::optional<int64_t> rest_min = all.bound(rest).min;
      constexpr int64_t kLimit = int64_t(1) << 60;
      if (uses_var(rest, v.get()) || !rest_min || *rest_min <= -kLimit || *rest_min >= kLimit) continue;
      int64_t new_lo = *lo, new_hi = *lo + *extent - 1, x = -*rest_min;  // c * v <= x
      if (*c > 0)
        new_hi = std::min(new_hi, floor_div(x, *c));
      else
        new_lo = std::max(new_lo, -floor_div(x, -*c));
      if (new_lo > new_hi || (new_lo == *lo && new_hi == *lo + *extent - 1)) continue;
      saved.push_back({v.get(), range});
      range = {int_imm(new_lo), int_imm(new_hi - new_lo + 1)};
    }
  }

  static int64_t floor_div(int64_t a, int64_t b) {  // b > 0
    return a / b - (a % b != 0 && a < 0);
  }

  const BufferNode* buffer_;
  const Analyzer& outer_;
  RelaxMap relax_;
  std::vector<Var> loops_;  // the relaxed loops, outermost first
};

// Rewrites the accesses of `from` into accesses of `to`, index d - offset[d].
class AccessShifter : public StmtMutator {
 public:
  AccessShifter(const BufferNode* from, Buffer to, std::vector<Expr> offset)
      : from_(from), to_(std::move(to)), offset_(std::move(offset)) {}

 protected:
  Expr mutate_load(const LoadNode& node, const Expr& self) override {
    bool changed = false;
    std::vector<Expr> indices = mutate_all(node.indices, &changed);
    if (node.buffer.get() == from_) return load(to_, shifted(std::move(indices)));
    return changed ? load(node.buffer, std::move(indices)) : self;
  }
  Stmt mutate_store(const StoreNode& node, const Stmt& self) override {
    bool changed = false;
    Expr value = mutate(node.value);
    std::vector<Expr> indices = mutate_all(node.indices, &changed);
    if (node.buffer.get() == from_) return make_store(to_, std::move(value), shifted(std::move(indices)));
    if (!changed && value.same_as(node.value)) return self;
    return make_store(node.buffer, std::move(value), std::move(indices));
  }

 private:
  std::vector<Expr> shifted(std::vector<Expr> indices) const {
    for (size_t d = 0; d < indices.size(); ++d)
      if (!is_const_int(offset_[d], 0)) indices[d] = indices[d] - offset_[d];
    return indices;
  }

  const BufferNode* from_;
  Buffer to_;
  std::vector<Expr> offset_;
};

// One dimension of the compacted buffer: indices d become d - min.
using CompactDim = IterationRegionDim;

// Places the allocation of one buffer at the lowest common ancestor of its
// accesses below the original Allocate, given the loops enclosing that Allocate.
class AllocationPlacer {
 public:
  AllocationPlacer(Buffer buffer, std::vector<Loop> outer) : buffer_(std::move(buffer)), outer_(std::move(outer)) {}

  // s uses the buffer; returns s with the (compacted) allocation inside it.
  Stmt place(const Stmt& s) {
    const BufferNode* b = buffer_.get();
    if (const ForNode* f = s.as<ForNode>()) {
      if (uses_buffer(f->min, b) || uses_buffer(f->extent, b)) return compact_at(s);
      if (is_shared_across(*f)) return place_across_threads(*f);
      outer_.push_back({f->var, {f->min, f->extent}});
      if (!may_enter(*f)) {
        outer_.pop_back();
        return compact_at(s);
      }
      Stmt body = place(f->body);
      outer_.pop_back();
      return with_body(*f, std::move(body));
    }
    if (const AllocateNode* a = s.as<AllocateNode>()) return make_allocate(a->buffer, place(a->body));
    if (const IfThenElseNode* n = s.as<IfThenElseNode>()) {
      bool in_then = uses_buffer(n->then_case, b), in_else = uses_buffer(n->else_case, b);
      if (uses_buffer(n->cond, b) || in_then == in_else) return compact_at(s);
      if (in_then) return make_if(n->cond, place(n->then_case), n->else_case);
      return make_if(n->cond, n->then_case, place(n->else_case));
    }
    if (const SeqNode* n = s.as<SeqNode>()) {
      std::optional<size_t> only;
      for (size_t i = 0; i < n->stmts.size(); ++i) {
        if (!uses_buffer(n->stmts[i], b)) continue;
        if (only) return compact_at(s);
        only = i;
      }
      TESSEL_ICHECK(only) << "compact_buffers: descended into a sequence that does not use " << b->name;
      std::vector<Stmt> stmts = n->stmts;
      stmts[*only] = place(stmts[*only]);
      return make_seq(std::move(stmts));
    }
    return compact_at(s);
  }

 private:
  // A shared buffer is one copy for the thread block: it is allocated
  // outside the block's threadIdx loops, but its region is the one below its
  // accesses' common ancestor, with every thread's accesses in it (a tile
  // staged per step of a loop inside the threads is one step's tile).
  bool is_shared_across(const ForNode& f) const {
    return f.for_kind == ForKind::kThreadBound && is_thread_idx(f.thread_tag) &&
           buffer_->scope == MemScope::kShared;
  }
  Stmt place_across_threads(const ForNode& f) {
    bool outermost = threads_.empty();
    threads_.push_back({f.var, {f.min, f.extent}});
    Stmt body = place(f.body);
    threads_.pop_back();
    Stmt loop = with_body(f, std::move(body));
    return outermost ? make_allocate(placed_, loop) : loop;
  }

  // Whether the allocation may move into loop f (pushed on outer_): a new
  // copy per iteration must lose no value that a later iteration reads.
  bool may_enter(const ForNode& f) const {
    if (f.for_kind == ForKind::kThreadBound) {
      if (is_thread_idx(f.thread_tag))
        return buffer_->scope == MemScope::kLocal;           // shared: place_across_threads
      if (buffer_->scope != MemScope::kGlobal) return true;  // already one copy per thread block
    }
    return iterations_disjoint(f, compacted_dims(f.body), outer_analyzer());
  }

  Analyzer outer_analyzer() const {
    Analyzer analyzer;
    for (const Loop& l : outer_) analyzer.bind(l.var, l.range);
    return analyzer;
  }

  // Per dimension, the region of the accesses below s as a compacted buffer would hold it.
  std::vector<CompactDim> compacted_dims(const Stmt& s) const {
    Analyzer analyzer = outer_analyzer();
    RegionCollector collector(buffer_.get(), analyzer);
    for (const Loop& t : threads_) collector.relax_enclosing(t.var, t.range);
    collector.visit(s);
    TESSEL_ICHECK(!collector.regions.empty()) << "compact_buffers: no access to " << buffer_->name;
    std::vector<Range> region = union_regions(collector.regions, buffer_->shape, analyzer);
    std::vector<CompactDim> dims;
    for (size_t d = 0; d < region.size(); ++d) dims.push_back(compact_dim(region[d], buffer_->shape[d], analyzer));
    return dims;
  }

  Stmt compact_at(const Stmt& lca) {
    std::vector<CompactDim> dims = compacted_dims(lca);
    bool unchanged = true;
    std::vector<int64_t> shape;
    std::vector<Expr> offset;
    for (size_t d = 0; d < dims.size(); ++d) {
      unchanged = unchanged && dims[d].extent == buffer_->shape[d] && is_const_int(dims[d].min, 0);
      shape.push_back(dims[d].extent);
      offset.push_back(dims[d].min);
    }
    // Across threads, the allocation goes around the outermost thread loop (place_across_threads).
    auto allocate = [&](Buffer b, Stmt body) {
      if (!threads_.empty()) {
        placed_ = std::move(b);
        return body;
      }
      return make_allocate(std::move(b), std::move(body));
    };
    if (unchanged) return allocate(buffer_, lca);  // keeps the strides storage_align chose
    Buffer compact = make_buffer(buffer_->name, buffer_->dtype, std::move(shape), buffer_->scope);
    return allocate(compact, AccessShifter(buffer_.get(), compact, std::move(offset)).mutate(lca));
  }

  // The region's min where it is an expression of the loops above the
  // placement and its extent has a constant bound below the full extent;
  // else the whole dimension.
  CompactDim compact_dim(const Range& r, int64_t full, const Analyzer& analyzer) const {
    CompactDim whole{int_imm(0), full};
    Expr min = analyzer.simplify(r.min);
    std::optional<int64_t> bound = analyzer.bound(r.extent).max;
    if (!bound || *bound >= full || !only_outer_vars(min)) return whole;
    return {min, std::max<int64_t>(*bound, 1)};
  }

  bool only_outer_vars(const Expr& e) const {
    std::unordered_set<const VarNode*> outer;
    for (const Loop& l : outer_) outer.insert(l.var.get());
    bool ok = true;
    walk_exprs(e, [&](const Expr& x) {
      if (const VarNode* v = x.as<VarNode>()) ok = ok && outer.count(v);
      if (x.as<LoadNode>()) ok = false;  // memory may change below the placement
    });
    return ok;
  }

  Buffer buffer_;
  std::vector<Loop> outer_;    // the loops enclosing the statement being looked at, outermost first
  std::vector<Loop> threads_;  // a shared buffer's thread loops descended through (not in outer_)
  Buffer placed_;              // what place_across_threads allocates around them
};

// Visits every Allocate (inner ones first) with the loops around it, and places it.
class AllocationMover : public StmtMutator {
 protected:
  Stmt mutate_for(const ForNode& node, const Stmt& self) override {
    loops_.push_back({node.var, {node.min, node.extent}});
    Stmt out = StmtMutator::mutate_for(node, self);
    loops_.pop_back();
    return out;
  }
  Stmt mutate_allocate(const AllocateNode& node, const Stmt&) override {
    Stmt body = mutate(node.body);
    if (!uses_buffer(body, node.buffer.get())) return body;  // never accessed: nothing to allocate
    return AllocationPlacer(node.buffer, loops_).place(body);
  }
  Stmt mutate_block(const BlockNode& node, const Stmt&) override {
    TESSEL_ICHECK(false) << "compact_buffers needs flattened code (run flatten_blocks first); found block "
                         << node.name;
    return {};
  }

 private:
  std::vector<Loop> loops_;
};

}  // namespace

PrimFunc compact_buffers(const PrimFunc& func) {
  Stmt body = AllocationMover().mutate(func->body);
  return simplify(with_body(*func, body));
}

}  // namespace tessel::tir_passes
