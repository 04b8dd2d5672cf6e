// Dead code elimination: one backward sweep over the topologically ordered nodes.
#include "src/passes/dead_code.h"

#include <unordered_set>

namespace tessel::passes {

void eliminate_dead_code(graph::Graph& g) {
  std::unordered_set<const graph::Value*> live(g.outputs().begin(), g.outputs().end());
  std::unordered_set<const graph::Node*> kept;
  std::vector<graph::Node*> nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const graph::Node* n = *it;
    bool needed = false;
    for (const graph::Value* out : n->outputs) needed = needed || live.count(out);
    if (!needed) continue;
    kept.insert(n);
    live.insert(n->inputs.begin(), n->inputs.end());
  }
  g.remove_nodes_if([&](const graph::Node& n) { return !kept.count(&n); });
  g.remove_unused_values();
}

}  // namespace tessel::passes
