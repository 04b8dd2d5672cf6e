// PrimFunc: one kernel of the tensor IR. Parameters are buffers (inputs, then
// outputs); the body is a root block whose alloc_buffers are the function's
// intermediates and whose body holds the loop nests.
#pragma once

#include <string>
#include <vector>

#include "ir/tensor/stmt.h"

namespace tessel::tir {

struct PrimFuncNode : RefCounted {
  PrimFuncNode(std::string name, std::vector<Buffer> inputs, std::vector<Buffer> outputs, Stmt body)
      : name(std::move(name)),
        inputs(std::move(inputs)),
        outputs(std::move(outputs)),
        body(std::move(body)) {}
  const std::string name;
  const std::vector<Buffer> inputs;
  const std::vector<Buffer> outputs;
  // Usually a BlockNode named "root" with no iteration variables.
  const Stmt body;

  std::vector<Buffer> params() const;  // inputs then outputs
};
using PrimFunc = Ref<const PrimFuncNode>;

PrimFunc make_prim_func(std::string name, std::vector<Buffer> inputs, std::vector<Buffer> outputs, Stmt body);
PrimFunc with_body(const PrimFuncNode& func, Stmt body);

// The root block convention: a block without iteration variables that owns
// the intermediates.
Stmt make_root_block(Stmt body, std::vector<Buffer> alloc_buffers);

}  // namespace tessel::tir
