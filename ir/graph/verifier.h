// Structural checks of a graph: every use defined before it, no cycles,
// producers and outputs consistent, types agree with the op registry.
#pragma once

#include "ir/graph/graph.h"

namespace tessel::graph {

// Throws InternalError describing the first violation. Types are checked
// for dtype and rank against what each op's shape function infers. Runs after every pass
// when the pipeline's verify option is on (the default in debug builds).
void verify_graph(const Graph& g);

}  // namespace tessel::graph
