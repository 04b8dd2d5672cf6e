// The import of one ONNX graph: the model's, a subgraph that becomes a graph
// of its own (a Scan's or a Loop's body, whose reads of outer values become
// captured inputs), or a branch imported into the graph around it (an If
// whose condition is known while compiling). One pass over the nodes in
// order: adapt, infer, fold.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "ir/graph/op_registry.h"
#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/attributes.h"
#include "src/frontend/onnx/importer_internal.h"
#include "src/frontend/onnx/runtime_extents.h"
#include "src/frontend/onnx/tensor_proto.h"
#include "src/passes/fold_constants.h"

namespace tessel::onnx_frontend {

namespace {

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
  // The declared inputs bound to the given values of the parent's graph.
  std::vector<graph::Value*> import_inline(const std::vector<graph::Value*>& inputs);
  // The outer values a body reads, in the order of its inputs after the declared ones.
  const std::vector<graph::Value*>& captured() const { return captured_; }

 private:
  graph::Value* lookup(const std::string& name, const std::string& node);
  // Binds an ONNX value name; a name defined twice breaks SSA and is refused.
  void define(const std::string& name, graph::Value* v, const std::string& node);
  void import_initializers();
  void import_inputs();
  // The names of a subgraph's inputs (`given` of them, or a user error).
  std::vector<std::string> declared_inputs(size_t given) const;
  void import_nodes();
  void import_node(const onnx::NodeProto& n, int index);
  void import_constant(const onnx::NodeProto& n, const std::string& name);
  std::vector<graph::Value*> output_values();
  // A subgraph's outputs, none of data-dependent extent (a user error).
  std::vector<graph::Value*> fixed_shape_outputs();
  void check_declared_outputs(const std::vector<graph::Value*>& outs);
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
  std::vector<graph::Value*> captured_;
};

graph::Value* GraphImporter::lookup(const std::string& name, const std::string& node) {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  TESSEL_USER_CHECK(parent_ != nullptr, (Span{node, ""}))
      << "uses '" << name << "', which no earlier node, input or initializer defines";
  graph::Value* outer = parent_->lookup(name, node);
  TESSEL_USER_CHECK(!s_.extents.count(outer), (Span{node, ""}))
      << "a subgraph reads '" << name << "', whose extent only a run decides (an output of "
      << s_.extents.at(outer).origin << "); loop and branch bodies take only values of fixed shape";
  if (scope_ == Scope::kInline) return outer;
  graph::Value* inner;
  if (outer->is_constant()) {
    inner = g_.add_constant(name, *outer->constant);
  } else {
    inner = g_.add_input(name, outer->type);
    captured_.push_back(outer);
  }
  return values_[name] = inner;
}

void GraphImporter::define(const std::string& name, graph::Value* v, const std::string& node) {
  TESSEL_USER_CHECK(values_.emplace(name, v).second, (Span{node, ""}))
      << "defines '" << name << "', which an earlier node, input or initializer already defines";
}

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
    graph::TensorType t = type_from_value_info(vi);
    if (auto it = pending.find(vi.name()); it != pending.end()) {
      bind_input_shape(t, it->second, vi.name());
      pending.erase(it);
    }
    graph::Value* input = g_.add_input(vi.name(), t);
    values_[vi.name()] = input;
    size_t position = g_.inputs().size() - 1;
    if (position < s_.options.input_values.size())
      s_.known_inputs.emplace(input, s_.options.input_values[position]);
  }
  TESSEL_USER_CHECK(pending.empty(), Span{})
      << "--input-shape names '" << pending.begin()->first << "', which is not a graph input";
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
  for (const std::string& in : n.input()) ctx.inputs.push_back(in.empty() ? nullptr : lookup(in, name));
  for (const std::string& out : n.output()) ctx.output_names.push_back(out);
  const std::vector<graph::Value*> onnx_inputs = ctx.inputs;
  const graph::Attrs onnx_attrs = ctx.attrs;
  prepare_runtime_extents(ctx, s_.extents);
  const AdapterTable& table = is_default_domain(n.domain()) ? adapters() : *domain_adapters(n.domain());
  if (auto it = table.find(n.op_type()); it != table.end()) it->second(ctx);
  std::vector<graph::Value*> results;
  if (ctx.results) {
    results = *ctx.results;
  } else {
    graph::Node* node = g_.add_node(ctx.op, name, ctx.inputs, ctx.output_names, ctx.attrs);
    infer_and_fold(*node, ctx.fold_constants);
    results = node->outputs;
  }
  charge_folding(results);
  carry_runtime_extents(ctx, onnx_inputs, onnx_attrs, results, s_.extents);
  // ONNX's schema bounds the outputs up to the library's opset; past it, a
  // node may name more outputs than the op has.
  TESSEL_USER_CHECK(results.size() == size_t(n.output_size()), (Span{name, n.op_type()}))
      << "expects " << results.size() << " outputs, got " << n.output_size();
  // A value an adapter made (named "<node>/...") takes the ONNX output's name, which
  // `tessel run` and the model's outputs go by; values that existed before keep theirs.
  std::string made_here = name + "/";
  for (int i = 0; i < n.output_size(); ++i)
    if (results[size_t(i)] && !n.output(i).empty() && results[size_t(i)]->name.starts_with(made_here))
      results[size_t(i)]->name = n.output(i);
  for (int i = 0; i < n.output_size(); ++i)
    if (!n.output(i).empty()) define(n.output(i), results[size_t(i)], name);
}

std::vector<graph::Value*> GraphImporter::output_values() {
  std::vector<graph::Value*> outs;
  for (const auto& vi : proto_.output()) {
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
      TESSEL_USER_CHECK(same_rank, Span{})
          << "shape mismatch: output '" << vi.name() << "' is declared " << declared.str() << " but " << who
          << " produces " << v->type.str();
    }
    outs.push_back(v);
  }
  return outs;
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
  std::vector<graph::Value*> outputs = output_values();
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
  g_.set_outputs(fixed_shape_outputs());
  passes::remove_folded_nodes(g_);
}

std::vector<graph::Value*> GraphImporter::fixed_shape_outputs() {
  std::vector<graph::Value*> outputs = output_values();
  for (const graph::Value* v : outputs)
    TESSEL_USER_CHECK(!s_.extents.count(v), (Span{proto_.name(), "subgraph"}))
        << "returns '" << v->name << "', whose extent only a run decides (an output of "
        << s_.extents.at(v).origin << "); loop and branch bodies return only values of fixed shape";
  return outputs;
}

std::vector<graph::Value*> GraphImporter::import_inline(const std::vector<graph::Value*>& inputs) {
  import_initializers();
  std::vector<std::string> declared = declared_inputs(inputs.size());
  for (size_t i = 0; i < declared.size(); ++i) values_[declared[i]] = inputs[i];
  import_nodes();
  return fixed_shape_outputs();
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
  ctx.inline_subgraph = [this, find](const std::string& attr, const std::vector<graph::Value*>& inputs) {
    GraphImporter child(s_, find(attr), g_, this, Scope::kInline);
    return child.import_inline(inputs);
  };
}

}  // namespace

graph::Graph import_main_graph(const onnx::GraphProto& proto, int opset, const std::string& model_dir,
                               const ImportOptions& options) {
  ImportSession session{opset, model_dir, options, {}};
  graph::Graph g;
  GraphImporter(session, proto, g, nullptr, Scope::kMain).import_main();
  return g;
}

}  // namespace tessel::onnx_frontend
