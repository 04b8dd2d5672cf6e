// The compute definition of every op, by op name. A lowering takes the node
// and its inputs as TensorExprs and returns one TensorExpr per output; it adds
// blocks to the context for every stage that is not an index map.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph/graph.h"
#include "src/lower/compute.h"

namespace tessel::lower {

// Inputs are in the node's order; an omitted optional input is a TensorExpr
// with an empty `at`. Constant inputs are also available from the node
// (node.inputs[i]->constant), for ops whose shape parameters are tensors.
using LowerFn = std::function<std::vector<TensorExpr>(LowerContext& ctx, const graph::Node& node,
                                                      const std::vector<TensorExpr>& inputs)>;

class LoweringRegistry {
 public:
  static const LoweringRegistry& global();
  void add(const std::string& op, LowerFn fn);
  const LowerFn* find(const std::string& op) const;

 private:
  std::unordered_map<std::string, LowerFn> fns_;
};

// Each op family registers its lowerings (one file each under src/lower/ops/).
void register_elementwise_lowerings(LoweringRegistry& r);
void register_movement_lowerings(LoweringRegistry& r);
void register_nn_lowerings(LoweringRegistry& r);
void register_reduce_lowerings(LoweringRegistry& r);

// Lowers one node: a user error naming the node when its op has no lowering.
std::vector<TensorExpr> lower_node(LowerContext& ctx, const graph::Node& node,
                                   const std::vector<TensorExpr>& inputs);

}  // namespace tessel::lower
