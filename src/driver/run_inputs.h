// Where the inputs of `tessel run` come from (a folder in the onnx-node layout
// or of <name>.npy files, or a seeded random source) and where outputs go.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ir/graph/graph.h"
#include "src/runtime/plan.h"

namespace tessel::driver {

// "input_0.pb", "input_1.pb", ... in graph-input order, else "<safe name>.npy".
std::vector<Tensor> load_inputs(const graph::Graph& g, const std::string& dir);
// Floats uniform in [-1, 1), integers in [0, 4), bools fair; needs static shapes.
std::vector<Tensor> random_inputs(const graph::Graph& g, uint64_t seed);
// The same for a compiled model's inputs (names, dtypes, shapes of its plan).
std::vector<Tensor> load_inputs(const std::vector<rt::TensorSpec>& inputs, const std::string& dir);
std::vector<Tensor> random_inputs(const std::vector<rt::TensorSpec>& inputs, uint64_t seed);
// Writes each output as <safe name>.npy into dir and prints the name mapping.
void write_outputs(const graph::Graph& g, const std::vector<Tensor>& outputs, const std::string& dir,
                   std::ostream& log);
void write_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& outputs, const std::string& dir,
                   std::ostream& log);

// A value name made safe for a file system: [A-Za-z0-9._-] kept, others '_'.
std::string safe_file_name(const std::string& value_name);

}  // namespace tessel::driver
