// How the importer names and finds values: tensors in the graph IR,
// sequences and optionals as OnnxValues of the import, and the graph inputs
// and outputs of sequence or optional type as the tensors they hold (an
// input sequence "x" of n elements is the graph inputs "x[0]" ... "x[n-1]",
// its length given by ImportOptions::sequence_lengths).
#include "src/frontend/onnx/graph_importer.h"

#include "ir/graph/op_registry.h"
#include "src/frontend/onnx/importer_internal.h"

namespace tessel::onnx_frontend {

namespace {

// The most elements a sequence input may be given: each is a graph input.
constexpr int64_t kMaxSequenceInputLength = 1 << 16;

graph::TensorType element_type(const onnx::TypeProto& type, const std::string& name) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  *vi.mutable_type() = type;
  return type_from_value_info(vi);
}

}  // namespace

graph::Value* GraphImporter::lookup(const std::string& name, const std::string& node) {
  OnnxValue v = lookup_value(name, node);
  TESSEL_USER_CHECK(v.is_tensor(), (Span{node, ""}))
      << "reads '" << name << "', " << v.describe() << ", where a tensor is expected";
  return v.tensor;
}

OnnxValue GraphImporter::lookup_value(const std::string& name, const std::string& node) {
  if (auto it = structured_.find(name); it != structured_.end()) return it->second;
  if (auto it = values_.find(name); it != values_.end()) return OnnxValue::of(it->second);
  TESSEL_USER_CHECK(parent_ != nullptr, (Span{node, ""}))
      << "uses '" << name << "', which no earlier node, input or initializer defines";
  OnnxValue outer_value = parent_->lookup_value(name, node);
  if (scope_ == Scope::kInline && !outer_value.is_tensor()) return outer_value;
  TESSEL_USER_CHECK(outer_value.is_tensor(), (Span{node, ""}))
      << "a loop or scan body reads '" << name << "', " << outer_value.describe()
      << ", from outside: a body compiled as a loop takes only tensors from outside";
  graph::Value* outer = outer_value.tensor;
  TESSEL_USER_CHECK(!s_.extents.count(outer), (Span{node, ""}))
      << "a subgraph reads '" << name << "', whose extent only a run decides (an output of "
      << s_.extents.at(outer).origin << "); loop and branch bodies take only values of fixed shape";
  if (scope_ == Scope::kInline) return outer_value;
  graph::Value* inner;
  if (outer->is_constant()) {
    inner = g_.add_constant(name, *outer->constant);
  } else {
    inner = g_.add_input(name, outer->type);
    captured_.push_back(outer);
  }
  return OnnxValue::of(values_[name] = inner);
}

void GraphImporter::define(const std::string& name, graph::Value* v, const std::string& node) {
  TESSEL_USER_CHECK(!structured_.count(name) && values_.emplace(name, v).second, (Span{node, ""}))
      << "defines '" << name << "', which an earlier node, input or initializer already defines";
}

void GraphImporter::define_value(const std::string& name, const OnnxValue& v, const std::string& node) {
  if (v.is_tensor()) return define(name, v.tensor, node);
  for (const graph::Value* t : v.tensors())
    TESSEL_USER_CHECK(!s_.extents.count(t), (Span{node, ""}))
        << "puts '" << t->name << "', whose extent only a run decides (an output of "
        << s_.extents.at(t).origin << "), into " << v.describe() << ": sequences and optionals hold only "
        << "values of fixed shape";
  TESSEL_USER_CHECK(!values_.count(name) && structured_.emplace(name, v).second, (Span{node, ""}))
      << "defines '" << name << "', which an earlier node, input or initializer already defines";
}

