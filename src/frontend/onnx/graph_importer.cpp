// The import of one ONNX graph: the model's, a subgraph that becomes a graph
// of its own (a Scan's or a Loop's body, whose reads of outer values become
// captured inputs), or a branch imported into the graph around it (an If
// whose condition is known while compiling, an unrolled loop). One pass over
// the nodes in order: adapt, infer, fold.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "ir/graph/op_registry.h"
#include "src/frontend/onnx/attributes.h"
#include "src/frontend/onnx/graph_importer.h"
#include "src/frontend/onnx/importer_internal.h"
#include "src/frontend/onnx/runtime_extents.h"
#include "src/frontend/onnx/tensor_proto.h"
#include "src/passes/fold_constants.h"

namespace tessel::onnx_frontend {

void GraphImporter::import_initializers() {
  for (const auto& init : proto_.initializer()) {
    graph::Value* v = g_.add_constant(init.name(), tensor_from_proto(init, s_.dir));
    s_.fold_bytes_left += 2 * int64_t(v->constant->nbytes());  // room to cast or transpose every weight
    values_[init.name()] = v;
  }
  TESSEL_USER_CHECK(proto_.sparse_initializer_size() == 0, Span{}) << "sparse initializers are not supported";
}

void GraphImporter::import_inputs() {
  std::map<std::string, Dims> pending = s_.options.input_shapes;
  for (const auto& vi : proto_.input()) {
    if (values_.count(vi.name())) continue;  // an initializer listed as input (IR < 4)
    if (vi.has_type() && (vi.type().has_sequence_type() || vi.type().has_optional_type())) {
      import_structured_input(vi, pending);
      continue;
    }
    values_[vi.name()] = add_tensor_input(vi.name(), type_from_value_info(vi), pending);
  }
  TESSEL_USER_CHECK(pending.empty(), Span{})
      << "--input-shape names '" << pending.begin()->first << "', which is not a graph input";
  for (const auto& [name, n] : s_.options.sequence_lengths)
    TESSEL_USER_CHECK(structured_.count(name), Span{})
        << "--sequence-length names '" << name << "', which is not a sequence input of the graph";
  for (const std::string& name : s_.options.empty_optionals)
    TESSEL_USER_CHECK(structured_.count(name) && structured_.at(name).is_optional(), Span{})
        << "--empty-optional names '" << name << "', which is not an optional input of the graph";
}

graph::Value* GraphImporter::add_tensor_input(const std::string& name, graph::TensorType t,
                                              std::map<std::string, Dims>& pending_shapes) {
  if (auto it = pending_shapes.find(name); it != pending_shapes.end()) {
    bind_input_shape(t, it->second, name);
    pending_shapes.erase(it);
  }
  size_t position = g_.inputs().size();
  const Tensor* known =
      position < s_.options.input_values.size() ? &s_.options.input_values[position] : nullptr;
  // A known value decides a shape the model leaves open (the operator tests
  // declare some inputs, and sequence elements, without one).
  if (known && !t.is_static() && (!t.rank_known || size_t(t.rank()) == known->shape().size()))
    bind_input_shape(t, known->shape(), name);
  graph::Value* input = g_.add_input(name, t);
  if (known) s_.known_inputs.emplace(input, *known);
  return input;
}

void GraphImporter::import_constant(const onnx::NodeProto& n, const std::string& name) {
  Span span{name, "Constant"};
  TESSEL_USER_CHECK(n.output_size() == 1 && n.attribute_size() == 1, span)
      << "a Constant needs exactly one output and one value attribute";
  const onnx::AttributeProto& a = n.attribute(0);
  static const std::map<std::string, onnx::AttributeProto::AttributeType> kTypes = {
      {"value_float", onnx::AttributeProto::FLOAT},
      {"value_int", onnx::AttributeProto::INT},
      {"value_floats", onnx::AttributeProto::FLOATS},
      {"value_ints", onnx::AttributeProto::INTS}};
  auto want = kTypes.find(a.name());
  TESSEL_USER_CHECK(
      want == kTypes.end() || a.type() == onnx::AttributeProto::UNDEFINED || a.type() == want->second, span)
      << "attribute '" << a.name() << "' must be of type "
      << onnx::AttributeProto::AttributeType_Name(want->second) << ", got "
      << onnx::AttributeProto::AttributeType_Name(a.type());
  Tensor t;
  if (a.name() == "value") {
    TESSEL_USER_CHECK(a.has_t(), span) << "attribute 'value' must hold a tensor";
    t = tensor_from_proto(a.t(), s_.dir);
  } else if (a.name() == "value_float") {
    t = Tensor::scalar_f64(DType::kF32, a.f());
  } else if (a.name() == "value_int") {
    t = Tensor::from_i64({a.i()}, {});
  } else if (a.name() == "value_floats") {
    t = Tensor(DType::kF32, {a.floats_size()});
    for (int i = 0; i < a.floats_size(); ++i) t.set_f64(i, a.floats(i));
  } else if (a.name() == "value_ints") {
    t = Tensor::from_i64(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  } else {
    TESSEL_USER_ERROR(span) << "unsupported attribute '" << a.name() << "'";
  }
  define(n.output(0), g_.add_constant(n.output(0), std::move(t)), name);
}

void GraphImporter::import_node(const onnx::NodeProto& n, int index) {
  std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
  if (n.op_type() == "Constant") return import_constant(n, name);
  AdaptContext ctx{g_, s_.opset, may_fold(), n.op_type(), name, {}, {}, {}, std::nullopt, &s_.known_inputs};
  ctx.extents = &s_.extents;
  ctx.attrs = convert_attributes(n, Span{name, n.op_type()}, s_.dir);
  if (is_default_domain(n.domain())) check_onnx_schema(n, s_.opset, ctx.attrs, Span{name, n.op_type()});
  give_subgraphs(ctx, n, name);
  // Every op has an output, and the adapters may assume one: ONNX's schema
  // lets some ops (BatchNormalization) through with none.
  TESSEL_USER_CHECK(n.output_size() > 0, (Span{name, n.op_type()})) << "expects at least 1 output, got 0";
  for (const std::string& in : n.input()) {
    OnnxValue v = in.empty() ? OnnxValue::of(nullptr) : lookup_value(in, name);
    ctx.inputs.push_back(v.is_tensor() ? v.tensor : nullptr);
    ctx.onnx_inputs.push_back(std::move(v));
  }
  for (const std::string& out : n.output()) ctx.output_names.push_back(out);
  const std::vector<graph::Value*> given_inputs = ctx.inputs;
  const graph::Attrs given_attrs = ctx.attrs;
  prepare_runtime_extents(ctx, s_.extents);
  const AdapterTable& table = adapter_table(n, ctx);
  if (auto it = table.find(n.op_type()); it != table.end()) it->second(ctx);
  std::vector<OnnxValue> results;
  if (ctx.structured_results) {
    results = *ctx.structured_results;
  } else {
    std::vector<graph::Value*> tensors;
    if (ctx.results) {
      tensors = *ctx.results;
    } else {
      graph::Node* node = g_.add_node(ctx.op, name, ctx.inputs, ctx.output_names, ctx.attrs);
      infer_and_fold(*node, ctx.fold_constants);
      tensors = node->outputs;
    }
    charge_folding(tensors);
    carry_runtime_extents(ctx, given_inputs, given_attrs, tensors, s_.extents);
    for (graph::Value* v : tensors) results.push_back(OnnxValue::of(v));
  }
  // ONNX's schema bounds the outputs up to the library's opset; past it, a
  // node may name more outputs than the op has.
  TESSEL_USER_CHECK(results.size() == size_t(n.output_size()), (Span{name, n.op_type()}))
      << "expects " << results.size() << " outputs, got " << n.output_size();
  // A value an adapter made (named "<node>/...") takes the ONNX output's name, which
  // `tessel run` and the model's outputs go by; values that existed before keep theirs.
  std::string made_here = name + "/";
  for (int i = 0; i < n.output_size(); ++i) {
    graph::Value* v = results[size_t(i)].is_tensor() ? results[size_t(i)].tensor : nullptr;
    if (v && !n.output(i).empty() && v->name.starts_with(made_here)) v->name = n.output(i);
  }
  for (int i = 0; i < n.output_size(); ++i)
    if (!n.output(i).empty()) define_value(n.output(i), results[size_t(i)], name);
}

const AdapterTable& GraphImporter::adapter_table(const onnx::NodeProto& n, const AdaptContext& ctx) const {
  const std::string& op = n.op_type();
  bool default_domain = is_default_domain(n.domain());
  if (default_domain && structured_adapters().count(op) && (op != "Identity" || ctx.any_structured_input()))
    return structured_adapters();
  for (size_t i = 0; i < ctx.onnx_inputs.size(); ++i)
    TESSEL_USER_CHECK(ctx.onnx_inputs[i].is_tensor() || (default_domain && (op == "If" || op == "Loop")),
                      (Span{ctx.name, op}))
        << "reads '" << n.input(int(i)) << "', " << ctx.onnx_inputs[i].describe()
        << ", where it takes a tensor";
  return default_domain ? adapters() : *domain_adapters(n.domain());
}

graph::Value* GraphImporter::checked_output(const onnx::ValueInfoProto& vi) {
  graph::Value* v = lookup(vi.name(), "graph output");
  if (vi.has_type() && vi.type().has_tensor_type() && vi.type().tensor_type().elem_type() != 0) {
    graph::TensorType declared = type_from_value_info(vi);
    std::string who = v->producer ? "node '" + v->producer->name + "'" : "the graph";
    TESSEL_USER_CHECK(declared.dtype == v->type.dtype, Span{})
        << "output '" << vi.name() << "' is declared " << declared.str() << " but " << who << " produces "
        << v->type.str();
    bool same_rank = !declared.rank_known || !v->type.rank_known || declared.rank() == v->type.rank();
    auto extent = s_.extents.find(v);
    for (int i = 0; same_rank && declared.rank_known && v->type.rank_known && i < declared.rank(); ++i) {
      const graph::Dim &a = declared.dims[size_t(i)], &b = v->type.dims[size_t(i)];
      bool decided_by_run = extent != s_.extents.end() && extent->second.axis == i;
      same_rank = !a.is_known() || !b.is_known() || a.value == b.value || decided_by_run;
    }
    TESSEL_USER_CHECK(same_rank, Span{}) << "shape mismatch: output '" << vi.name() << "' is declared "
                                         << declared.str() << " but " << who << " produces " << v->type.str();
  }
  return v;
}

// Once the budget is spent, later nodes are no longer folded. Helper nodes of
// adapters are not charged: the per-node caps bound them.
void GraphImporter::charge_folding(const std::vector<graph::Value*>& results) {
  std::vector<const graph::Node*> charged;
  for (const graph::Value* v : results) {
    if (v == nullptr || !v->is_constant() || v->producer == nullptr) continue;  // null: an omitted output
    s_.fold_bytes_left -= int64_t(v->constant->nbytes());
    if (std::find(charged.begin(), charged.end(), v->producer) != charged.end()) continue;
    charged.push_back(v->producer);
    s_.fold_flops_left -= graph::node_flops(*v->producer);
  }
}

void GraphImporter::import_nodes() {
  for (int i = 0; i < proto_.node_size(); ++i) import_node(proto_.node(i), i);
}

// Folded nodes become plain constants; weights only they read disappear.
void GraphImporter::import_main() {
  g_.name = proto_.name();
  import_initializers();
  import_inputs();
  import_nodes();
  std::vector<graph::Value*> outputs = main_outputs();
  for (size_t j = 0, users = outputs.size(); j < users; ++j) {
    auto extent = s_.extents.find(outputs[j]);
    if (extent == s_.extents.end()) continue;
    g_.data_dependent_dims.push_back(graph::DataDependentDim{j, int(extent->second.axis)});
    outputs.push_back(extent->second.size);
  }
  g_.set_outputs(std::move(outputs));
  passes::remove_folded_nodes(g_);
}

std::vector<std::string> GraphImporter::declared_inputs(size_t given) const {
  std::vector<std::string> names;
  for (const auto& vi : proto_.input())
    if (!values_.count(vi.name())) names.push_back(vi.name());  // not an initializer listed as input
  TESSEL_USER_CHECK(names.size() == given, (Span{proto_.name(), "subgraph"}))
      << "declares " << names.size() << " inputs, its node gives " << given;
  return names;
}

void GraphImporter::import_body(const std::vector<graph::TensorType>& input_types) {
  g_.name = proto_.name();
  import_initializers();
  std::vector<std::string> declared = declared_inputs(input_types.size());
  for (size_t i = 0; i < declared.size(); ++i)
    values_[declared[i]] = g_.add_input(declared[i], input_types[i]);
  import_nodes();
  std::vector<graph::Value*> outputs;
  for (const OnnxValue& v : subgraph_outputs()) {
    TESSEL_USER_CHECK(v.is_tensor(), (Span{proto_.name(), "subgraph"}))
        << "returns " << v.describe()
        << ": a body compiled as a loop returns tensors (a Loop that carries a sequence or an optional is "
           "unrolled while compiling, which needs its trip count known)";
    outputs.push_back(v.tensor);
  }
  g_.set_outputs(outputs);
  passes::remove_folded_nodes(g_);
}

// The subgraph attributes of n, for the adapters of Scan, Loop and If.
void GraphImporter::give_subgraphs(AdaptContext& ctx, const onnx::NodeProto& n, const std::string& name) {
  auto find = [&n, name](const std::string& attr) -> const onnx::GraphProto& {
    const onnx::GraphProto* found = nullptr;
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.name() == attr && a.has_g()) found = &a.g();
    TESSEL_USER_CHECK(found != nullptr, (Span{name, n.op_type()}))
        << "has no subgraph attribute '" << attr << "'";
    return *found;
  };
  ctx.import_subgraph = [this, find](const std::string& attr, const std::vector<graph::TensorType>& types,
                                     std::vector<graph::Value*>& captured) {
    auto body = std::make_shared<graph::Graph>();
    GraphImporter child(s_, find(attr), *body, this, Scope::kBody);
    child.import_body(types);
    captured = child.captured();
    return body;
  };
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.has_g()) ctx.subgraphs.push_back(a.name());
  ctx.inline_subgraph_values = [this, find](const std::string& attr, const std::vector<OnnxValue>& inputs) {
    GraphImporter child(s_, find(attr), g_, this, Scope::kInline);
    return child.import_inline(inputs);
  };
  ctx.inline_subgraph = [span = ctx.span(), inline_values = ctx.inline_subgraph_values](
                            const std::string& attr, const std::vector<graph::Value*>& inputs) {
    std::vector<OnnxValue> given;
    for (graph::Value* v : inputs) given.push_back(OnnxValue::of(v));
    std::vector<graph::Value*> tensors;
    for (const OnnxValue& v : inline_values(attr, given)) {
      TESSEL_USER_CHECK(v.is_tensor(), span)
          << "its subgraph '" << attr << "' returns " << v.describe() << ", where a tensor is expected";
      tensors.push_back(v.tensor);
    }
    return tensors;
  };
}

graph::Graph import_main_graph(const onnx::GraphProto& proto, int opset, const std::string& model_dir,
                               const ImportOptions& options) {
  ImportSession session{opset, model_dir, options, {}};
  graph::Graph g;
  GraphImporter(session, proto, g, nullptr, Scope::kMain).import_main();
  return g;
}

}  // namespace tessel::onnx_frontend
