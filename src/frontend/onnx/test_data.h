// The test data of ONNX's operator tests: a test_data_set_* folder holds
// input_N.pb and output_N.pb, each a TensorProto, a SequenceProto or an
// OptionalProto as the model declares its N-th input or output. Read here
// the way the importer compiles sequences and optionals: flattened into the
// tensors they hold, with the import options that say their structure.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/core/tensor.h"

namespace tessel::onnx_frontend {

struct TestDataSet {
  std::vector<Tensor> inputs;                       // in graph-input order, flattened
  std::map<std::string, int64_t> sequence_lengths;  // ImportOptions::sequence_lengths
  std::set<std::string> empty_optionals;            // ImportOptions::empty_optionals
  std::vector<Tensor> expected;                     // the outputs, flattened
  std::vector<std::string> expected_names;          // the compiled graph's output names for them
};

// The files of `set_dir` read as the types model.onnx declares. UserErrors
// name the file.
TestDataSet load_test_data_set(const std::string& model_path, const std::string& set_dir);

}  // namespace tessel::onnx_frontend