void GraphImporter::import_structured_input(const onnx::ValueInfoProto& vi,
                                            std::map<std::string, Dims>& pending_shapes) {
  const std::string& name = vi.name();
  Span span{"", "input '" + name + "'"};
  auto sequence = [&](const onnx::TypeProto& type) {
    auto length = s_.options.sequence_lengths.find(name);
    TESSEL_USER_CHECK(length != s_.options.sequence_lengths.end(), Span{})
        << "input '" << name << "' is a sequence, and its type leaves its length open: give it "
        << "(--sequence-length " << name << "=N)";
    TESSEL_USER_CHECK(length->second >= 0 && length->second <= kMaxSequenceInputLength, span)
        << "a sequence length of " << length->second << " (0 to " << kMaxSequenceInputLength << ")";
    const onnx::TypeProto& elem = type.sequence_type().elem_type();
    TESSEL_USER_CHECK(elem.has_tensor_type(), span) << "only sequences of tensors are supported";
    graph::TensorType t = element_type(elem, name);
    OnnxValue seq = OnnxValue::sequence({}, t.dtype);
    for (int64_t k = 0; k < length->second; ++k)
      seq.elements.push_back(add_tensor_input(name + "[" + std::to_string(k) + "]", t, pending_shapes));
    return seq;
  };
  if (vi.type().has_sequence_type()) {
    structured_[name] = sequence(vi.type());
    return;
  }
  const onnx::TypeProto& held = vi.type().optional_type().elem_type();
  TESSEL_USER_CHECK(held.has_tensor_type() || held.has_sequence_type(), span)
      << "only optionals of tensors or sequences are supported";
  if (s_.options.empty_optionals.count(name)) {
    structured_[name] = OnnxValue::optional(nullptr);
    return;
  }
  OnnxValue content = held.has_sequence_type()
                          ? sequence(held)
                          : OnnxValue::of(add_tensor_input(name, element_type(held, name), pending_shapes));
  structured_[name] = OnnxValue::optional(&content);
}

graph::Value* GraphImporter::named_copy(graph::Value* v, const std::string& name) {
  graph::Node* copy = g_.add_node("Identity", g_.unique_name(name), {v}, {name});
  graph::infer_node(*copy);
  return copy->outputs[0];
}

std::vector<graph::Value*> GraphImporter::main_outputs() {
  std::vector<graph::Value*> outputs;
  for (const auto& vi : proto_.output()) {
    auto it = structured_.find(vi.name());
    if (it == structured_.end()) {
      graph::Value* v = checked_output(vi);
      // An op that hands a tensor on unchanged (OptionalGetElement of a tensor
      // input, SequenceAt) leaves it under its earlier name.
      if (v->name != vi.name() && !s_.extents.count(v)) v = named_copy(v, vi.name());
      outputs.push_back(v);
      continue;
    }
    // Each tensor gets an Identity of the output's name for it: the same
    // tensor may be a graph input, another output or another element.
    std::vector<graph::Value*> tensors = it->second.tensors();
    std::vector<std::string> names = it->second.tensor_names(vi.name());
    for (size_t k = 0; k < tensors.size(); ++k) outputs.push_back(named_copy(tensors[k], names[k]));
  }
  return outputs;
}

void GraphImporter::check_fixed_shape(const OnnxValue& v, const char* what) {
  for (const graph::Value* t : v.tensors())
    TESSEL_USER_CHECK(!s_.extents.count(t), (Span{proto_.name(), "subgraph"}))
        << "returns '" << t->name << "', whose extent only a run decides (an output of "
        << s_.extents.at(t).origin << "); " << what << " return only values of fixed shape";
}

std::vector<OnnxValue> GraphImporter::subgraph_outputs() {
  std::vector<OnnxValue> outputs;
  for (const auto& vi : proto_.output()) {
    auto it = structured_.find(vi.name());
    outputs.push_back(it != structured_.end() ? it->second : OnnxValue::of(checked_output(vi)));
    check_fixed_shape(outputs.back(), "loop and branch bodies");
  }
  return outputs;
}

std::vector<OnnxValue> GraphImporter::import_inline(const std::vector<OnnxValue>& inputs) {
  import_initializers();
  std::vector<std::string> declared = declared_inputs(inputs.size());
  for (size_t i = 0; i < declared.size(); ++i) {
    if (inputs[i].is_tensor())
      values_[declared[i]] = inputs[i].tensor;
    else
      structured_[declared[i]] = inputs[i];
  }
  import_nodes();
  return subgraph_outputs();
}

}  // namespace tessel::onnx_frontend
