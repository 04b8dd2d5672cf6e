// The reference executor: runs a graph node by node with the reference
// kernels. It is the oracle of every numeric test and of `tessel check`.
#pragma once

#include <functional>
#include <vector>

#include "ir/graph/graph.h"

namespace tessel::reference {

// Runs one node on concrete inputs (null for omitted optional inputs): the
// shape function gives the exact output shapes, the kernel fills them.
std::vector<Tensor> evaluate_node(const graph::Node& node, const std::vector<const Tensor*>& inputs);

// Called after each node with its outputs; lets a caller compare per kernel.
using NodeObserver = std::function<void(const graph::Node&, const std::vector<Tensor>&)>;

class Executor {
 public:
  explicit Executor(const graph::Graph& g);

  // Inputs in graph-input order. A dtype or shape that contradicts the
  // graph's declared input type is a UserError naming the input.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const NodeObserver& observe = {}) const;

 private:
  const graph::Graph& graph_;
};

// The outputs a user gets from all of a run's outputs (graph::DataDependentDim):
// the sizes dropped, each data-dependent output cut to its size.
std::vector<Tensor> user_outputs(const graph::Graph& g, std::vector<Tensor> all);

// Checks one run-time input against the type the graph declares.
void check_input(const graph::Value& declared, const Tensor& given);

}  // namespace tessel::reference
