// The rules by which an op's result carries a data-dependent extent of its
// inputs (runtime_extents.h): for each op that may read such a value, the axis
// of its result that holds the data first.
#include "src/frontend/onnx/runtime_extents.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <string>

namespace tessel::onnx_frontend {

namespace {

const std::set<std::string>& unary_ops() {
  static const std::set<std::string> ops = {
      "Abs",       "Acos",     "Acosh",      "Asin",     "Asinh",
      "Atan",      "Atanh",    "BitwiseNot", "Cast",     "CastLike",
      "Ceil",      "Celu",     "Cos",        "Cosh",     "Elu",
      "Erf",       "Exp",      "Floor",      "Gelu",     "HardSigmoid",
      "HardSwish", "Identity", "IsInf",      "IsNaN",    "LeakyRelu",
      "Log",       "Mish",     "Neg",        "Not",      "Reciprocal",
      "Relu",      "Round",    "Selu",       "Shrink",   "Sigmoid",
      "Sign",      "Sin",      "Sinh",       "Softplus", "Softsign",
      "Sqrt",      "Swish",    "Tan",        "Tanh",     "ThresholdedRelu"};
  return ops;
}

const std::set<std::string>& broadcast_ops() {
  static const std::set<std::string> ops = {"Add",
                                            "And",
                                            "BitShift",
                                            "BitwiseAnd",
                                            "BitwiseOr",
                                            "BitwiseXor",
                                            "Clip",
                                            "Div",
                                            "Equal",
                                            "Greater",
                                            "GreaterOrEqual",
                                            "Less",
                                            "LessOrEqual",
                                            "Max",
                                            "Mean",
                                            "Min",
                                            "Mod",
                                            "Mul",
                                            "Or",
                                            "Pow",
                                            "PRelu",
                                            "Sub",
                                            "Sum",
                                            "Where",
                                            "Xor"};
  return ops;
}

const std::set<std::string>& reduce_ops() {
  static const std::set<std::string> ops = {"ReduceL1",  "ReduceL2",        "ReduceLogSum", "ReduceLogSumExp",
                                            "ReduceMax", "ReduceMean",      "ReduceMin",    "ReduceProd",
                                            "ReduceSum", "ReduceSumSquare", "ArgMax",       "ArgMin"};
  return ops;
}

// The node being carried through: its ONNX inputs and attributes.
struct Carry {
  AdaptContext& c;
  const std::vector<graph::Value*>& inputs;
  const graph::Attrs& attrs;
  const RuntimeExtents& extents;

  const RuntimeExtent* extent(size_t i) const {
    if (i >= inputs.size() || !inputs[i]) return nullptr;
    auto it = extents.find(inputs[i]);
    return it == extents.end() ? nullptr : &it->second;
  }
  int rank(size_t i) const { return inputs[i]->type.rank(); }
  int64_t int_attr(const char* name, int64_t fallback) const {
    const graph::AttrValue* v = attrs.find(name);
    return v && std::holds_alternative<int64_t>(*v) ? std::get<int64_t>(*v) : fallback;
  }
  // A list attribute, or else constant input `i`; nullopt when neither is given.
  std::optional<std::vector<int64_t>> ints(const char* attr, size_t i) const {
    if (const graph::AttrValue* v = attrs.find(attr); v && std::holds_alternative<std::vector<int64_t>>(*v))
      return std::get<std::vector<int64_t>>(*v);
    if (i < inputs.size() && inputs[i] && inputs[i]->is_constant())
      return inputs[i]->constant->to_i64_vector();
    if (i < inputs.size() && inputs[i]) refuse(i, "its " + std::string(attr) + " are computed at run time");
    return std::nullopt;
  }
  std::vector<int64_t> normalized(std::vector<int64_t> axes, int rank) const {
    for (int64_t& a : axes) a = c.normalized_axis(a, rank);
    return axes;
  }
  [[noreturn]] void refuse(size_t i, const std::string& why) const {
    const RuntimeExtent* e = extent(i);
    std::string which = e ? "'" + inputs[i]->name + "', whose extent along axis " + std::to_string(e->axis) +
                                " only a run decides (an output of " + e->origin + ")"
                          : "input " + std::to_string(i) + " '" + (inputs[i] ? inputs[i]->name : "") + "'";
    TESSEL_USER_ERROR(c.span()) << "cannot read " << which << ": " << why;
  }
};

constexpr int64_t kNone = -1;

// Elementwise with broadcasting: every data-dependent input at the same result
// axis with the same size, every other input of extent 1 there.
int64_t broadcast_axis(const Carry& k, int result_rank) {
  int64_t axis = kNone;
  graph::Value* size = nullptr;
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const RuntimeExtent* e = k.extent(i);
    if (!e) continue;
    int64_t at = result_rank - k.rank(i) + e->axis;
    if (axis != kNone && (at != axis || e->size != size))
      k.refuse(i, "it meets another tensor of data-dependent extent, whose size may differ");
    axis = at;
    size = e->size;
  }
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    if (!k.inputs[i] || k.extent(i)) continue;
    if (!k.inputs[i]->type.rank_known) k.refuse(i, "its rank is unknown, so it may not broadcast against it");
    int64_t own = axis - (result_rank - k.rank(i));
    if (own >= 0 && k.inputs[i]->type.dims[size_t(own)].value != 1)
      k.refuse(i, "an input of fixed extent along the data-dependent axis cannot broadcast against it");
  }
  return axis;
}

