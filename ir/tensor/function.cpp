// PrimFunc construction.
#include "ir/tensor/function.h"

#include "ir/core/diagnostics.h"

namespace tessel::tir {

std::vector<Buffer> PrimFuncNode::params() const {
  std::vector<Buffer> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  return all;
}

PrimFunc make_prim_func(std::string name, std::vector<Buffer> inputs, std::vector<Buffer> outputs,
                        Stmt body) {
  TESSEL_ICHECK(body.defined()) << "PrimFunc " << name << " without a body";
  return make_ref<PrimFuncNode>(std::move(name), std::move(inputs), std::move(outputs), std::move(body));
}

PrimFunc with_body(const PrimFuncNode& func, Stmt body) {
  return make_prim_func(func.name, func.inputs, func.outputs, std::move(body));
}

Stmt make_root_block(Stmt body, std::vector<Buffer> alloc_buffers) {
  return make_ref<BlockNode>("root", std::vector<IterVar>{}, std::vector<Expr>{}, bool_imm(true),
                             std::vector<BufferRegion>{}, std::vector<BufferRegion>{}, Stmt{},
                             std::move(body), std::move(alloc_buffers), Annotations{});
}

}  // namespace tessel::tir
