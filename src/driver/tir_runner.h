// Runs a graph on the tensor IR: groups it, lowers each group to a PrimFunc
// and interprets the PrimFuncs in order. The executable check of lowering
// (conformance target "tir"), before any schedule or backend; given a
// compiled graph's functions, the check of its schedules (target "cuda").
#pragma once

#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "ir/graph/graph.h"
#include "src/lower/lower_group.h"

namespace tessel::driver {

class TirExecutor {
 public:
  // Lowers g once, grouped by the policy, with the layout decisions a
  // compile for the host CPU makes (or `layouts`); the graph must outlive
  // the executor.
  TirExecutor(const graph::Graph& g, passes::FusionPolicy fusion);
  TirExecutor(const graph::Graph& g, passes::FusionPolicy fusion, const lower::LayoutChoices& layouts);
  // Groups already lowered (and perhaps scheduled: a compiled kernel's
  // function, GPU thread bindings included), in an order that computes
  // each value before it is read.
  TirExecutor(const graph::Graph& g, std::vector<lower::LoweredGroup> groups)
      : graph_(g), groups_(std::move(groups)) {}

  // Inputs in graph-input order, checked like the reference executor's.
  // An interpreter failure is a tir::InterpreterError naming the group.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

  const std::vector<lower::LoweredGroup>& groups() const { return groups_; }

 private:
  std::vector<Tensor> run_group(const lower::LoweredGroup& group, const std::vector<Tensor>& args) const;

  const graph::Graph& graph_;
  // A Scan's group has no function: its body runs on an executor of its own.
  std::vector<lower::LoweredGroup> groups_;
  std::map<const graph::Node*, std::shared_ptr<TirExecutor>> bodies_;
};

// The reference executor's outputs of g (the oracle TirExecutor and compiled
// models are checked against), inputs in graph-input order.
std::vector<Tensor> run_reference(const graph::Graph& g, const std::vector<Tensor>& inputs);

// Lowering needs static shapes, but a model may take a shape parameter
// (Reshape's shape, Slice's starts, a reduction's axes, ...) as a graph input.
// Like a compiler specialising on known shapes, this binds each integer graph
// input (of rank 0 or 1) that some type downstream of it needs to be static
// to its value in `inputs` (graph-input order): its uses read a constant
// instead, types are inferred again and what became constant is folded,
// except the graph's results. The graph still declares the input. Returns how
// many inputs were bound.
int bind_shape_inputs(graph::Graph& g, const std::vector<Tensor>& inputs);

}  // namespace tessel::driver
