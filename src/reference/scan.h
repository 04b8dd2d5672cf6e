// Running a Scan node (ir/graph/scan.h) on concrete tensors, its body run by
// whichever executor the caller has: the reference's, or the tensor IR's.
#pragma once

#include <functional>
#include <vector>

#include "ir/graph/graph.h"

namespace tessel::reference {

// Runs the body once on its inputs (the states, the slices, the captures).
using BodyRunner = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// The node's outputs: the final states, then the stacked scan outputs.
std::vector<Tensor> run_scan(const graph::Node& scan, const std::vector<const Tensor*>& inputs,
                             const BodyRunner& run_body);

}  // namespace tessel::reference
