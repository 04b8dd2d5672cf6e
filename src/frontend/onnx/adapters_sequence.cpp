// Sequences and optionals, resolved while importing: every sequence has a
// length the import knows and every position into one is known too (a
// constant, a graph input of known value, or an unrolled loop's iteration),
// so a sequence op becomes the tensor ops on its elements (SplitToSequence
// slices, ConcatFromSequence concatenates) or nothing at all (SequenceAt
// picks an element). What would need a length or a position decided by a run
// is refused by name.
#include <algorithm>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/tensor_proto.h"

namespace tessel::onnx_frontend {

using graph::Value;

// The most elements a sequence may have: each is a value of its own (and a
// SequenceMap inlines its body once per element).
constexpr size_t kMaxSequenceLength = size_t(1) << 16;

namespace {

const OnnxValue& sequence_input(AdaptContext& c, size_t i, const char* what) {
  TESSEL_USER_CHECK(i < c.onnx_inputs.size() && c.onnx_inputs[i].is_sequence(), c.span())
      << "input '" << what << "' must be a sequence, got "
      << (i < c.onnx_inputs.size() && c.onnx_inputs[i].given() ? c.onnx_inputs[i].describe() : "nothing");
  return c.onnx_inputs[i];
}

Value* tensor_input(AdaptContext& c, size_t i, const char* what) {
  TESSEL_USER_CHECK(i < c.onnx_inputs.size() && c.onnx_inputs[i].is_tensor(), c.span())
      << "input '" << what << "' must be a tensor, got " << c.onnx_inputs[i].describe();
  return c.required_input(i, what);
}

// Input i as a position into a sequence of n elements, `fallback` when
// omitted; negative positions count from the back. `end_ok`: n itself is
// valid (an insertion at the back).
int64_t position_input(AdaptContext& c, size_t i, int64_t fallback, int64_t n, bool end_ok) {
  int64_t pos = fallback;
  if (c.input_or_null(i)) {
    const Tensor* t = c.constant_input(i);
    TESSEL_USER_CHECK(t != nullptr && t->numel() == 1 && !is_float(t->dtype()), c.span())
        << "needs its position known while compiling (a constant or a graph input of known value), as one "
           "integer: Tessel resolves sequences while compiling";
    pos = t->get_i64(0);
  }
  int64_t resolved = pos < 0 ? pos + n : pos;
  TESSEL_USER_CHECK(resolved >= 0 && (resolved < n || (end_ok && resolved == n)), c.span())
      << "position " << pos << " is outside a sequence of " << n << " elements";
  return resolved;
}

void check_element(AdaptContext& c, const OnnxValue& seq, const Value* t) {
  TESSEL_USER_CHECK(t->type.dtype == seq.element_dtype, c.span())
      << "a " << dtype_name(t->type.dtype) << " tensor cannot join a sequence of "
      << dtype_name(seq.element_dtype) << " tensors";
}

void adapt_sequence_empty(AdaptContext& c) {
  int64_t onnx_type = c.int_attr("dtype", 1);
  std::optional<DType> dtype = dtype_from_onnx(int(onnx_type));
  TESSEL_USER_CHECK(dtype.has_value(), c.span()) << "unsupported element type " << onnx_type;
  c.structured_results = {OnnxValue::sequence({}, *dtype)};
}

void adapt_sequence_construct(AdaptContext& c) {
  std::vector<Value*> elements;
  for (size_t i = 0; i < c.onnx_inputs.size(); ++i) elements.push_back(tensor_input(c, i, "inputs"));
  TESSEL_USER_CHECK(!elements.empty(), c.span()) << "needs at least one tensor";
  OnnxValue seq = OnnxValue::sequence({}, elements[0]->type.dtype);
  for (Value* e : elements) check_element(c, seq, e);
  seq.elements = elements;
  c.structured_results = {seq};
}

void adapt_sequence_at(AdaptContext& c) {
  const OnnxValue& seq = sequence_input(c, 0, "input_sequence");
  int64_t pos = position_input(c, 1, 0, int64_t(seq.elements.size()), false);
  c.structured_results = {OnnxValue::of(seq.elements[size_t(pos)])};
}

void adapt_sequence_insert(AdaptContext& c) {
  OnnxValue seq = sequence_input(c, 0, "input_sequence");
  Value* t = tensor_input(c, 1, "tensor");
  check_element(c, seq, t);
  int64_t n = int64_t(seq.elements.size());
  int64_t pos = position_input(c, 2, n, n, true);
  seq.elements.insert(seq.elements.begin() + pos, t);
  c.structured_results = {seq};
}

void adapt_sequence_erase(AdaptContext& c) {
  OnnxValue seq = sequence_input(c, 0, "input_sequence");
  int64_t n = int64_t(seq.elements.size());
  int64_t pos = position_input(c, 1, n - 1, n, false);
  seq.elements.erase(seq.elements.begin() + pos);
  c.structured_results = {seq};
}

void adapt_sequence_length(AdaptContext& c) {
  const OnnxValue& seq = sequence_input(c, 0, "input_sequence");
  c.structured_results = {OnnxValue::of(c.constant(Tensor::from_i64({int64_t(seq.elements.size())}, {})))};
}

void check_length(AdaptContext& c, uint64_t pieces) {
  TESSEL_USER_CHECK(pieces <= kMaxSequenceLength, c.span())
      << "splits into " << pieces << " tensors, more than a sequence may hold (" << kMaxSequenceLength << ")";
}

// The sizes SplitToSequence cuts an axis of extent `extent` into.
std::vector<int64_t> split_sizes(AdaptContext& c, int64_t extent) {
  if (!c.input_or_null(1)) {
    check_length(c, uint64_t(extent));
    return std::vector<int64_t>(size_t(extent), 1);
  }
  const Tensor* split = c.constant_input(1);
  TESSEL_USER_CHECK(split != nullptr && split->shape().size() <= 1, c.span())
      << "needs 'split' known while compiling, as a scalar or a list";
  std::vector<int64_t> sizes;
  if (split->shape().empty()) {
    int64_t chunk = split->get_i64(0);
    TESSEL_USER_CHECK(chunk > 0, c.span()) << "a split of " << chunk << " (it must be positive)";
    check_length(c, uint64_t(extent / chunk + (extent % chunk != 0)));
    for (int64_t start = 0; start < extent; start += chunk) sizes.push_back(std::min(chunk, extent - start));
    return sizes;
  }
  check_length(c, uint64_t(split->numel()));
  int64_t total = 0;
  for (int64_t i = 0; i < split->numel(); ++i) {
    sizes.push_back(split->get_i64(i));
    TESSEL_USER_CHECK(sizes.back() >= 0 && sizes.back() <= extent, c.span())
        << "a split size of " << sizes.back() << " for an axis of " << extent;
    total += sizes.back();
  }
  TESSEL_USER_CHECK(total == extent, c.span())
      << "the split sizes add up to " << total << ", the axis has " << extent;
  return sizes;
}

void adapt_split_to_sequence(AdaptContext& c) {
  Value* input = tensor_input(c, 0, "input");
  int64_t rank = input->type.rank();
  int64_t axis = c.normalized_axis(c.int_attr("axis", 0), rank);
  int64_t extent = c.static_dim(input, axis, "the split axis");
  bool squeeze = !c.input_or_null(1) && c.int_attr("keepdims", 1) == 0;
  std::vector<int64_t> sizes = split_sizes(c, extent);
  OnnxValue seq = OnnxValue::sequence({}, input->type.dtype);
  int64_t start = 0;
  for (int64_t size : sizes) {
    Value* piece = c.emit(
        "Slice", {input, c.i64_vector({start}), c.i64_vector({start + size}), c.i64_vector({axis})})[0];
    if (squeeze) piece = c.emit("Squeeze", {piece, c.i64_vector({axis})})[0];
    seq.elements.push_back(piece);
    start += size;
  }
  c.structured_results = {seq};
}

void adapt_concat_from_sequence(AdaptContext& c) {
  const OnnxValue& seq = sequence_input(c, 0, "input_sequence");
  TESSEL_USER_CHECK(!seq.elements.empty(), c.span()) << "cannot concatenate an empty sequence";
  TESSEL_USER_CHECK(c.attrs.find("axis") != nullptr, c.span()) << "needs the attribute 'axis'";
  bool new_axis = c.int_attr("new_axis", 0) != 0;
  int64_t rank = seq.elements[0]->type.rank();
  int64_t axis = c.normalized_axis(c.int_attr("axis", 0), new_axis ? rank + 1 : rank);
  std::vector<Value*> parts;
  for (Value* e : seq.elements)
    parts.push_back(new_axis ? c.emit("Unsqueeze", {e, c.i64_vector({axis})})[0] : e);
  Value* joined =
      parts.size() == 1 ? c.emit("Identity", parts)[0] : c.emit("Concat", parts, one_attr("axis", axis))[0];
  c.structured_results = {OnnxValue::of(joined)};
}

// SequenceMap: the body inlined once per position, each sequence input giving
// it that position's element and each tensor input itself.
void adapt_sequence_map(AdaptContext& c) {
  size_t n = sequence_input(c, 0, "input_sequence").elements.size();
  TESSEL_USER_CHECK(n > 0, c.span()) << "maps an empty sequence: its outputs' element types are not known";
  for (const OnnxValue& in : c.onnx_inputs)
    TESSEL_USER_CHECK(!in.is_sequence() || in.elements.size() == n, c.span())
        << "its sequences have " << n << " and " << in.elements.size() << " elements";
  std::vector<OnnxValue> outputs;
  for (size_t i = 0; i < n; ++i) {
    std::vector<OnnxValue> inputs;
    for (const OnnxValue& in : c.onnx_inputs)
      inputs.push_back(in.is_sequence() ? OnnxValue::of(in.elements[i]) : in);
    std::vector<OnnxValue> results = c.inline_subgraph_values("body", inputs);
    TESSEL_USER_CHECK(results.size() == c.output_names.size(), c.span())
        << "its body returns " << results.size() << " values for " << c.output_names.size() << " outputs";
    for (size_t k = 0; k < results.size(); ++k) {
      TESSEL_USER_CHECK(results[k].is_tensor(), c.span())
          << "its body's output " << k << " is " << results[k].describe() << ", not a tensor";
      if (i == 0) outputs.push_back(OnnxValue::sequence({}, results[k].tensor->type.dtype));
      outputs[k].elements.push_back(results[k].tensor);
    }
  }
  c.structured_results = outputs;
}

void adapt_optional(AdaptContext& c) {
  if (c.onnx_inputs.empty() || !c.onnx_inputs[0].given()) {
    c.structured_results = {OnnxValue::optional(nullptr)};
    return;
  }
  TESSEL_USER_CHECK(!c.onnx_inputs[0].is_optional(), c.span()) << "cannot hold an optional";
  c.structured_results = {OnnxValue::optional(&c.onnx_inputs[0])};
}

void adapt_optional_has_element(AdaptContext& c) {
  bool has = !c.onnx_inputs.empty() && c.onnx_inputs[0].given();
  if (has && c.onnx_inputs[0].is_optional()) has = c.onnx_inputs[0].content != nullptr;
  c.structured_results = {OnnxValue::of(c.constant(Tensor::scalar_f64(DType::kBool, has ? 1 : 0)))};
}

void adapt_optional_get_element(AdaptContext& c) {
  TESSEL_USER_CHECK(!c.onnx_inputs.empty() && c.onnx_inputs[0].given(), c.span()) << "needs an input";
  const OnnxValue& in = c.onnx_inputs[0];
  if (!in.is_optional()) {
    c.structured_results = {in};
    return;
  }
  TESSEL_USER_CHECK(in.content != nullptr, c.span()) << "reads an empty optional";
  c.structured_results = {*in.content};
}

void adapt_identity(AdaptContext& c) {
  c.structured_results = {c.onnx_inputs.at(0)};
}

}  // namespace

const AdapterTable& structured_adapters() {
  static const AdapterTable table = [] {
    AdapterTable t;
    t["SequenceEmpty"] = adapt_sequence_empty;
    t["SequenceConstruct"] = adapt_sequence_construct;
    t["SequenceAt"] = adapt_sequence_at;
    t["SequenceInsert"] = adapt_sequence_insert;
    t["SequenceErase"] = adapt_sequence_erase;
    t["SequenceLength"] = adapt_sequence_length;
    t["SplitToSequence"] = adapt_split_to_sequence;
    t["ConcatFromSequence"] = adapt_concat_from_sequence;
    t["SequenceMap"] = adapt_sequence_map;
    t["Optional"] = adapt_optional;
    t["OptionalHasElement"] = adapt_optional_has_element;
    t["OptionalGetElement"] = adapt_optional_get_element;
    t["Identity"] = adapt_identity;
    return t;
  }();
  return table;
}

bool AdaptContext::any_structured_input() const {
  return std::any_of(onnx_inputs.begin(), onnx_inputs.end(),
                     [](const OnnxValue& v) { return !v.is_tensor(); });
}

}  // namespace tessel::onnx_frontend
