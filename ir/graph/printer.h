// Text form of the graph IR, one line per node, meant for people.
#pragma once

#include <string>

#include "ir/graph/graph.h"

namespace tessel::graph {

// Example:
//   graph g(%x: f32[1, 4]) {
//     const %w: f32[4, 4]
//     %y: f32[1, 4] = MatMul(%x, %w)                      # node 'mm'
//     %z: f32[1, 4] = LeakyRelu(%y) {alpha = 0.1}          # node 'act'
//     return %z
//   }
std::string print_graph(const Graph& g);

}  // namespace tessel::graph
