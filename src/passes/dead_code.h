// Dead code elimination on the graph IR.
#pragma once

#include "ir/graph/graph.h"

namespace tessel::passes {

// Removes nodes none of whose outputs reaches a graph output, then values
// nothing refers to (weights only dead nodes read).
// Requires: a verified graph. Guarantees: outputs unchanged, order kept.
//   before: %a = Relu(%x); %b = Exp(%x); return %a
//   after:  %a = Relu(%x); return %a
void eliminate_dead_code(graph::Graph& g);

}  // namespace tessel::passes
