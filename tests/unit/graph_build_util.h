// Building small graphs by hand in tests: a node appended with its output
// named after its position and its types inferred.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph/graph.h"
#include "ir/graph/op_registry.h"

namespace tessel {

inline graph::Node* add(graph::Graph& g, const std::string& op, std::vector<graph::Value*> in,
                        graph::Attrs attrs = {}) {
  graph::Node* n = g.add_node(op, op + std::to_string(g.num_nodes()), std::move(in),
                              {"v" + std::to_string(g.num_nodes())}, std::move(attrs));
  graph::infer_node(*n);
  return n;
}

}  // namespace tessel
