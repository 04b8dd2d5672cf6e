// Opset-version adapters: each turns one ONNX node of a given opset into the
// canonical graph op (ONNX name, newest semantics), e.g. Clip-6's min/max
// attributes become Clip-13's inputs. Ops without an adapter map one to one.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph/graph.h"
#include "src/frontend/onnx/onnx_value.h"

namespace tessel::onnx_frontend {

// A value whose extent along `axis` only a run decides (graph::DataDependentDim):
// it holds its upper bound, the first `size` entries along the axis the data.
struct RuntimeExtent {
  int64_t axis = 0;
  graph::Value* size = nullptr;  // a scalar int64 value
  std::string origin;            // the node that decided it: "NonZero 'nz'"
};
using RuntimeExtents = std::unordered_map<const graph::Value*, RuntimeExtent>;

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
  std::optional<std::vector<graph::Value*>> results = std::nullopt;
  // The known values of graph inputs (ImportOptions::input_values).
  const std::unordered_map<const graph::Value*, Tensor>* known_inputs = nullptr;
  // Subgraph attribute `attr` as a graph of its own: its declared inputs typed
  // as given, then an input per outer value it reads (`captured` receives
  // those, in order; outer constants are copied in instead).
  std::function<std::shared_ptr<graph::Graph>(const std::string& attr,
                                              const std::vector<graph::TensorType>& types,
                                              std::vector<graph::Value*>& captured)>
      import_subgraph = nullptr;
  // Subgraph attribute `attr`'s nodes imported into this graph, its declared
  // inputs bound to `inputs` (an If's branch chosen while compiling, a loop
  // unrolled); its outputs.
  std::function<std::vector<graph::Value*>(const std::string& attr, const std::vector<graph::Value*>& inputs)>
      inline_subgraph = nullptr;
  // The names of the node's subgraph attributes.
  std::vector<std::string> subgraphs;

  // The import's values of data-dependent extent (NonZero, Compress, ...).
  RuntimeExtents* extents = nullptr;

  // Each input as ONNX sees it. A sequence or an optional is only here (its
  // `inputs` entry is null); the importer gives such inputs only to the
  // adapters of structured_adapters() and to If and Loop.
  std::vector<OnnxValue> onnx_inputs;
  // Set instead of `results` by an adapter whose outputs may be sequences or
  // optionals, one per ONNX output.
  std::optional<std::vector<OnnxValue>> structured_results = std::nullopt;
  // inline_subgraph for bodies whose inputs or outputs may be sequences or
  // optionals (a branch returning a sequence, a loop carrying one).
  std::function<std::vector<OnnxValue>(const std::string& attr, const std::vector<OnnxValue>& inputs)>
      inline_subgraph_values = nullptr;
  bool any_structured_input() const;

  // Input i's value when it is a constant, a graph input of known value, or
  // computed from those alone by a few small nodes (a Loop's trip count
  // worked out from the inputs); then the node reads it as a constant from
  // here on. Null otherwise.
  const Tensor* constant_input(size_t i);

  Span span() const { return Span{name, op}; }
  graph::Value* constant(Tensor t);
  // Moves attribute `attr` (ints or floats) to input position `pos` as a
  // constant. An absent attribute leaves the input omitted.
  void attr_to_input(const std::string& attr, size_t pos, DType dtype = DType::kI64);
  void set_input(size_t pos, graph::Value* v);
  // Adds a helper node (shape-inferred at once) and returns its outputs.
  std::vector<graph::Value*> emit(const std::string& op, std::vector<graph::Value*> inputs,
                                  graph::Attrs attrs = {}, int num_outputs = 1);