// Reshape-like ops: the result axis with the same extent and the same product
// of extents before it (then the entries keep their positions).
int64_t reshaped_axis(const Carry& k, const RuntimeExtent& e, const graph::TensorType& result) {
  const graph::TensorType& in = k.inputs[0]->type;
  int64_t before = 1, bound = in.dims[size_t(e.axis)].value;
  for (int64_t d = 0; d < e.axis; ++d) before *= in.dims[size_t(d)].value;
  std::vector<int64_t> found;
  int64_t prefix = 1;
  for (int d = 0; d < result.rank(); ++d) {
    if (prefix == before && result.dims[size_t(d)].value == bound) found.push_back(d);
    prefix *= result.dims[size_t(d)].value;
  }
  if (found.size() != 1)
    k.refuse(0, found.empty() ? "the reshape splits or merges that axis"
                              : "the reshape leaves it ambiguous which axis is data-dependent");
  return found[0];
}

int64_t squeezed_axis(const Carry& k, const RuntimeExtent& e, const graph::TensorType& result) {
  std::optional<std::vector<int64_t>> axes = k.ints("axes", 1);
  if (axes) {
    std::vector<int64_t> norm = k.normalized(*axes, k.rank(0));
    if (std::count(norm.begin(), norm.end(), e.axis)) k.refuse(0, "it squeezes the data-dependent axis");
  } else if (k.inputs[0]->type.dims[size_t(e.axis)].value == 1) {
    k.refuse(0, "it squeezes every axis of extent 1, the data-dependent one among them");
  }
  return reshaped_axis(k, e, result);
}

int64_t gather_axis(const Carry& k) {
  int64_t g = k.c.normalized_axis(k.int_attr("axis", 0), k.rank(0));
  const RuntimeExtent *data = k.extent(0), *indices = k.extent(1);
  if (data && indices) k.refuse(1, "its data is of data-dependent extent too");
  if (indices) return g + indices->axis;
  if (data->axis == g) k.refuse(0, "it gathers along the data-dependent axis");
  return data->axis < g ? data->axis : data->axis + k.rank(1) - 1;
}

int64_t slice_axis(const Carry& k, const RuntimeExtent& e, const graph::TensorType& result) {
  for (size_t i = 1; i < k.inputs.size(); ++i)
    if (k.extent(i)) k.refuse(i, "Slice's bounds must be of fixed extent");
  std::optional<std::vector<int64_t>> starts = k.ints("starts", 1);
  std::optional<std::vector<int64_t>> axes = k.ints("axes", 3);
  std::optional<std::vector<int64_t>> steps = k.inputs.size() > 4 ? k.ints("steps", 4) : std::nullopt;
  size_t count = starts ? starts->size() : 0;
  std::vector<int64_t> sliced = axes ? k.normalized(*axes, k.rank(0)) : std::vector<int64_t>(count);
  if (!axes) std::iota(sliced.begin(), sliced.end(), 0);
  for (size_t j = 0; j < sliced.size(); ++j) {
    if (sliced[j] != e.axis) continue;
    bool forward = !steps || j >= steps->size() || (*steps)[j] == 1;
    if (!forward || result.dims[size_t(e.axis)].value != k.inputs[0]->type.dims[size_t(e.axis)].value)
      k.refuse(0, "it slices the data-dependent axis");
  }
  return e.axis;
}

