// The adapter table and the helpers adapters share.
#include "src/frontend/onnx/adapters.h"

#include "ir/graph/op_registry.h"
#include "src/frontend/onnx/tensor_proto.h"
#include "src/reference/executor.h"

namespace tessel::onnx_frontend {

graph::Value* AdaptContext::constant(Tensor t) {
  return graph.add_constant(graph.unique_name(name + "/const"), std::move(t));
}

void AdaptContext::set_input(size_t pos, graph::Value* v) {
  if (inputs.size() <= pos) inputs.resize(pos + 1, nullptr);
  inputs[pos] = v;
}

void AdaptContext::attr_to_input(const std::string& attr, size_t pos, DType dtype) {
  const graph::AttrValue* v = attrs.find(attr);
  if (v == nullptr) return;
  Tensor t;
  if (auto* ints = std::get_if<std::vector<int64_t>>(v)) {
    t = Tensor(dtype, {int64_t(ints->size())});
    for (size_t i = 0; i < ints->size(); ++i) t.set_i64(int64_t(i), (*ints)[i]);
  } else if (auto* floats = std::get_if<std::vector<double>>(v)) {
    t = Tensor(dtype, {int64_t(floats->size())});
    for (size_t i = 0; i < floats->size(); ++i) t.set_f64(int64_t(i), (*floats)[i]);
  } else if (auto* f = std::get_if<double>(v)) {
    t = Tensor::scalar_f64(dtype, *f);
  } else if (auto* n = std::get_if<int64_t>(v)) {
    t = Tensor(dtype, {});
    t.set_i64(0, *n);
  } else {
    TESSEL_USER_ERROR(span()) << "attribute '" << attr << "' has an unexpected type";
  }
  attrs.erase(attr);
  set_input(pos, constant(std::move(t)));
}

std::vector<graph::Value*> AdaptContext::emit(const std::string& helper_op,
                                              std::vector<graph::Value*> helper_inputs,
                                              graph::Attrs helper_attrs, int num_outputs) {
  std::vector<std::string> names;
  for (int i = 0; i < num_outputs; ++i) names.push_back(graph.unique_name(name + "/" + helper_op));
  graph::Node* n = graph.add_node(helper_op, graph.unique_name(name + "/" + helper_op),
                                  std::move(helper_inputs), names, std::move(helper_attrs));
  infer_and_fold(*n, fold_constants);
  return n->outputs;
}

namespace {

// v's value where constants and the known graph inputs determine it through
// at most kDepth small nodes, evaluated by the reference executor (the
// importer has already inferred their types).
std::optional<Tensor> known_value(const graph::Value* v,
                                  const std::unordered_map<const graph::Value*, Tensor>& known, int depth) {
  constexpr int kDepth = 16;
  constexpr int64_t kLargest = 1 << 16;  // elements of a value worth evaluating here
  if (v->is_constant()) return *v->constant;
  if (auto it = known.find(v); it != known.end()) return it->second;
  const graph::Node* n = v->producer;
  std::optional<int64_t> elements = v->type.numel();
  if (!n || depth >= kDepth || !elements || *elements > kLargest) return std::nullopt;
  std::vector<Tensor> held;
  held.reserve(n->inputs.size());
  for (const graph::Value* in : n->inputs) {
    if (!in) {
      held.emplace_back();
      continue;
    }
    std::optional<Tensor> value = known_value(in, known, depth + 1);
    if (!value) return std::nullopt;
    held.push_back(std::move(*value));
  }
  std::vector<const Tensor*> args;
  for (size_t k = 0; k < n->inputs.size(); ++k) args.push_back(n->inputs[k] ? &held[k] : nullptr);
  return std::move(reference::evaluate_node(*n, args)[size_t(v->producer_output)]);
}

}  // namespace

const Tensor* AdaptContext::constant_input(size_t i) {
  graph::Value* v = input_or_null(i);
  if (v == nullptr) return nullptr;
  if (v->is_constant()) return &*v->constant;
  if (known_inputs == nullptr) return nullptr;
  std::optional<Tensor> value = known_value(v, *known_inputs, 0);
  if (!value) return nullptr;
  inputs[i] = constant(std::move(*value));
  return &*inputs[i]->constant;
}

graph::Value* AdaptContext::required_input(size_t i, const char* what) const {
  graph::Value* v = input_or_null(i);
  TESSEL_USER_CHECK(v != nullptr, span()) << "required input " << i << " (" << what << ") is missing";
  return v;
}

int64_t AdaptContext::int_attr(const char* attr, int64_t fallback) const {
  const graph::AttrValue* v = attrs.find(attr);
  if (!v) return fallback;
  const int64_t* i = std::get_if<int64_t>(v);
  TESSEL_USER_CHECK(i != nullptr, span()) << "attribute '" << attr << "' must be an int";
  return *i;
}

std::vector<int64_t> AdaptContext::ints_attr(const char* attr, std::vector<int64_t> fallback) const {
  const graph::AttrValue* v = attrs.find(attr);
  if (!v) return fallback;
  const auto* ints = std::get_if<std::vector<int64_t>>(v);
  TESSEL_USER_CHECK(ints != nullptr, span()) << "attribute '" << attr << "' must be a list of ints";
  return *ints;
}

double AdaptContext::float_attr(const char* attr, double fallback) const {
  const graph::AttrValue* v = attrs.find(attr);
  if (!v) return fallback;
  const double* f = std::get_if<double>(v);
  TESSEL_USER_CHECK(f != nullptr, span()) << "attribute '" << attr << "' must be a float";
  return *f;
}

std::string AdaptContext::string_attr(const char* attr, const std::string& fallback) const {
  const graph::AttrValue* v = attrs.find(attr);
  if (!v) return fallback;
  const std::string* s = std::get_if<std::string>(v);
  TESSEL_USER_CHECK(s != nullptr, span()) << "attribute '" << attr << "' must be a string";
  return *s;
}

DType AdaptContext::float_type_attr(const char* attr, DType fallback) const {
  if (!attrs.find(attr)) return fallback;
  std::optional<DType> t = dtype_from_onnx(int(int_attr(attr, 0)));
  TESSEL_USER_CHECK(t.has_value() && is_float(*t), span())
      << "attribute '" << attr << "' must name a float type";
  return *t;
}

graph::Value* AdaptContext::i64_vector(const std::vector<int64_t>& values) {
  return constant(Tensor::from_i64(values, {int64_t(values.size())}));
}

graph::Value* AdaptContext::positions_along(int64_t rank, int64_t axis, int64_t n) {
  Dims shape(size_t(rank), 1);
  shape[size_t(axis)] = n;
  Tensor t(DType::kI64, shape);
  for (int64_t i = 0; i < n; ++i) t.set_i64(i, i);
  return constant(std::move(t));
}

int64_t AdaptContext::normalized_axis(int64_t axis, int64_t rank, const char* what) const {
  TESSEL_USER_CHECK(axis >= -rank && axis < rank, span())
      << what << " " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

graph::Value* AdaptContext::cast(graph::Value* v, DType to) {
  if (v->type.dtype == to) return v;
  graph::Attrs a;
  a.set("to", std::string(dtype_name(to)));
  return emit("Cast", {v}, std::move(a))[0];
}

graph::Value* AdaptContext::scalar(DType t, double v) {
  return constant(Tensor::scalar_f64(t, v));
}

graph::Value* AdaptContext::transpose(graph::Value* v, std::vector<int64_t> perm) {
  return emit("Transpose", {v}, one_attr("perm", std::move(perm)))[0];
}

int64_t AdaptContext::static_dim(const graph::Value* v, int64_t d, const char* what) const {
  const graph::TensorType& t = v->type;
  TESSEL_USER_CHECK(t.rank_known, span()) << what << " needs a known rank, got " << t.str();
  if (d < 0) d += t.rank();
  TESSEL_USER_CHECK(d >= 0 && d < t.rank() && t.dims[size_t(d)].is_known(), span())
      << what << " needs a static dimension " << d << ", got " << t.str();
  return t.dims[size_t(d)].value;
}

graph::Value* AdaptContext::data_dependent(graph::Value* padded, int64_t axis, graph::Value* size) {
  int64_t bound = static_dim(padded, axis, "a data-dependent output");
  if (size->is_constant()) {
    int64_t n = size->constant->get_i64(0);
    TESSEL_ICHECK(n >= 0 && n <= bound) << "size " << n << " of a data-dependent extent of " << bound;
    if (n == bound) return padded;
    return emit("Slice", {padded, i64_vector({0}), i64_vector({n}), i64_vector({axis})})[0];
  }
  if (bound == 0) return padded;  // nothing for a run to decide
  TESSEL_ICHECK(extents != nullptr) << "no table of data-dependent extents in " << name;
  (*extents)[padded] = RuntimeExtent{axis, size, op + " '" + name + "'"};
  return padded;
}

graph::Attrs one_attr(const char* name, graph::AttrValue v) {
  graph::Attrs a;
  a.set(name, std::move(v));
  return a;
}

const AdapterTable& adapters() {
  static const AdapterTable table = [] {
    AdapterTable t;
    register_elementwise_adapters(t);
    register_nn_adapters(t);
    register_reduce_adapters(t);
    register_shape_adapters(t);
    register_recurrent_adapters(t);
    register_control_adapters(t);
    register_state_space_adapters(t);
    register_reorder_adapters(t);
    register_data_dependent_adapters(t);
    register_einsum_adapter(t);
    register_grid_sample_adapter(t);
    register_channel_norm_adapters(t);
    register_spectral_adapters(t);
    register_deform_conv_adapter(t);
    register_roi_align_adapter(t);
    register_max_roi_pool_adapter(t);
    register_tfidf_adapter(t);
    register_movement_adapters(t);
    register_loss_adapters(t);
    register_composite_adapters(t);
    register_transformer_adapters(t);
    register_resize_adapters(t);
    register_quantize_adapters(t);
    register_generator_adapters(t);
    return t;
  }();
  return table;
}

}  // namespace tessel::onnx_frontend
