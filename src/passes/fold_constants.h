// Constant folding, node by node: a node whose inputs are all constant is
// evaluated (by the reference executor) and its outputs become constants.
// The importer calls fold_node on each node as it imports it, so that shape
// inference downstream sees the values (a Reshape's shape computed from
// Shape, Gather and Concat), then remove_folded_nodes once at the end.
//   before: %s = Shape(%w)  %t = Mul(%s, 2)      w: constant f32[3, 4]
//   after:  %t = constant i64[2] {6, 8}           (no nodes left)
#pragma once

#include "ir/graph/graph.h"

namespace tessel::passes {

// Whether fold_node would evaluate n: every input constant, every output of a
// static type of at most 64 MiB, and at most 2^30 FLOPs, so that a few
// hundred bytes of model cannot make folding take gigabytes or minutes.
bool should_fold(const graph::Node& n);

// Evaluates n when should_fold(n) and sets its outputs' constants; returns
// whether it did. Requires: n's types inferred.
bool fold_node(graph::Node& n);

// Removes the nodes whose outputs are all constant (their results live on as
// constants) and the values nothing uses any more. Guarantees: same outputs.
void remove_folded_nodes(graph::Graph& g);

}  // namespace tessel::passes
