// Barrier insertion for shared-memory exchange inside GPU thread blocks.
#include "src/tir_passes/insert_barriers.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "ir/tensor/functor.h"

namespace tessel::tir_passes {

using namespace tir;

namespace {

using BufferSet = std::unordered_set<const BufferNode*>;

struct SharedAccess {
  BufferSet reads, writes;
};

SharedAccess shared_accesses(const Stmt& s) {
  SharedAccess acc;
  walk(s, [&](const Stmt& x) {
    if (const StoreNode* st = x.as<StoreNode>(); st && st->buffer->scope == MemScope::kShared)
      acc.writes.insert(st->buffer.get());
    return true;
  });
  walk_exprs(s, [&](const Expr& e) {
    if (const LoadNode* ld = e.as<LoadNode>(); ld && ld->buffer->scope == MemScope::kShared)
      acc.reads.insert(ld->buffer.get());
  });
  return acc;
}

bool intersects(const BufferSet& a, const BufferSet& b) {
  return std::any_of(a.begin(), a.end(), [&](const BufferNode* x) { return b.count(x) > 0; });
}

bool ends_with_barrier(const Stmt& s) {
  if (s->kind == StmtKind::kBarrier) return true;
  const SeqNode* seq = s.as<SeqNode>();
  return seq && !seq->stmts.empty() && seq->stmts.back()->kind == StmtKind::kBarrier;
}

// Rewrites the inside of one thread block.
class ThreadBlockSync : public StmtMutator {
 public:
  using StmtMutator::mutate;
  Stmt mutate(const Stmt& s) override {
    if (!s.defined()) return s;
    if (const SeqNode* seq = s.as<SeqNode>()) return sync_seq(*seq);
    return StmtMutator::mutate(s);
  }

 protected:
  Stmt mutate_for(const ForNode& node, const Stmt& self) override {
    Stmt rebuilt = StmtMutator::mutate_for(node, self);
    if (node.for_kind == ForKind::kThreadBound) return rebuilt;
    const auto& loop = static_cast<const ForNode&>(*rebuilt);
    SharedAccess acc = shared_accesses(loop.body);
    if (acc.reads.empty() || acc.writes.empty() || ends_with_barrier(loop.body)) return rebuilt;
    return with_body(loop, make_seq({loop.body, make_barrier()}));
  }

 private:
  Stmt sync_seq(const SeqNode& seq) {
    std::vector<Stmt> out;
    SharedAccess pending;  // since the last barrier
    for (const Stmt& child : seq.stmts) {
      Stmt c = mutate(child);
      if (c->kind == StmtKind::kBarrier) {
        pending = {};
        out.push_back(c);
        continue;
      }
      SharedAccess acc = shared_accesses(c);
      if (intersects(acc.reads, pending.writes) || intersects(acc.writes, pending.reads)) {
        out.push_back(make_barrier());
        pending = {};
      }
      pending.reads.insert(acc.reads.begin(), acc.reads.end());
      pending.writes.insert(acc.writes.begin(), acc.writes.end());
      out.push_back(std::move(c));
    }
    return make_seq(std::move(out));
  }
};

bool has_bound_loop(const Stmt& s, bool (*is_tag)(std::string_view)) {
  bool found = false;
  walk(s, [&](const Stmt& x) {
    if (const ForNode* f = x.as<ForNode>();
        f && f->for_kind == ForKind::kThreadBound && is_tag(f->thread_tag))
      found = true;
    return !found;
  });
  return found;
}

// A thread block is the body of an innermost blockIdx-bound loop (all threads
// of the block run it); without blockIdx loops, the whole function body.
class ThreadBlockFinder : public StmtMutator {
 protected:
  Stmt mutate_for(const ForNode& node, const Stmt& self) override {
    bool innermost_block_loop = node.for_kind == ForKind::kThreadBound && is_block_idx(node.thread_tag) &&
                                !has_bound_loop(node.body, is_block_idx);
    if (!innermost_block_loop) return StmtMutator::mutate_for(node, self);
    if (!has_bound_loop(node.body, is_thread_idx)) return self;
    Stmt body = ThreadBlockSync().mutate(node.body);
    return body.same_as(node.body) ? self : with_body(node, body);
  }
};

}  // namespace

PrimFunc insert_barriers(const PrimFunc& func) {
  bool grid = has_bound_loop(func->body, is_block_idx);
  if (!grid && !has_bound_loop(func->body, is_thread_idx)) return func;
  Stmt body = grid ? ThreadBlockFinder().mutate(func->body) : ThreadBlockSync().mutate(func->body);
  return body.same_as(func->body) ? func : with_body(*func, body);
}

}  // namespace tessel::tir_passes
