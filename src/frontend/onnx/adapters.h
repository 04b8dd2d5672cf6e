// Opset-version adapters: each turns one ONNX node of a given opset into the
// canonical graph op (ONNX name, newest semantics), e.g. Clip-6's min/max
// attributes become Clip-13's inputs. Ops without an adapter map one to one.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph/graph.h"

namespace tessel::onnx_frontend {

struct AdaptContext {
  graph::Graph& graph;
  int opset;                     // the model's opset of the default domain
  bool fold_constants;
  std::string op;                // canonical op of the main node (may be renamed)
  std::string name;              // ONNX node name (never empty: generated if missing)
  graph::Attrs attrs;            // converted generically from the AttributeProtos
  std::vector<graph::Value*> inputs;  // null: omitted optional input
  std::vector<std::string> output_names;

  // An adapter that builds the whole replacement itself sets `results`, one
  // value per ONNX output; otherwise the importer creates the main node.
  std::optional<std::vector<graph::Value*>> results;

  Span span() const { return Span{name, op}; }
  graph::Value* constant(Tensor t);
  // Moves attribute `attr` (ints or floats) to input position `pos` as a
  // constant. An absent attribute leaves the input omitted.
  void attr_to_input(const std::string& attr, size_t pos, DType dtype = DType::kI64);
  void set_input(size_t pos, graph::Value* v);
  // Adds a helper node (shape-inferred at once) and returns its outputs.
  std::vector<graph::Value*> emit(const std::string& op, std::vector<graph::Value*> inputs,
                                  graph::Attrs attrs = {}, int num_outputs = 1);
};

// Shape inference of a new node, then constant folding when every input is
// constant (passes::fold_node). Defined by the importer.
void infer_and_fold(graph::Node& node, bool fold);

using Adapter = std::function<void(AdaptContext&)>;
using AdapterTable = std::map<std::string, Adapter>;

// The table of every adapter, keyed by ONNX op_type.
const AdapterTable& adapters();

void register_elementwise_adapters(AdapterTable& t);
void register_nn_adapters(AdapterTable& t);
void register_reduce_adapters(AdapterTable& t);
void register_shape_adapters(AdapterTable& t);
void register_movement_adapters(AdapterTable& t);
void register_loss_adapters(AdapterTable& t);
void register_composite_adapters(AdapterTable& t);

}  // namespace tessel::onnx_frontend
