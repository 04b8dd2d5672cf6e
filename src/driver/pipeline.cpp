// The ordered list of passes. Read it top to bottom.
#include "src/driver/pipeline.h"

#include "ir/graph/printer.h"
#include "ir/graph/verifier.h"
#include "src/passes/dead_code.h"
#include "src/passes/pretranspose_gemm_weights.h"

namespace tessel::driver {

namespace {

void after_pass(const char* pass, const graph::Graph& g, const PipelineOptions& o) {
  if (o.verify) graph::verify_graph(g);
  if (o.print_after_all) *o.print_after_all << "// after " << pass << "\n" << graph::print_graph(g) << "\n";
}

}  // namespace

graph::Graph load_graph(const std::string& path, const PipelineOptions& options) {
  // Import infers every shape and folds constant subgraphs as it goes, so the
  // passes below see static shapes wherever the model allows them.
  graph::Graph g = onnx_frontend::import_model(path, options.import);
  after_pass("import", g, options);

  passes::eliminate_dead_code(g);
  after_pass("eliminate_dead_code", g, options);

  // After import's constant folding, so a B computed from constants counts too.
  passes::pretranspose_gemm_weights(g);
  after_pass("pretranspose_gemm_weights", g, options);
  return g;
}

}  // namespace tessel::driver