int64_t concat_axis(const Carry& k, const RuntimeExtent& first) {
  int64_t along = k.c.normalized_axis(k.int_attr("axis", 0), k.rank(0));
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const RuntimeExtent* e = k.extent(i);
    if (!e || e->axis != first.axis || e->size != first.size)
      k.refuse(i, "Concat joins values of data-dependent extent only with others of the same extent");
    if (e->axis == along) k.refuse(i, "it concatenates along the data-dependent axis");
  }
  return first.axis;
}

int64_t matmul_axis(const Carry& k, int result_rank) {
  const RuntimeExtent *a = k.extent(0), *b = k.extent(1);
  if (a && b) k.refuse(1, "both factors are of data-dependent extent");
  if (a && k.rank(0) >= 2 && a->axis == k.rank(0) - 2) return result_rank - 2;
  if (b && k.rank(1) >= 2 && b->axis == k.rank(1) - 1) return result_rank - 1;
  k.refuse(a ? 0 : 1, "only the rows of A and the columns of B may be of data-dependent extent");
}

int64_t gemm_axis(const Carry& k) {
  const RuntimeExtent *a = k.extent(0), *b = k.extent(1);
  if (a && !b && !k.extent(2) && a->axis == (k.int_attr("transA", 0) ? 1 : 0)) return 0;
  if (b && !a && !k.extent(2) && b->axis == (k.int_attr("transB", 0) ? 0 : 1)) return 1;
  k.refuse(k.extent(2) ? 2 : (a ? 0 : 1),
           "only the rows of A or the columns of B may be of data-dependent extent");
}

int64_t reduced_axis(const Carry& k, const RuntimeExtent& e) {
  const std::string& op = k.c.op;
  bool keep = k.int_attr("keepdims", 1) != 0;
  std::vector<int64_t> axes;
  if (op == "ArgMax" || op == "ArgMin") {
    axes = {k.int_attr("axis", 0)};
  } else {
    std::optional<std::vector<int64_t>> given = k.ints("axes", 1);
    if (!given || given->empty()) {
      if (k.int_attr("noop_with_empty_axes", 0)) return e.axis;
      k.refuse(0, "it reduces every axis, the data-dependent one among them");
    }
    axes = *given;
  }
  axes = k.normalized(axes, k.rank(0));
  if (std::count(axes.begin(), axes.end(), e.axis)) k.refuse(0, "it reduces along the data-dependent axis");
  return keep ? e.axis
              : e.axis - std::count_if(axes.begin(), axes.end(), [&](int64_t a) { return a < e.axis; });
}

int64_t softmax_axis(const Carry& k, const RuntimeExtent& e) {
  bool coerced = k.c.opset < 13;  // the axes from `axis` on are one softmax
  int64_t axis = k.c.normalized_axis(k.int_attr("axis", coerced ? 1 : -1), k.rank(0));
  if (axis == e.axis || (coerced && e.axis > axis))
    k.refuse(0, "it normalizes along the data-dependent axis");
  return e.axis;
}

// Shape (from `start` to `end`) and Size of a value of data-dependent extent.
graph::Value* runtime_shape(const Carry& k, const RuntimeExtent& e) {
  AdaptContext& c = k.c;
  const graph::TensorType& t = k.inputs[0]->type;
  std::vector<int64_t> dims;
  for (const graph::Dim& d : t.dims) dims.push_back(d.value);
  if (c.op == "Size") {
    int64_t others = 1;
    for (int d = 0; d < t.rank(); ++d) others *= d == e.axis ? 1 : dims[size_t(d)];
    return c.emit("Mul", {e.size, c.constant(Tensor::from_i64({others}, {}))})[0];
  }
  int64_t rank = t.rank(), start = k.int_attr("start", 0), end = k.int_attr("end", rank);
  start = std::clamp(start < 0 ? start + rank : start, int64_t(0), rank);
  end = std::clamp(end < 0 ? end + rank : end, int64_t(0), rank);
  if (e.axis < start || e.axis >= end) return nullptr;  // the part asked for is static
  std::vector<graph::Value*> parts;
  if (e.axis > start) parts.push_back(c.i64_vector({dims.begin() + start, dims.begin() + e.axis}));
  parts.push_back(c.emit("Reshape", {e.size, c.i64_vector({1})})[0]);
  if (end > e.axis + 1) parts.push_back(c.i64_vector({dims.begin() + e.axis + 1, dims.begin() + end}));
  return parts.size() == 1 ? parts[0] : c.emit("Concat", parts, one_attr("axis", int64_t(0)))[0];
}

