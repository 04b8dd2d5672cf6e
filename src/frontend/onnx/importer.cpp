// The ONNX importer: model checks, then one pass over the nodes in order
// (adapt, infer, fold), then the graph outputs.
#include "src/frontend/onnx/importer.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "ir/graph/op_registry.h"
#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/attributes.h"
#include "src/frontend/onnx/tensor_proto.h"
#include "src/passes/fold_constants.h"

namespace tessel::onnx_frontend {

namespace fs = std::filesystem;

namespace {

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

bool is_supported(const onnx::NodeProto& n) {
  return is_default_domain(n.domain()) && imports_op(n.op_type());
}

}  // namespace

bool imports_op(const std::string& op) {
  if (op == "Scan") return false;
  return op == "Constant" || adapters().count(op) || graph::OpRegistry::global().find(op) != nullptr;
}

namespace {

int default_opset(const onnx::ModelProto& m) {
  int opset = -1;
  for (const auto& o : m.opset_import())
    if (is_default_domain(o.domain())) opset = int(o.version());
  TESSEL_USER_CHECK(opset >= 0, Span{}) << "the model imports no opset of the default ONNX domain";
  TESSEL_USER_CHECK(opset >= kMinOpset && opset <= kMaxOpset, Span{})
      << "opset " << opset << " is not supported (supported: " << kMinOpset << " to " << kMaxOpset << ")";
  return opset;
}

void check_model(const onnx::ModelProto& m) {
  TESSEL_USER_CHECK(m.has_ir_version() && m.has_graph(), Span{})
      << "not an ONNX model (no IR version or no graph)";
  TESSEL_USER_CHECK(m.ir_version() >= kMinIrVersion && m.ir_version() <= kMaxIrVersion, Span{})
      << "IR version " << m.ir_version() << " is not supported (supported: " << kMinIrVersion
      << " to " << kMaxIrVersion << ")";
  std::map<std::string, std::vector<std::string>> unsupported;
  for (int i = 0; i < m.graph().node_size(); ++i) {
    const onnx::NodeProto& n = m.graph().node(i);
    if (is_supported(n)) continue;
    std::string op = is_default_domain(n.domain()) ? n.op_type() : n.domain() + "." + n.op_type();
    unsupported[op].push_back(n.name().empty() ? "#" + std::to_string(i) : n.name());
  }
  if (unsupported.empty()) return;
  std::ostringstream os;
  os << "unsupported ops:";
  for (const auto& [op, nodes] : unsupported) {
    os << " " << op << " (node" << (nodes.size() > 1 ? "s" : "");
    for (size_t i = 0; i < nodes.size() && i < 8; ++i) os << (i ? ", '" : " '") << nodes[i] << "'";
    if (nodes.size() > 8) os << ", and " << nodes.size() - 8 << " more";
    os << ");";
  }
  std::string msg = os.str();
  msg.pop_back();
  throw UserError(msg);
}

std::optional<graph::AttrType> graph_attr_type(onnx::AttributeProto::AttributeType t) {
  switch (t) {
    case onnx::AttributeProto::INT: return graph::AttrType::kInt;
    case onnx::AttributeProto::FLOAT: return graph::AttrType::kFloat;
    case onnx::AttributeProto::STRING: return graph::AttrType::kString;
    case onnx::AttributeProto::TENSOR: return graph::AttrType::kTensor;
    case onnx::AttributeProto::INTS: return graph::AttrType::kInts;
    case onnx::AttributeProto::FLOATS: return graph::AttrType::kFloats;
    case onnx::AttributeProto::STRINGS: return graph::AttrType::kStrings;
    default: return std::nullopt;  // graphs and the like, refused when converted
  }
}

std::string count_range(int min, int max) {
  if (min == max) return std::to_string(min);
  if (max >= 1 << 20) return "at least " + std::to_string(min);  // variadic
  return std::to_string(min) + " to " + std::to_string(max);
}

void check_onnx_attr_types(const onnx::OpSchema& s, graph::Attrs& attrs, const Span& span) {
  for (const auto& [name, spec] : s.attributes()) {
    const graph::AttrValue* v = attrs.find(name);
    std::optional<graph::AttrType> want = graph_attr_type(spec.type);
    if (v == nullptr || !want || graph::attr_type_of(*v) == *want) continue;
    // An empty list has no populated field that tells its element type.
    const auto* ints = std::get_if<std::vector<int64_t>>(v);
    if (ints && ints->empty() && *want == graph::AttrType::kFloats) attrs.set(name, std::vector<double>{});
    else if (ints && ints->empty() && *want == graph::AttrType::kStrings) attrs.set(name, std::vector<std::string>{});
    else
      TESSEL_USER_ERROR(span) << "attribute '" << name << "' must be of type " << graph::attr_type_name(*want)
                              << ", got " << graph::attr_type_name(graph::attr_type_of(*v));
  }
}

// Checks a node against ONNX's own schema of its op at the model's opset
// before any adapter sees it, so that adapters may rely on input and output
// counts and on attribute types. The ONNX library knows opsets up to its
// release; beyond that a newer version may take other inputs or attributes,
// so only the types of the attributes it knows are checked.
void check_onnx_schema(const onnx::NodeProto& n, int opset, graph::Attrs& attrs, const Span& span) {
  static const int newest = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "");
  if (s == nullptr) {
    const onnx::OpSchema* later = onnx::OpSchemaRegistry::Schema(n.op_type(), newest, "");
    TESSEL_USER_CHECK(later == nullptr || later->SinceVersion() <= opset, span)
        << "op " << n.op_type() << " does not exist at opset " << opset << " (it was added in opset "
        << later->SinceVersion() << ")";
    return;  // an op newer than our ONNX library: our own schema checks it
  }
  if (s->Deprecated()) return;
  check_onnx_attr_types(*s, attrs, span);
  if (opset > newest) return;
  for (const auto& [name, spec] : s->attributes())
    TESSEL_USER_CHECK(!spec.required || attrs.has(name), span) << "missing required attribute '" << name << "'";
  TESSEL_USER_CHECK(n.input_size() >= s->min_input() && n.input_size() <= s->max_input(), span)
      << "expects " << count_range(s->min_input(), s->max_input()) << " inputs, got " << n.input_size();
  TESSEL_USER_CHECK(n.output_size() >= s->min_output() && n.output_size() <= s->max_output(), span)
      << "expects " << count_range(s->min_output(), s->max_output()) << " outputs, got " << n.output_size();
  for (int i = 0; i < n.input_size() && i < int(s->inputs().size()); ++i)
    TESSEL_USER_CHECK(!n.input(i).empty() || s->inputs()[size_t(i)].GetOption() != onnx::OpSchema::Single, span)
        << "required input " << i << " ('" << s->inputs()[size_t(i)].GetName() << "') is missing";
  for (int i = 0; i < n.output_size() && i < int(s->outputs().size()); ++i)
    TESSEL_USER_CHECK(!n.output(i).empty() || s->outputs()[size_t(i)].GetOption() != onnx::OpSchema::Single, span)
        << "required output " << i << " ('" << s->outputs()[size_t(i)].GetName() << "') is missing";
}

graph::TensorType type_from_value_info(const onnx::ValueInfoProto& vi) {
  Span span{"", "value '" + vi.name() + "'"};
  TESSEL_USER_CHECK(vi.has_type() && vi.type().has_tensor_type(), span)
      << "only tensor-typed graph inputs and outputs are supported";
  const auto& tt = vi.type().tensor_type();
  auto dtype = dtype_from_onnx(tt.elem_type());
  TESSEL_USER_CHECK(dtype.has_value(), span) << "unsupported element type " << onnx_type_name(tt.elem_type());
  if (!tt.has_shape()) return graph::TensorType::unknown_rank(*dtype);
  graph::TensorType t;
  t.dtype = *dtype;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value()) {
      TESSEL_USER_CHECK(d.dim_value() >= 0, span) << "negative dimension " << d.dim_value();
      t.dims.push_back(graph::Dim::known(d.dim_value()));
    } else {
      t.dims.push_back(graph::Dim::unknown(d.dim_param()));
    }
  }
  return t;
}

