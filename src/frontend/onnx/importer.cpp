// The ONNX importer's entry points and the checks of a model and of each node
// against ONNX's schemas; graph_importer.cpp imports the graphs themselves.
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
#include "src/frontend/onnx/importer_internal.h"
#include "src/frontend/onnx/qdq_fold.h"
#include "src/frontend/onnx/tensor_proto.h"
#include "src/passes/fold_constants.h"

namespace tessel::onnx_frontend {

namespace fs = std::filesystem;

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

bool is_supported(const onnx::NodeProto& n) {
  if (is_default_domain(n.domain())) return imports_op(n.op_type());
  const AdapterTable* table = domain_adapters(n.domain());
  return table && table->count(n.op_type()) > 0;
}

// The opset the model imports of `domain` ("" the default one); -1 when none.
int imported_opset(const onnx::ModelProto& m, const std::string& domain) {
  int version = -1;
  for (const auto& o : m.opset_import())
    if (domain.empty() ? is_default_domain(o.domain()) : o.domain() == domain) version = int(o.version());
  return version;
}

bool uses_default_domain(const onnx::GraphProto& g) {
  for (const onnx::NodeProto& n : g.node()) {
    if (is_default_domain(n.domain())) return true;
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.has_g() && uses_default_domain(a.g())) return true;
  }
  return false;
}

// Each node of another domain than the default one is of a domain the model
// imports, an ai.onnx.ml node one that exists at the imported opset.
void check_domain_opsets(const onnx::GraphProto& g, const onnx::ModelProto& m) {
  for (const onnx::NodeProto& n : g.node()) {
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.has_g()) check_domain_opsets(a.g(), m);
    if (is_default_domain(n.domain())) continue;
    Span span{n.name(), n.op_type()};
    int opset = imported_opset(m, n.domain());
    TESSEL_USER_CHECK(opset >= 1, span)
        << "the model uses domain " << n.domain() << " but does not import it";
    if (n.domain() != kMlDomain) continue;
    TESSEL_USER_CHECK(opset >= ml_op_since(n.op_type()), span)
        << "op " << n.op_type() << " does not exist at " << kMlDomain << " opset " << opset
        << " (it was added in opset " << ml_op_since(n.op_type()) << ")";
  }
}

// A model of an opset before kMinOpset whose every default-domain op is the
// same version there as at kMinOpset means what it would at kMinOpset, and is
// read as such; a node whose op changed since (Add's broadcast attribute,
// BatchNormalization's spatial) is refused, naming it.
void check_unchanged_since(const onnx::GraphProto& g, int opset) {
  for (const onnx::NodeProto& n : g.node()) {
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.has_g()) check_unchanged_since(a.g(), opset);
    if (!is_default_domain(n.domain()) || n.op_type() == "Constant") continue;
    const onnx::OpSchema* old = onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "");
    const onnx::OpSchema* now = onnx::OpSchemaRegistry::Schema(n.op_type(), kMinOpset, "");
    TESSEL_USER_CHECK(old && now && old->SinceVersion() == now->SinceVersion(), (Span{n.name(), n.op_type()}))
        << "opset " << opset << " is before the supported ones (" << kMinOpset << " to " << kMaxOpset
        << "), and " << n.op_type()
        << (old ? " there is version " + std::to_string(old->SinceVersion()) : " does not exist there")
        << (now ? ", which changed by opset " + std::to_string(kMinOpset) : "")
        << ": convert the model to a newer opset (onnx.version_converter)";
  }
}

bool imports_op(const std::string& op) {
  return op == "Constant" || adapters().count(op) || structured_adapters().count(op) ||
         graph::OpRegistry::global().find(op) != nullptr;
}