// The result axis that holds the data first, for an op that may read the value.
int64_t carried_axis(const Carry& k, const RuntimeExtent& e, size_t i, const graph::TensorType& result) {
  const std::string& op = k.c.op;
  if (unary_ops().count(op)) {
    if (i != 0) k.refuse(i, op + " reads only the shape of its other inputs");
    return e.axis;
  }
  if (broadcast_ops().count(op)) return broadcast_axis(k, result.rank());
  if (op == "Transpose") {
    std::vector<int64_t> perm = k.attrs.has("perm") ? k.attrs.get_ints("perm") : std::vector<int64_t>{};
    if (perm.empty())
      for (int d = k.rank(0) - 1; d >= 0; --d) perm.push_back(d);
    return std::find(perm.begin(), perm.end(), e.axis) - perm.begin();
  }
  if (op == "Squeeze") return squeezed_axis(k, e, result);
  if (op == "Unsqueeze" || op == "Reshape" || op == "Flatten") {
    if (i != 0) k.refuse(i, op + "'s shape must be known when compiling");
    return reshaped_axis(k, e, result);
  }
  if (op == "Gather") return gather_axis(k);
  if (op == "Slice")
    return i == 0 ? slice_axis(k, e, result) : (k.refuse(i, "Slice's bounds must be fixed"), 0);
  if (op == "Concat") return concat_axis(k, e);
  if (op == "MatMul") return matmul_axis(k, result.rank());
  if (op == "Gemm") return gemm_axis(k);
  if (reduce_ops().count(op) && i == 0) return reduced_axis(k, e);
  if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && i == 0) return softmax_axis(k, e);
  k.refuse(i,
           op + " cannot take a tensor of data-dependent extent (it is carried through elementwise ops, "
                "Transpose, Reshape, Unsqueeze, Squeeze, Flatten, Gather, Slice and Concat along other axes, "
                "MatMul, Gemm, reductions and Softmax along other axes, Shape and Size)");
}

}  // namespace

void prepare_runtime_extents(AdaptContext& c, const RuntimeExtents& extents) {
  if (c.op != "Gather" || c.inputs.size() < 2 || !c.inputs[1]) return;
  auto it = extents.find(c.inputs[1]);
  if (it == extents.end()) return;
  graph::Value* indices = c.inputs[1];
  const RuntimeExtent e = it->second;  // a copy: the table grows below
  int64_t bound = indices->type.dims[size_t(e.axis)].value;
  graph::Value* inside = c.emit("Less", {c.positions_along(indices->type.rank(), e.axis, bound), e.size})[0];
  graph::Value* zero = c.constant(Tensor::scalar_f64(indices->type.dtype, 0));
  graph::Value* kept = c.emit("Where", {inside, indices, zero})[0];
  c.extents->emplace(kept, e);
  c.inputs[1] = kept;
}

void carry_runtime_extents(AdaptContext& c, const std::vector<graph::Value*>& inputs,
                           const graph::Attrs& attrs, std::vector<graph::Value*>& results,
                           RuntimeExtents& extents) {
  Carry k{c, inputs, attrs, extents};
  std::optional<size_t> first;
  for (size_t i = 0; i < inputs.size() && !first; ++i)
    if (k.extent(i)) first = i;
  if (!first) return;
  const RuntimeExtent e = *k.extent(*first);
  if (c.op == "Shape" || c.op == "Size") {
    if (graph::Value* computed = runtime_shape(k, e)) results[0] = computed;
    return;
  }
  if (results.size() != 1 || !results[0]) k.refuse(*first, c.op + " has more than one result");
  int64_t axis = carried_axis(k, e, *first, results[0]->type);
  if (axis < 0 || axis >= results[0]->type.rank() ||
      results[0]->type.dims[size_t(axis)].value != inputs[*first]->type.dims[size_t(e.axis)].value)
    k.refuse(*first, "its result's extent along the data-dependent axis differs from the input's");
  extents[results[0]] = RuntimeExtent{axis, e.size, e.origin};
}

}  // namespace tessel::onnx_frontend
