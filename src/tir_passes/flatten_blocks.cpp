// Blocks to plain statements: bindings, init conditions, predicates, allocations.
#include "src/tir_passes/flatten_blocks.h"

#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"

namespace tessel::tir_passes {

using namespace tir;

namespace {

// True when every reduction variable of the block is at its domain's start.
Expr first_reduction_iteration(const BlockNode& block, const VarMap& bind) {
  Expr cond;
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    const IterVar& iv = block.iter_vars[i];
    if (iv.kind != IterKind::kReduce) continue;
    Expr at_start = eq(block.iter_values[i], substitute(iv.dom.min, bind));
    cond = cond.defined() ? logical_and(cond, at_start) : at_start;
  }
  return cond.defined() ? cond : bool_imm(true);
}

Stmt wrap_allocations(Stmt body, const std::vector<Buffer>& buffers) {
  for (size_t i = buffers.size(); i-- > 0;) body = make_allocate(buffers[i], std::move(body));
  return body;
}

class BlockFlattener : public StmtMutator {
 protected:
  Stmt mutate_block(const BlockNode& node, const Stmt& self) override {
    // Inner blocks first; their code is in this block's iteration variables.
    Stmt body = mutate(node.body);
    Stmt init = mutate(node.init);
    (void)self;
    VarMap bind;
    for (size_t i = 0; i < node.iter_vars.size(); ++i)
      bind[node.iter_vars[i].var.get()] = node.iter_values[i];
    Stmt code = substitute(body, bind);
    if (init.defined())
      code = make_seq({make_if(first_reduction_iteration(node, bind), substitute(init, bind)), code});
    if (!is_const_int(node.predicate, 1)) code = make_if(node.predicate, code);
    return wrap_allocations(std::move(code), node.alloc_buffers);
  }
};

}  // namespace

PrimFunc flatten_blocks(const PrimFunc& func) {
  Stmt body = BlockFlattener().mutate(func->body);
  return simplify(with_body(*func, body));
}

}  // namespace tessel::tir_passes
