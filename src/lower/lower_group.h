// Graph -> tensor IR: one PrimFunc per node group. The group's inputs (graph
// inputs, weights, other groups' results) become input buffers, the values it
// hands on become output buffers; injective producers inline into their
// consumers and every other stage is a block.
//
//   group fused_conv (Conv, Add, Relu) over x, w, b  ->
//   func fused_conv(x: f32[..], w: f32[..], b: f32[..]) -> (relu_out: f32[..]) {
//     block conv (reduction) ...; block relu_out (bias add and relu inlined) ...
//   }
#pragma once

#include <vector>

#include "ir/tensor/function.h"
#include "src/lower/layout_choices.h"
#include "src/passes/fusion.h"

namespace tessel::lower {

using passes::GroupingPolicy;
using passes::NodeGroup;

// A lowered group and the graph values its parameters stand for:
// func->inputs[i] holds inputs[i], func->outputs[i] computes outputs[i].
struct LoweredGroup {
  NodeGroup group;
  tir::PrimFunc func;
  std::vector<const graph::Value*> inputs;
  std::vector<const graph::Value*> outputs;
};

// Lowers one group of g. Requires static shapes on every value it touches
// (a user error naming the node otherwise) and a compute definition for every
// op. Inputs that no stage reads (a Reshape's shape tensor) are no parameter.
// The target's layout decisions come from `layouts` (none: direct forms).
LoweredGroup lower_group_with_bindings(const graph::Graph& g, const NodeGroup& group,
                                       const LayoutChoices& layouts = {});
tir::PrimFunc lower_group(const graph::Graph& g, const NodeGroup& group, const LayoutChoices& layouts = {});

// Groups g with the policy and lowers every group, in the policy's order.
std::vector<LoweredGroup> lower_graph(const graph::Graph& g, const GroupingPolicy& policy,
                                      const LayoutChoices& layouts = {});

// A value name made an identifier: [A-Za-z0-9_] kept, others '_', a leading
// digit (or an empty name) prefixed with "v_".
std::string identifier_of(const std::string& name);

}  // namespace tessel::lower
