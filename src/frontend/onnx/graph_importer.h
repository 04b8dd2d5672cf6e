// The import of one ONNX graph (graph_importer.cpp): the model's, a subgraph
// that becomes a graph of its own, or a branch imported into the graph
// around it. Sequence and optional values, and the graph inputs and outputs
// of those types, are in graph_importer_structured.cpp.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <unordered_map>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/importer.h"
#include "src/frontend/onnx/onnx_value.h"

namespace tessel::onnx_frontend {

// Folding makes data that the file does not hold (ConstantOfShape, Tile,
// Expand, ...). Each folded node is capped (passes::should_fold), and an
// import in all (see GraphImporter::charge_folding), so that a few hundred
// bytes of model cannot make the importer take gigabytes or minutes; what is
// not folded runs at run time.
constexpr int64_t kFoldBytesBudget = int64_t(1) << 28;  // 256 MiB, plus twice the weights
constexpr int64_t kFoldFlopsBudget = int64_t(1) << 32;

// What a model's graph and its subgraphs share.
struct ImportSession {
  int opset = 0;
  std::string dir;
  const ImportOptions& options;
  std::unordered_map<const graph::Value*, Tensor> known_inputs;  // ImportOptions::input_values
  RuntimeExtents extents;  // values whose extent a run decides, in any of the graphs
  int64_t fold_bytes_left = kFoldBytesBudget;
  int64_t fold_flops_left = kFoldFlopsBudget;
};

// kBody: a graph of its own, outer values captured; kInline: into the parent's graph.
enum class Scope { kMain, kBody, kInline };

class GraphImporter {
 public:
  GraphImporter(ImportSession& session, const onnx::GraphProto& proto, graph::Graph& target,
                GraphImporter* parent, Scope scope)
      : s_(session), proto_(proto), g_(target), parent_(parent), scope_(scope) {}

  void import_main();
  // The declared inputs typed as given, then the captured outer values.
  void import_body(const std::vector<graph::TensorType>& input_types);
  // The declared inputs bound to the given values of the parent's graph
  // (tensors, sequences or optionals); the subgraph's outputs.
  std::vector<OnnxValue> import_inline(const std::vector<OnnxValue>& inputs);
  // The outer values a body reads, in the order of its inputs after the declared ones.
  const std::vector<graph::Value*>& captured() const { return captured_; }

 private:
  // A tensor by ONNX name; a sequence or optional there is a user error.
  graph::Value* lookup(const std::string& name, const std::string& node);
  // Any ONNX value by name.
  OnnxValue lookup_value(const std::string& name, const std::string& node);
  // Binds an ONNX value name; a name defined twice breaks SSA and is refused.
  void define(const std::string& name, graph::Value* v, const std::string& node);
  void define_value(const std::string& name, const OnnxValue& v, const std::string& node);
  void import_initializers();
  void import_inputs();
  // A graph input of tensor type `t` (bound by --input-shape, or by its known
  // value when the model leaves its shape open).
  graph::Value* add_tensor_input(const std::string& name, graph::TensorType t,
                                 std::map<std::string, Dims>& pending_shapes);
  // A graph input of sequence or optional type, as the tensors it holds
  // (graph_importer_structured.cpp).
  void import_structured_input(const onnx::ValueInfoProto& vi, std::map<std::string, Dims>& pending_shapes);
  // The names of a subgraph's inputs (`given` of them, or a user error).
  std::vector<std::string> declared_inputs(size_t given) const;
  void import_nodes();
  void import_node(const onnx::NodeProto& n, int index);
  void import_constant(const onnx::NodeProto& n, const std::string& name);
  // Which adapter table takes the node; a sequence or optional given to an
  // op that takes tensors is a user error.
  const AdapterTable& adapter_table(const onnx::NodeProto& n, const AdaptContext& ctx) const;
  graph::Value* checked_output(const onnx::ValueInfoProto& vi);
  // The main graph's outputs: a sequence or optional output as its tensors,
  // named as OnnxValue::tensor_names says.
  std::vector<graph::Value*> main_outputs();
  // An Identity of v named `name` (an output's name).
  graph::Value* named_copy(graph::Value* v, const std::string& name);
  // A subgraph's outputs, no tensor of data-dependent extent (a user error).
  std::vector<OnnxValue> subgraph_outputs();
  void check_fixed_shape(const OnnxValue& v, const char* what);
  bool may_fold() const {
    return s_.options.fold_constants && s_.fold_bytes_left > 0 && s_.fold_flops_left > 0;
  }
  void charge_folding(const std::vector<graph::Value*>& results);
  void give_subgraphs(AdaptContext& ctx, const onnx::NodeProto& n, const std::string& name);

  ImportSession& s_;
  const onnx::GraphProto& proto_;
  graph::Graph& g_;
  GraphImporter* parent_;
  Scope scope_;
  std::unordered_map<std::string, graph::Value*> values_;
  std::unordered_map<std::string, OnnxValue> structured_;  // sequences and optionals
  std::vector<graph::Value*> captured_;
};

}  // namespace tessel::onnx_frontend
