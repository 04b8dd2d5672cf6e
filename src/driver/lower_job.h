// `tessel lower`: groups a model's nodes, lowers each group to a PrimFunc and
// reports what came out (members, signature, blocks, and the IR text), with
// the layout decisions a compile for the host CPU makes.
#pragma once

#include <ostream>
#include <string>

#include "ir/graph/graph.h"
#include "src/passes/fusion.h"

namespace tessel::driver {

struct LowerJobOptions {
  passes::FusionPolicy fusion = passes::FusionPolicy::kNone;
  std::string node;             // non-empty: only the group holding this node
  bool print = false;           // also print each PrimFunc
};

// A user error when `node` names no node of g, or a group cannot be lowered.
void run_lower_job(const graph::Graph& g, const LowerJobOptions& options, std::ostream& out);

}  // namespace tessel::driver
