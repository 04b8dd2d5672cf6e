// Finding and replacing parts of a PrimFunc's statement tree.
#include "schedules/tree_query.h"

#include <algorithm>

#include "ir/core/diagnostics.h"
#include "ir/tensor/functor.h"

namespace tessel::sched {

using namespace tir;

namespace {

std::vector<Stmt> children_of(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::kFor: return {static_cast<const ForNode&>(*s).body};
    case StmtKind::kAllocate: return {static_cast<const AllocateNode&>(*s).body};
    case StmtKind::kIfThenElse: {
      const auto& n = static_cast<const IfThenElseNode&>(*s);
      return {n.then_case, n.else_case};
    }
    case StmtKind::kSeq: return static_cast<const SeqNode&>(*s).stmts;
    case StmtKind::kBlock: {
      const auto& n = static_cast<const BlockNode&>(*s);
      return {n.init, n.body};
    }
    default: return {};
  }
}

bool touches(const BufferRegion& r, const std::vector<BufferRegion>& list) {
  return std::any_of(list.begin(), list.end(),
                     [&](const BufferRegion& x) { return x.buffer.same_as(r.buffer); });
}

}  // namespace

std::vector<Stmt> path_to(const Stmt& root, const StmtNode* target) {
  // Depth-first with an explicit stack of (node, next child) frames.
  struct Frame {
    Stmt node;
    std::vector<Stmt> children;
    size_t next = 0;
  };
  if (!root.defined()) return {};
  std::vector<Frame> stack{{root, children_of(root)}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.node.get() == target) {
      std::vector<Stmt> path;
      for (const Frame& f : stack) path.push_back(f.node);
      return path;
    }
    if (top.next == top.children.size()) {
      stack.pop_back();
      continue;
    }
    Stmt child = top.children[top.next++];
    if (child.defined()) stack.push_back({child, children_of(child)});
  }
  return {};
}

Stmt find_block(const PrimFunc& func, const std::string& name) {
  Stmt found;
  walk(func->body, [&](const Stmt& s) {
    if (found.defined()) return false;
    if (const BlockNode* b = s.as<BlockNode>(); b && b->name == name) found = s;
    return !found.defined();
  });
  return found;
}

Stmt find_loop(const PrimFunc& func, const VarNode* v) {
  Stmt found;
  walk(func->body, [&](const Stmt& s) {
    if (found.defined()) return false;
    if (const ForNode* f = s.as<ForNode>(); f && f->var.get() == v) found = s;
    return !found.defined();
  });
  return found;
}

std::vector<Stmt> loops_above(const PrimFunc& func, const StmtNode* block) {
  std::vector<Stmt> path = path_to(func->body, block);
  std::vector<Stmt> loops;
  for (size_t i = path.size(); i-- > 0;) {
    if (path[i].get() == block) continue;
    if (path[i]->kind == StmtKind::kBlock) break;
    if (path[i]->kind == StmtKind::kFor) loops.push_back(path[i]);
  }
  std::reverse(loops.begin(), loops.end());
  return loops;
}

std::vector<Stmt> all_blocks(const PrimFunc& func) {
  std::vector<Stmt> blocks;
  walk(func->body, [&](const Stmt& s) {
    if (const BlockNode* b = s.as<BlockNode>(); b && s.get() != func->body.get()) blocks.push_back(s);
    return true;
  });
  return blocks;
}

namespace {

class NodeReplacer : public StmtMutator {
 public:
  NodeReplacer(const StmtNode* target, Stmt replacement)
      : target_(target), replacement_(std::move(replacement)) {}
  using StmtMutator::mutate;
  Stmt mutate(const Stmt& s) override {
    if (s.get() == target_) return replacement_;
    if (!s.defined() || !contains_target(s)) return s;
    return StmtMutator::mutate(s);
  }

 private:
  // Expressions never contain statements: skip subtrees without the target.
  bool contains_target(const Stmt& s) {
    bool found = false;
    walk(s, [&](const Stmt& x) {
      found = found || x.get() == target_;
      return !found;
    });
    return found;
  }
  const StmtNode* target_;
  Stmt replacement_;
};

}  // namespace

Stmt replace_node(const Stmt& root, const StmtNode* target, const Stmt& replacement) {
  return NodeReplacer(target, replacement).mutate(root);
}

PrimFunc replace_node(const PrimFunc& func, const StmtNode* target, const Stmt& replacement) {
  Stmt body = replace_node(func->body, target, replacement);
  TESSEL_ICHECK(body.defined()) << "replacing the whole body of " << func->name << " by nothing";
  return body.same_as(func->body) ? func : with_body(*func, body);
}

std::vector<Stmt> producers_of(const PrimFunc& func, const BlockNode& block) {
  std::vector<Stmt> out;
  for (const Stmt& s : all_blocks(func)) {
    const auto& b = static_cast<const BlockNode&>(*s);
    if (&b == &block) continue;
    bool writes_read = std::any_of(b.writes.begin(), b.writes.end(),
                                   [&](const BufferRegion& w) { return touches(w, block.reads); });
    if (writes_read) out.push_back(s);
  }
  return out;
}

std::vector<Stmt> consumers_of(const PrimFunc& func, const BlockNode& block) {
  std::vector<Stmt> out;
  for (const Stmt& s : all_blocks(func)) {
    const auto& b = static_cast<const BlockNode&>(*s);
    if (&b == &block) continue;
    bool reads_written = std::any_of(b.reads.begin(), b.reads.end(),
                                     [&](const BufferRegion& r) { return touches(r, block.writes); });
    if (reads_written) out.push_back(s);
  }
  return out;
}

const BlockNode* root_block(const PrimFunc& func) {
  const BlockNode* b = func->body.as<BlockNode>();
  return b && b->name == "root" ? b : nullptr;
}

}  // namespace tessel::sched
