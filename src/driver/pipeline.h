// The compiler pipeline, every stage in order (pipeline.cpp reads top to
// bottom): import and the graph passes (load_graph), then for a target the
// target's graph passes, fusion, lowering, scheduling, the tensor-IR passes,
// verification, the execution plan and code generation (compile_graph, in
// compile_model.h). Each stage runs through one helper that verifies its
// result (--verify), prints it (--print-after=STAGE|all) and times it
// (--time-passes).
#pragma once

#include <chrono>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "ir/graph/graph.h"
#include "ir/tensor/verifier.h"
#include "src/frontend/onnx/importer.h"

namespace tessel::driver {

// The stages, in pipeline order, as --print-after names them.
const std::vector<std::string>& pipeline_stages();

struct StageOptions {
#ifdef NDEBUG
  bool verify = false;  // run the IR's verifier after every stage
#else
  bool verify = true;
#endif
  std::set<std::string> print_after;  // stage names; "all" for every stage
  std::ostream* print_to = nullptr;   // where --print-after writes (needed when print_after is set)
  std::ostream* time_to = nullptr;    // --time-passes: one line per stage as it ends
  tir::VerifyOptions tir_verify;      // what the target allows (thread bindings on a GPU)
  bool prints(const std::string& stage) const {
    return print_to && (print_after.count("all") || print_after.count(stage));
  }
};

// A user error naming an unknown stage (and listing the stages).
void check_stage_names(const std::set<std::string>& names);

// Times one stage and reports it to options.time_to.
class StageTimer {
 public:
  StageTimer(const std::string& stage, const StageOptions& options);
  ~StageTimer();

 private:
  std::string stage_;
  const StageOptions& options_;
  std::chrono::steady_clock::time_point start_;
};

struct PipelineOptions {
  onnx_frontend::ImportOptions import;
  StageOptions stages;
};

// "x=1x3x224x224" -> ("x", {1, 3, 224, 224}), for ImportOptions::input_shapes.
using onnx_frontend::parse_input_shape;

// Imports the model and runs the target-independent graph passes in order.
graph::Graph load_graph(const std::string& path, const PipelineOptions& options);

}  // namespace tessel::driver
