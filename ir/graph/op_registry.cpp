// Op schemas: validation, the infer context, and the global registry.
#include "ir/graph/op_registry.h"

#include <set>

#include "ir/graph/ops/register.h"

namespace tessel::graph {

std::string_view op_pattern_name(OpPattern p) {
  switch (p) {
    case OpPattern::kElemwise: return "elemwise";
    case OpPattern::kBroadcast: return "broadcast";
    case OpPattern::kInjective: return "injective";
    case OpPattern::kReduce: return "reduce";
    case OpPattern::kOutElemwiseFusable: return "out-elemwise-fusable";
    case OpPattern::kOpaque: return "opaque";
  }
  return "?";
}

InferContext::InferContext(const Node& node, std::vector<const TensorType*> types,
                           std::vector<const Tensor*> values)
    : output_types(node.outputs.size()),
      output_values(node.outputs.size()),
      node_(node),
      types_(std::move(types)),
      values_(std::move(values)) {}

const TensorType& InferContext::input(size_t i) const {
  TESSEL_USER_CHECK(has_input(i), span()) << "missing required input " << i;
  return *types_[i];
}

std::optional<std::vector<int64_t>> InferContext::int_values(size_t i) const {
  const Tensor* t = value(i);
  if (t == nullptr) return std::nullopt;
  TESSEL_USER_CHECK(is_integer(t->dtype()), span())
      << "input " << i << " must be an integer tensor, got " << dtype_name(t->dtype());
  return t->to_i64_vector();
}

void InferContext::set_output(size_t i, TensorType type) {
  TESSEL_ICHECK(i < output_types.size()) << "output " << i << " of " << node_.op;
  output_types[i] = std::move(type);
}

void InferContext::set_output_value(size_t i, Tensor value) {
  set_output(i, TensorType(value.dtype(), value.shape()));
  output_values[i] = std::move(value);
}

const AttrSpec* OpSchema::find_attr(const std::string& attr) const {
  for (const AttrSpec& a : attrs)
    if (a.name == attr) return &a;
  return nullptr;
}

void OpSchema::validate(Node& node) const {
  int n_in = int(node.inputs.size());
  while (n_in > 0 && node.inputs[size_t(n_in - 1)] == nullptr) --n_in;  // trailing omitted
  TESSEL_USER_CHECK(n_in >= min_inputs && n_in <= max_inputs, node.span())
      << "expects " << min_inputs << (max_inputs != min_inputs ? " to " + std::to_string(max_inputs) : "")
      << " inputs, got " << n_in;
  for (int i = 0; i < min_inputs; ++i)
    TESSEL_USER_CHECK(node.inputs[size_t(i)] != nullptr, node.span()) << "required input " << i << " is missing";
  int n_out = int(node.outputs.size());
  TESSEL_USER_CHECK(n_out >= min_outputs && n_out <= max_outputs, node.span())
      << "expects " << min_outputs << (max_outputs != min_outputs ? " to " + std::to_string(max_outputs) : "")
      << " outputs, got " << n_out;
  for (const auto& [attr_name, value] : node.attrs.all()) {
    const AttrSpec* spec = find_attr(attr_name);
    TESSEL_USER_CHECK(spec != nullptr, node.span()) << "unsupported attribute '" << attr_name << "'";
    TESSEL_USER_CHECK(attr_type_of(value) == spec->type, node.span())
        << "attribute '" << attr_name << "' must be of type " << attr_type_name(spec->type)
        << ", got " << attr_type_name(attr_type_of(value));
  }
  for (const AttrSpec& spec : attrs) {
    if (node.attrs.has(spec.name)) continue;
    TESSEL_USER_CHECK(spec.default_value.has_value(), node.span())
        << "missing required attribute '" << spec.name << "'";
    node.attrs.set(spec.name, *spec.default_value);
  }
}

OpDef& OpDef::attr(std::string name, AttrType type, std::optional<AttrValue> def) {
  s_.attrs.push_back({std::move(name), type, std::move(def)});
  return *this;
}

OpDef OpRegistry::def(const std::string& name, OpPattern pattern) {
  TESSEL_ICHECK(!schemas_.count(name)) << "op " << name << " registered twice";
  OpSchema& s = schemas_[name];
  s.name = name;
  s.pattern = pattern;
  return OpDef(s);
}

const OpSchema* OpRegistry::find(const std::string& name) const {
  auto it = schemas_.find(name);
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, s] : schemas_) out.push_back(name);
  return out;
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    ops::register_all(r);
    return r;
  }();
  return registry;
}

InferContext run_shape_function(const Node& node) {
  const OpSchema* schema = OpRegistry::global().find(node.op);
  TESSEL_USER_CHECK(schema != nullptr, node.span()) << "unsupported op '" << node.op << "'";
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> values;
  for (Value* in : node.inputs) {
    types.push_back(in ? &in->type : nullptr);
    values.push_back(in && in->constant ? &*in->constant : nullptr);
  }
  InferContext ctx(node, std::move(types), std::move(values));
  TESSEL_ICHECK(schema->infer != nullptr) << "op " << node.op << " has no shape function";
  schema->infer(ctx);
  return ctx;
}

OpPattern pattern_of(const Node& node) {
  const OpSchema* schema = OpRegistry::global().find(node.op);
  return schema ? schema->pattern : OpPattern::kOpaque;
}

namespace {

// The storage-only types are cast and moved, never computed on: an op that
// would read their codes as numbers is refused rather than run on bits.
void check_storage_only_inputs(const Node& node) {
  static const std::set<std::string> kMovesOrCasts = {
      "Cast",  "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat",
      "Split", "Slice",    "Gather",  "Expand",  "Tile",    "Shape",     "Size",      "Dropout"};
  if (kMovesOrCasts.count(node.op)) return;
  for (const Value* in : node.inputs)
    TESSEL_USER_CHECK(!in || !is_small(in->type.dtype), node.span())
        << node.op << " does not compute on " << dtype_name(in->type.dtype) << " tensors; Cast them first";
}

}  // namespace

void infer_node(Node& node) {
  const OpSchema* schema = OpRegistry::global().find(node.op);
  TESSEL_USER_CHECK(schema != nullptr, node.span()) << "unsupported op '" << node.op << "'";
  check_storage_only_inputs(node);
  schema->validate(node);
  InferContext ctx = run_shape_function(node);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    node.outputs[i]->type = ctx.output_types[i];
    if (ctx.output_values[i]) node.outputs[i]->constant = std::move(ctx.output_values[i]);
  }
}

int64_t node_flops(const Node& node) {
  const OpSchema* s = OpRegistry::global().find(node.op);
  return s && s->flops ? s->flops(node) : 0;
}

}  // namespace tessel::graph