void bind_input_shape(graph::TensorType& t, const Dims& dims, const std::string& name) {
  Span span{"", "input '" + name + "'"};
  TESSEL_USER_CHECK(!t.rank_known || t.rank() == int(dims.size()), span)
      << "--input-shape gives rank " << dims.size() << " but the model declares " << t.str();
  for (size_t i = 0; t.rank_known && i < dims.size(); ++i)
    TESSEL_USER_CHECK(!t.dims[i].is_known() || t.dims[i].value == dims[i], span)
        << "--input-shape gives " << dims_str(dims) << " but the model declares " << t.str();
  t = graph::TensorType(t.dtype, dims);
}

// Folding makes data that the file does not hold (ConstantOfShape, Tile,
// Expand, ...). Each folded node is capped (passes::should_fold), and an
// import in all (see Importer::charge_folding), so that a few hundred bytes of
// model cannot make the importer take gigabytes or minutes; what is not
// folded runs at run time.
constexpr int64_t kFoldBytesBudget = int64_t(1) << 28;  // 256 MiB, plus twice the weights
constexpr int64_t kFoldFlopsBudget = int64_t(1) << 32;

class Importer {
 public:
  Importer(const onnx::ModelProto& m, std::string dir, const ImportOptions& o)
      : model_(m), dir_(std::move(dir)), options_(o) {}

