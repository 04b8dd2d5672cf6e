// ONNX -> graph IR. Parses a ModelProto, checks it, adapts each node to its
// canonical op for the model's opset, infers shapes and folds constants.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph/graph.h"

namespace onnx {
class ModelProto;
}

namespace tessel::onnx_frontend {

inline constexpr int kMinIrVersion = 3;
inline constexpr int kMaxIrVersion = 13;
inline constexpr int kMinOpset = 7;
inline constexpr int kMaxOpset = 27;

struct ImportOptions {
  // Binds symbolic (or checks fixed) input dimensions: "x" -> {1, 3, 224, 224}.
  std::map<std::string, Dims> input_shapes;
  // Evaluates nodes whose inputs are all constant while importing.
  bool fold_constants = true;
  // The values the graph inputs will have, in graph-input order, where known
  // (the conformance runner gives them: ONNX's cases feed Resize's scales,
  // OneHot's depth or a Range's bounds as inputs). An op that must
  // read a constant where the model feeds a graph input (Resize's scales,
  // OneHot's depth) specialises on that value; nothing else reads them.
  std::vector<Tensor> input_values;
  // Rewrites the Conv and MatMul of a QDQ model between DequantizeLinear and
  // QuantizeLinear as integer products (qdq_fold.h, `--qdq integer`); off,
  // they run as the model writes them, on dequantized floats. Off by
  // default: the integer products run slower than the float ones until they
  // use the CPU's 8-bit dot-product instructions.
  bool fold_qdq = false;
  // The number of elements of each sequence graph input, which ONNX's types
  // leave open: a sequence input "x" of n elements is compiled as the graph
  // inputs "x[0]" ... "x[n-1]" (and a sequence output "y" as the outputs
  // "y[0]" ...), each element's shape bound by --input-shape "x[0]=...".
  std::map<std::string, int64_t> sequence_lengths;
  // Optional graph inputs given nothing; any other optional input holds a
  // value: a tensor input of its name, or a sequence as above.
  std::set<std::string> empty_optionals;
};

// Every failure is a UserError whose message starts with the file path.
graph::Graph import_model(const std::string& path, const ImportOptions& options = {});
// model_dir: where external data files are looked up.
graph::Graph import_model_proto(const onnx::ModelProto& model, const std::string& model_dir,
                                const ImportOptions& options = {});
// Parses a byte buffer (the fuzz target's entry point).
graph::Graph import_model_bytes(const std::string& bytes, const std::string& model_dir,
                                const ImportOptions& options = {});

// Parses "x=1x3x224x224" into ("x", {1, 3, 224, 224}).
std::pair<std::string, Dims> parse_input_shape(const std::string& spec);

// Whether the importer takes a default-domain ONNX op: Constant, an adapter's
// op, or a graph op of the same name.
bool imports_op(const std::string& op_type);

}  // namespace tessel::onnx_frontend
