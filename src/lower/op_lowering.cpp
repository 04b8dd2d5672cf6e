// The registry of compute definitions, filled by each op family.
#include "src/lower/op_lowering.h"

#include "ir/core/diagnostics.h"

namespace tessel::lower {

const LoweringRegistry& LoweringRegistry::global() {
  static const LoweringRegistry registry = [] {
    LoweringRegistry r;
    register_elementwise_lowerings(r);
    register_movement_lowerings(r);
    register_nn_lowerings(r);
    register_reduce_lowerings(r);
    return r;
  }();
  return registry;
}

void LoweringRegistry::add(const std::string& op, LowerFn fn) {
  TESSEL_ICHECK(!fns_.count(op)) << "two lowerings of " << op;
  fns_[op] = std::move(fn);
}

const LowerFn* LoweringRegistry::find(const std::string& op) const {
  auto it = fns_.find(op);
  return it == fns_.end() ? nullptr : &it->second;
}

std::vector<TensorExpr> lower_node(LowerContext& ctx, const graph::Node& node,
                                   const std::vector<TensorExpr>& inputs) {
  const LowerFn* fn = LoweringRegistry::global().find(node.op);
  TESSEL_USER_CHECK(fn, node.span()) << "op " << node.op
                                     << " has no compute definition yet (tensor IR lowering)";
  std::vector<TensorExpr> outputs = (*fn)(ctx, node, inputs);
  TESSEL_ICHECK(outputs.size() <= node.outputs.size()) << node.op << " lowered to too many outputs";
  return outputs;
}

}  // namespace tessel::lower
