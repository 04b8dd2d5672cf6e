// The graph IR: a typed dataflow graph of nodes over values. Weights are
// values holding a constant, stored once and referenced by every use.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/core/diagnostics.h"
#include "ir/graph/attr.h"
#include "ir/graph/types.h"

namespace tessel::graph {

struct Node;
class Graph;

struct Value {
  int id = 0;
  std::string name;
  TensorType type;
  Node* producer = nullptr;       // null for graph inputs and constants
  int producer_output = 0;
  std::optional<Tensor> constant;  // weights and folded values
  // The order in which the kernels store its dimensions, outermost first,
  // where it is not the type's own (empty): {0, 2, 3, 1} keeps an NCHW
  // activation channels-last between kernels. Only a value both made and
  // read by kernels has one (not a graph input, output or constant), so the
  // model's interface never changes; set by passes::store_channels_last.
  std::vector<int64_t> storage;

  bool is_constant() const { return constant.has_value(); }
};

// v's dimensions in the order its storage holds them (the type's own order
// without a storage order).
std::vector<int64_t> stored_dims(const Value& v);

struct Node {
  int id = 0;
  std::string op;    // canonical op name in the registry (ONNX name, newest semantics)
  std::string name;  // ONNX node name, or a generated one
  Attrs attrs;
  std::vector<Value*> inputs;  // null entries are omitted optional inputs
  std::vector<Value*> outputs;
  // The graph a Scan runs per iteration (ir/graph/scan.h); null for every other op.
  std::shared_ptr<Graph> body;

  Span span() const { return Span{name, op}; }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
};

// An output whose extent along `axis` only a run decides (NonZero, Compress,
// NonMaxSuppression): the kernels compute it at its upper bound, of which the
// first `size` entries along the axis are the data and the rest padding. The
// sizes are scalar int64 values, the graph's trailing outputs (the k-th entry's
// is outputs()[num_user_outputs() + k]); whoever hands the outputs to a user
// cuts each output to its size (data_dependent.h).
struct DataDependentDim {
  size_t output = 0;
  int axis = 0;
};

class Graph {
 public:
  std::string name;
  std::vector<DataDependentDim> data_dependent_dims;

  Value* add_input(std::string name, TensorType type);
  Value* add_constant(std::string name, Tensor value);
  // Appends a node; its outputs are new values named output_names (types filled
  // in by shape inference). Nodes are kept in topological order by construction.
  Node* add_node(std::string op, std::string name, std::vector<Value*> inputs,
                 const std::vector<std::string>& output_names, Attrs attrs = {});
  // The same, placed just before `position` (a node of this graph), for a
  // node that `position` is to read.
  Node* add_node_before(const Node* position, std::string op, std::string name, std::vector<Value*> inputs,
                        const std::vector<std::string>& output_names, Attrs attrs = {});
  void set_outputs(std::vector<Value*> outputs) { outputs_ = std::move(outputs); }
  // The same inputs in another order.
  void set_inputs(std::vector<Value*> inputs);
  void replace_output(size_t i, Value* v) { outputs_.at(i) = v; }

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  // The outputs a user sees: all but the sizes of data-dependent extents.
  size_t num_user_outputs() const { return outputs_.size() - data_dependent_dims.size(); }
  std::vector<Node*> nodes() const;
  std::vector<Value*> values() const;
  std::vector<Value*> constants() const;
  size_t num_nodes() const { return nodes_.size(); }

  // Rewires every use of `from` (node inputs and graph outputs) to `to`.
  void replace_uses(Value* from, Value* to);
  // Removes the nodes for which pred holds; their outputs must be unused.
  template <typename Pred>
  void remove_nodes_if(Pred pred);
  // Drops values that nothing refers to any more.
  void remove_unused_values();

  std::string unique_name(const std::string& base);

 private:
  Value* new_value(std::string name);
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  int next_id_ = 0;
  int next_name_ = 0;
};

template <typename Pred>
void Graph::remove_nodes_if(Pred pred) {
  std::vector<std::unique_ptr<Node>> kept;
  for (auto& n : nodes_)
    if (!pred(*n)) kept.push_back(std::move(n));
  nodes_ = std::move(kept);
}

// Nodes that read v, in graph order.
std::vector<Node*> users_of(const Graph& g, const Value* v);

}  // namespace tessel::graph