  graph::Graph run();

 private:
  graph::Value* lookup(const std::string& name, const std::string& node) const;
  // Binds an ONNX value name; a name defined twice breaks SSA and is refused.
  void define(const std::string& name, graph::Value* v, const std::string& node);
  void import_inputs();
  void import_node(const onnx::NodeProto& n, int index);
  void import_constant(const onnx::NodeProto& n, const std::string& name);
  void import_outputs();
  bool may_fold() const { return options_.fold_constants && fold_bytes_left_ > 0 && fold_flops_left_ > 0; }
  void charge_folding(const std::vector<graph::Value*>& results);

  const onnx::ModelProto& model_;
  std::string dir_;
  const ImportOptions& options_;
  graph::Graph g_;
  int opset_ = 0;
  std::unordered_map<std::string, graph::Value*> values_;
  std::unordered_map<const graph::Value*, Tensor> known_inputs_;  // ImportOptions::input_values
  int64_t fold_bytes_left_ = kFoldBytesBudget;
  int64_t fold_flops_left_ = kFoldFlopsBudget;
};

graph::Value* Importer::lookup(const std::string& name, const std::string& node) const {
  auto it = values_.find(name);
  TESSEL_USER_CHECK(it != values_.end(), (Span{node, ""}))
      << "uses '" << name << "', which no earlier node, input or initializer defines";
  return it->second;
}

void Importer::define(const std::string& name, graph::Value* v, const std::string& node) {
  TESSEL_USER_CHECK(values_.emplace(name, v).second, (Span{node, ""}))
      << "defines '" << name << "', which an earlier node, input or initializer already defines";
}

void Importer::import_inputs() {
  for (const auto& init : model_.graph().initializer()) {
    graph::Value* v = g_.add_constant(init.name(), tensor_from_proto(init, dir_));
    fold_bytes_left_ += 2 * int64_t(v->constant->nbytes());  // room to cast or transpose every weight
    values_[init.name()] = v;
  }
  TESSEL_USER_CHECK(model_.graph().sparse_initializer_size() == 0, Span{})
      << "sparse initializers are not supported";
  std::map<std::string, Dims> pending = options_.input_shapes;
  for (const auto& vi : model_.graph().input()) {
    if (values_.count(vi.name())) continue;  // an initializer listed as input (IR < 4)
    graph::TensorType t = type_from_value_info(vi);
    if (auto it = pending.find(vi.name()); it != pending.end()) {
      bind_input_shape(t, it->second, vi.name());
      pending.erase(it);
    }
    graph::Value* input = g_.add_input(vi.name(), t);
    values_[vi.name()] = input;
    size_t position = g_.inputs().size() - 1;
    if (position < options_.input_values.size())
      known_inputs_.emplace(input, options_.input_values[position]);
  }
  TESSEL_USER_CHECK(pending.empty(), Span{})
      << "--input-shape names '" << pending.begin()->first << "', which is not a graph input";
}