int default_opset(const onnx::ModelProto& m) {
  int opset = imported_opset(m, "");
  // A model of ai.onnx.ml or training operators alone: their compositions are
  // graph ops, which no opset-dependent adapter of the default domain sees.
  bool other_domains = false;
  for (const auto& o : m.opset_import()) other_domains |= domain_adapters(o.domain()) != nullptr;
  if (opset < 0 && other_domains && !uses_default_domain(m.graph())) return kMaxOpset;
  TESSEL_USER_CHECK(opset >= 0, Span{}) << "the model imports no opset of the default ONNX domain";
  if (opset >= 1 && opset < kMinOpset) {
    check_unchanged_since(m.graph(), opset);
    return kMinOpset;
  }
  TESSEL_USER_CHECK(opset >= kMinOpset && opset <= kMaxOpset, Span{})
      << "opset " << opset << " is not supported (supported: " << kMinOpset << " to " << kMaxOpset << ")";
  return opset;
}

// The unsupported ops of g and of the subgraphs of its nodes, by op.
void collect_unsupported(const onnx::GraphProto& g,
                         std::map<std::string, std::vector<std::string>>& unsupported) {
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.has_g()) collect_unsupported(a.g(), unsupported);
    if (is_supported(n)) continue;
    std::string op = is_default_domain(n.domain()) ? n.op_type() : n.domain() + "." + n.op_type();
    unsupported[op].push_back(n.name().empty() ? "#" + std::to_string(i) : n.name());
  }
}

void check_model(const onnx::ModelProto& m) {
  TESSEL_USER_CHECK(m.has_ir_version() && m.has_graph(), Span{})
      << "not an ONNX model (no IR version or no graph)";
  TESSEL_USER_CHECK(m.ir_version() >= kMinIrVersion && m.ir_version() <= kMaxIrVersion, Span{})
      << "IR version " << m.ir_version() << " is not supported (supported: " << kMinIrVersion
      << " to " << kMaxIrVersion << ")";
  std::map<std::string, std::vector<std::string>> unsupported;
  collect_unsupported(m.graph(), unsupported);
  if (unsupported.empty()) return check_domain_opsets(m.graph(), m);
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
// release; beyond that a newer version may take more inputs or attributes,
// so only the types of the attributes it knows and the fewest inputs are
// checked.
// Subgraph attributes are not converted (the adapter imports them).
bool has_subgraph(const onnx::NodeProto& n, const std::string& attr) {
  return std::any_of(n.attribute().begin(), n.attribute().end(),
                     [&](const onnx::AttributeProto& a) { return a.name() == attr && a.has_g(); });
}

// The fewest inputs a node takes past the ONNX library's opsets, where a
// newer version made an input optional (OptionalHasElement-18 reads an
// omitted input as an empty optional).
int fewest_inputs(const onnx::OpSchema& s, const std::string& op, int opset) {
  if (op == "OptionalHasElement" && opset >= 18) return 0;
  return s.min_input();
}

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
  if (opset > newest) {
    int fewest = fewest_inputs(*s, n.op_type(), opset);
    TESSEL_USER_CHECK(n.input_size() >= fewest, span)
        << "expects at least " << fewest << " inputs, got " << n.input_size();
    return;
  }
  for (const auto& [name, spec] : s->attributes())
    TESSEL_USER_CHECK(!spec.required || attrs.has(name) || has_subgraph(n, name), span)
        << "missing required attribute '" << name << "'";
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

void infer_and_fold(graph::Node& node, bool fold) {
  graph::infer_node(node);
  if (fold) passes::fold_node(node);
}

graph::Graph import_model_proto(const onnx::ModelProto& model, const std::string& model_dir,
                                const ImportOptions& options) {
  check_model(model);
  int opset = default_opset(model);
  if (options.fold_qdq && has_quantize_linear(model.graph())) {
    onnx::GraphProto folded = model.graph();
    fold_qdq(folded, opset, model_dir);
    return import_main_graph(folded, opset, model_dir, options);
  }
  return import_main_graph(model.graph(), opset, model_dir, options);
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
