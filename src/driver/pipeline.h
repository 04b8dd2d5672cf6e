// The compiler pipeline, stage by stage. Today: import, then graph cleanup.
// Later stages (fusion, lowering, scheduling, codegen) append here.
#pragma once

#include <ostream>
#include <string>

#include "ir/graph/graph.h"
#include "src/frontend/onnx/importer.h"

namespace tessel::driver {

struct PipelineOptions {
  onnx_frontend::ImportOptions import;
#ifdef NDEBUG
  bool verify = false;  // run the graph verifier after every pass
#else
  bool verify = true;
#endif
  std::ostream* print_after_all = nullptr;  // where to print the IR after each pass
};

// Imports the model and runs the graph passes in order.
graph::Graph load_graph(const std::string& path, const PipelineOptions& options);

}  // namespace tessel::driver