void Importer::import_constant(const onnx::NodeProto& n, const std::string& name) {
  Span span{name, "Constant"};
  TESSEL_USER_CHECK(n.output_size() == 1 && n.attribute_size() == 1, span)
      << "a Constant needs exactly one output and one value attribute";
  const onnx::AttributeProto& a = n.attribute(0);
  static const std::map<std::string, onnx::AttributeProto::AttributeType> kTypes = {
      {"value_float", onnx::AttributeProto::FLOAT}, {"value_int", onnx::AttributeProto::INT},
      {"value_floats", onnx::AttributeProto::FLOATS}, {"value_ints", onnx::AttributeProto::INTS}};
  auto want = kTypes.find(a.name());
  TESSEL_USER_CHECK(want == kTypes.end() || a.type() == onnx::AttributeProto::UNDEFINED || a.type() == want->second,
                    span)
      << "attribute '" << a.name() << "' must be of type "
      << onnx::AttributeProto::AttributeType_Name(want->second) << ", got "
      << onnx::AttributeProto::AttributeType_Name(a.type());
  Tensor t;
  if (a.name() == "value") {
    TESSEL_USER_CHECK(a.has_t(), span) << "attribute 'value' must hold a tensor";
    t = tensor_from_proto(a.t(), dir_);
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

void Importer::import_node(const onnx::NodeProto& n, int index) {
  std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
  if (n.op_type() == "Constant") return import_constant(n, name);
  AdaptContext ctx{g_, opset_, may_fold(), n.op_type(), name, {}, {}, {}, std::nullopt, &known_inputs_};
  ctx.attrs = convert_attributes(n, Span{name, n.op_type()}, dir_);
  if (is_default_domain(n.domain())) check_onnx_schema(n, opset_, ctx.attrs, Span{name, n.op_type()});
  // Every op has an output, and the adapters may assume one: ONNX's schema
  // lets some ops (BatchNormalization) through with none.
  TESSEL_USER_CHECK(n.output_size() > 0, (Span{name, n.op_type()})) << "expects at least 1 output, got 0";
  for (const std::string& in : n.input()) ctx.inputs.push_back(in.empty() ? nullptr : lookup(in, name));
  for (const std::string& out : n.output()) ctx.output_names.push_back(out);
  if (auto it = adapters().find(n.op_type()); it != adapters().end()) it->second(ctx);
  std::vector<graph::Value*> results;
  if (ctx.results) {
    results = *ctx.results;
  } else {
    graph::Node* node = g_.add_node(ctx.op, name, ctx.inputs, ctx.output_names, ctx.attrs);
    infer_and_fold(*node, ctx.fold_constants);
    results = node->outputs;
  }
  charge_folding(results);
  TESSEL_ICHECK(results.size() == size_t(n.output_size())) << "adapter of " << n.op_type() << " lost outputs";
  // A value an adapter made (named "<node>/...") takes the ONNX output's name, which
  // `tessel run` and the model's outputs go by; values that existed before keep theirs.
  std::string made_here = name + "/";
  for (int i = 0; i < n.output_size(); ++i)
    if (results[size_t(i)] && !n.output(i).empty() && results[size_t(i)]->name.starts_with(made_here))
      results[size_t(i)]->name = n.output(i);
  for (int i = 0; i < n.output_size(); ++i)
    if (!n.output(i).empty()) define(n.output(i), results[size_t(i)], name);
}

void Importer::import_outputs() {
  std::vector<graph::Value*> outs;
  for (const auto& vi : model_.graph().output()) {
    graph::Value* v = lookup(vi.name(), "graph output");
    if (vi.has_type() && vi.type().has_tensor_type() && vi.type().tensor_type().elem_type() != 0) {
      graph::TensorType declared = type_from_value_info(vi);
      std::string who = v->producer ? "node '" + v->producer->name + "'" : "the graph";
      TESSEL_USER_CHECK(declared.dtype == v->type.dtype, Span{})
          << "output '" << vi.name() << "' is declared " << declared.str() << " but " << who
          << " produces " << v->type.str();
      bool same_rank = !declared.rank_known || !v->type.rank_known || declared.rank() == v->type.rank();
      for (int i = 0; same_rank && declared.rank_known && v->type.rank_known && i < declared.rank(); ++i) {
        const graph::Dim &a = declared.dims[size_t(i)], &b = v->type.dims[size_t(i)];
        same_rank = !a.is_known() || !b.is_known() || a.value == b.value;
      }
      TESSEL_USER_CHECK(same_rank, Span{}) << "shape mismatch: output '" << vi.name() << "' is declared "
                                           << declared.str() << " but " << who << " produces " << v->type.str();
    }
    outs.push_back(v);
  }
  g_.set_outputs(std::move(outs));
}

// Once the budget is spent, later nodes are no longer folded. Helper nodes of
// adapters are not charged: the per-node caps bound them.
void Importer::charge_folding(const std::vector<graph::Value*>& results) {
  std::vector<const graph::Node*> charged;
  for (const graph::Value* v : results) {
    if (v == nullptr || !v->is_constant() || v->producer == nullptr) continue;  // null: an omitted output
    fold_bytes_left_ -= int64_t(v->constant->nbytes());
    if (std::find(charged.begin(), charged.end(), v->producer) != charged.end()) continue;
    charged.push_back(v->producer);
    fold_flops_left_ -= graph::node_flops(*v->producer);
  }
}

// Folded nodes become plain constants; weights only they read disappear.
graph::Graph Importer::run() {
  check_model(model_);
  opset_ = default_opset(model_);
  g_.name = model_.graph().name();
  import_inputs();
  for (int i = 0; i < model_.graph().node_size(); ++i) import_node(model_.graph().node(i), i);
  import_outputs();
  passes::remove_folded_nodes(g_);
  return std::move(g_);
}

}  // namespace

void infer_and_fold(graph::Node& node, bool fold) {
  graph::infer_node(node);
  if (fold) passes::fold_node(node);
}

graph::Graph import_model_proto(const onnx::ModelProto& model, const std::string& model_dir,
                                const ImportOptions& options) {
  return Importer(model, model_dir, options).run();
}

graph::Graph import_model_bytes(const std::string& bytes, const std::string& model_dir,
                                const ImportOptions& options) {
  onnx::ModelProto model;
  TESSEL_USER_CHECK(model.ParseFromString(bytes), Span{})
      << "not a valid ONNX model (the protobuf does not parse: truncated, or not ONNX)";
  return import_model_proto(model, model_dir, options);
}

graph::Graph import_model(const std::string& path, const ImportOptions& options) {
  try {
    std::error_code ec;
    TESSEL_USER_CHECK(fs::exists(path, ec), Span{}) << "no such file";
    // A folder reads as nothing, a FIFO would block forever.
    TESSEL_USER_CHECK(fs::is_regular_file(path, ec), Span{}) << "not a regular file";
    std::ifstream in(path, std::ios::binary);
    TESSEL_USER_CHECK(in.good(), Span{}) << "cannot open file";
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    TESSEL_USER_CHECK(!bytes.empty(), Span{}) << "the file is empty";
    return import_model_bytes(bytes, fs::path(path).parent_path().string(), options);
  } catch (const UserError& e) {
    throw UserError(path + ": " + e.what());
  }
}

std::pair<std::string, Dims> parse_input_shape(const std::string& spec) {
  size_t eq = spec.rfind('=');
  TESSEL_USER_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(), Span{})
      << "--input-shape '" << spec << "' must look like name=1x3x224x224";
  Dims dims;
  std::string_view rest(spec.data() + eq + 1, spec.size() - eq - 1);
  while (true) {
    size_t x = rest.find('x');
    std::string_view part = rest.substr(0, x);
    int64_t d = -1;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    TESSEL_USER_CHECK(ec == std::errc() && end == part.data() + part.size() && d >= 0, Span{})
        << "--input-shape '" << spec << "': '" << part << "' is not a dimension";
    dims.push_back(d);
    if (x == std::string_view::npos) break;
    rest = rest.substr(x + 1);
  }
  return {spec.substr(0, eq), dims};
}

}  // namespace tessel::onnx_frontend
