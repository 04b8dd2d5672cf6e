// Visitors and mutators over the tensor IR. A visitor walks every child; a
// mutator rebuilds a node only when a child changed, so untouched subtrees
// stay shared (and same_as their originals).
#pragma once

#include <functional>
#include <unordered_map>

#include "ir/tensor/function.h"

namespace tessel::tir {

class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  virtual void visit(const Expr& e);

 protected:
  virtual void visit_load(const LoadNode& node);
  virtual void visit_var(const VarNode&) {}
  // Visits the children of any node; overrides call it to keep walking.
  void visit_children(const Expr& e);
};

// Visits statements and every expression inside them (through ExprVisitor).
class StmtVisitor : public ExprVisitor {
 public:
  using ExprVisitor::visit;
  virtual void visit(const Stmt& s);

 protected:
  virtual void visit_for(const ForNode& node);
  virtual void visit_store(const StoreNode& node);
  virtual void visit_block(const BlockNode& node);
  virtual void visit_allocate(const AllocateNode& node);
  virtual void visit_prefetch(const PrefetchNode& node);
  void visit_stmt_children(const Stmt& s);
  void visit_region(const BufferRegion& region);
};

class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  virtual Expr mutate(const Expr& e);

 protected:
  virtual Expr mutate_var(const Var& var) { return var; }
  virtual Expr mutate_load(const LoadNode& node, const Expr& self);
  // Rebuilds e from mutated children (e itself if none changed).
  Expr mutate_children(const Expr& e);
  std::vector<Expr> mutate_all(const std::vector<Expr>& exprs, bool* changed);
};

class StmtMutator : public ExprMutator {
 public:
  using ExprMutator::mutate;
  virtual Stmt mutate(const Stmt& s);

 protected:
  virtual Stmt mutate_for(const ForNode& node, const Stmt& self);
  virtual Stmt mutate_store(const StoreNode& node, const Stmt& self);
  virtual Stmt mutate_block(const BlockNode& node, const Stmt& self);
  virtual Stmt mutate_allocate(const AllocateNode& node, const Stmt& self);
  virtual Stmt mutate_prefetch(const PrefetchNode& node, const Stmt& self);
  Stmt mutate_stmt_children(const Stmt& s);
  Range mutate_range(const Range& r, bool* changed);
  BufferRegion mutate_region(const BufferRegion& r, bool* changed);
};

// Pre-order walk of every statement; return false from f to skip a subtree.
void walk(const Stmt& s, const std::function<bool(const Stmt&)>& f);
// Pre-order walk of every expression inside s (statements' expressions too).
void walk_exprs(const Stmt& s, const std::function<void(const Expr&)>& f);
void walk_exprs(const Expr& e, const std::function<void(const Expr&)>& f);

using VarMap = std::unordered_map<const VarNode*, Expr>;
// Replaces variables by expressions (also inside block bindings, regions, loop bounds).
Expr substitute(const Expr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);
// Replaces every use of a buffer (loads, stores, regions, allocations).
using BufferMap = std::unordered_map<const BufferNode*, Buffer>;
Stmt substitute_buffers(const Stmt& s, const BufferMap& map);
Expr substitute_buffers(const Expr& e, const BufferMap& map);

bool uses_var(const Expr& e, const VarNode* var);
bool uses_var(const Stmt& s, const VarNode* var);

}  // namespace tessel::tir