  // What the adapters that build a composition share.
  graph::Value* input_or_null(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  graph::Value* required_input(size_t i, const char* what) const;  // a user error naming it when omitted
  int64_t int_attr(const char* attr, int64_t fallback) const;
  std::vector<int64_t> ints_attr(const char* attr, std::vector<int64_t> fallback) const;
  double float_attr(const char* attr, double fallback) const;
  std::string string_attr(const char* attr, const std::string& fallback) const;
  // An attribute holding an ONNX float type number (stash_type, softmax_precision).
  DType float_type_attr(const char* attr, DType fallback) const;
  graph::Value* i64_vector(const std::vector<int64_t>& values);  // a constant [n] int64 tensor
  // 0, 1, ..., n - 1 along `axis` of a rank-`rank` int64 constant, extent 1 elsewhere.
  graph::Value* positions_along(int64_t rank, int64_t axis, int64_t n);
  // `axis` (negative counts from the back) of a rank-`rank` value, checked;
  // `what` names it in the error.
  int64_t normalized_axis(int64_t axis, int64_t rank, const char* what = "axis") const;
  graph::Value* cast(graph::Value* v, DType to);                 // v itself when it has dtype `to`
  graph::Value* scalar(DType t, double v);                       // a constant [] tensor
  graph::Value* transpose(graph::Value* v, std::vector<int64_t> perm);
  // `padded` with its extent along `axis` decided by a run: the first `size`
  // entries are the data. A constant size cuts it now (a static shape).
  graph::Value* data_dependent(graph::Value* padded, int64_t axis, graph::Value* size);
  // The static extent of v's dimension d (negative counts from the back); a
  // user error naming `what` when it is not known.
  int64_t static_dim(const graph::Value* v, int64_t d, const char* what) const;
};

// Attributes of one entry, for AdaptContext::emit.
graph::Attrs one_attr(const char* name, graph::AttrValue v);

// Shape inference of a new node, then constant folding when every input is
// constant (passes::fold_node). Defined by the importer.
void infer_and_fold(graph::Node& node, bool fold);

using Adapter = std::function<void(AdaptContext&)>;
using AdapterTable = std::map<std::string, Adapter>;

// The table of every adapter, keyed by ONNX op_type.
const AdapterTable& adapters();

// The ai.onnx.ml operators, keyed by op_type; each adapter sets `results`.
inline constexpr const char* kMlDomain = "ai.onnx.ml";
const AdapterTable& ml_adapters();
// The first ai.onnx.ml opset of an operator ml_adapters() holds; 0 for others.
int ml_op_since(const std::string& op);

// The optimizers of ai.onnx.preview.training (opset 1): Adagrad, Adam, Momentum.
inline constexpr const char* kTrainingDomain = "ai.onnx.preview.training";
const AdapterTable& training_adapters();
// ai.onnx.preview (opset 1): FlexAttention.
inline constexpr const char* kPreviewDomain = "ai.onnx.preview";
const AdapterTable& preview_adapters();
// The adapters of a domain other than the default one (ai.onnx.ml, the
// preview domains); null for a domain Tessel does not import.
const AdapterTable* domain_adapters(const std::string& domain);

void register_elementwise_adapters(AdapterTable& t);
void register_nn_adapters(AdapterTable& t);
void register_reduce_adapters(AdapterTable& t);
void register_shape_adapters(AdapterTable& t);
void register_movement_adapters(AdapterTable& t);
void register_loss_adapters(AdapterTable& t);
void register_composite_adapters(AdapterTable& t);
void register_resize_adapters(AdapterTable& t);
void register_quantize_adapters(AdapterTable& t);
void register_generator_adapters(AdapterTable& t);
void register_transformer_adapters(AdapterTable& t);  // and Attention's below
void register_attention_adapter(AdapterTable& t);
void register_recurrent_adapters(AdapterTable& t);  // LSTM, GRU, RNN
void register_control_adapters(AdapterTable& t);    // Scan, Loop, If
void register_state_space_adapters(AdapterTable& t);  // CausalConvWithState, LinearAttention
void register_einsum_adapter(AdapterTable& t);
void register_grid_sample_adapter(AdapterTable& t);
void register_channel_norm_adapters(AdapterTable& t);  // LRN, GlobalLpPool
void register_spectral_adapters(AdapterTable& t);      // DFT, STFT, MelWeightMatrix
void register_deform_conv_adapter(AdapterTable& t);
void register_roi_align_adapter(AdapterTable& t);
void register_max_roi_pool_adapter(AdapterTable& t);
void register_tfidf_adapter(AdapterTable& t);     // TfIdfVectorizer over integer tokens
void register_reorder_adapters(AdapterTable& t);  // CenterCropPad, ReverseSequence, MaxUnpool, TensorScatter
void register_data_dependent_adapters(AdapterTable& t);  // NonZero, Compress, NonMaxSuppression

// The sequence and optional operators (SequenceConstruct ... SequenceMap,
// Optional, OptionalHasElement, OptionalGetElement) and Identity of a
// sequence or optional; each sets `structured_results`.
const AdapterTable& structured_adapters();

}  // namespace tessel::onnx_frontend
