// Schemas and shape functions of the elementwise ops: unary math and
// activations, binary arithmetic with numpy broadcasting (PRelu broadcasts
// one way), comparisons, logic, variadic Max/Min/Sum/Mean.
// FLOPs: one per output element for every arithmetic op (transcendental
// functions are not weighted more); Max/Min/Sum/Mean count one per extra input.
#include "ir/graph/ops/elementwise.h"

#include <climits>
#include <string>

#include "ir/graph/ops/register.h"
#include "ir/graph/ops/shape_helpers.h"

namespace tessel::graph::ops {

namespace {

std::string_view type_class_text(TypeClass c) {
  switch (c) {
    case TypeClass::kFloat: return "a floating-point tensor";
    case TypeClass::kSignedNumeric: return "a floating-point or signed integer tensor";
    case TypeClass::kNumeric: return "a numeric (non-bool) tensor";
    case TypeClass::kBool: return "a bool tensor";
    case TypeClass::kInteger: return "an integer tensor";
    case TypeClass::kUnsigned: return "an unsigned integer tensor";
    case TypeClass::kAny: return "a tensor";
  }
  return "?";
}

InferFn unary(TypeClass c) {
  return [c](InferContext& ctx) {
    check_type_class(ctx, 0, c);
    set_same_shape_outputs(ctx, ctx.input(0).dtype);
  };
}

// Both inputs of dtype class c and equal dtypes; output of dtype `out` (or
// the inputs' dtype when out is nullopt).
InferFn binary(TypeClass c, std::optional<DType> out = std::nullopt) {
  return [c, out](InferContext& ctx) {
    check_type_class(ctx, 0, c);
    check_same_dtype(ctx, {0, 1});
    set_broadcast_output(ctx, {0, 1}, out.value_or(ctx.input(0).dtype));
  };
}

// Pow: base and exponent may differ in type; the result has the base's type.
void infer_pow(InferContext& ctx) {
  check_type_class(ctx, 0, TypeClass::kNumeric);
  check_type_class(ctx, 1, TypeClass::kNumeric);
  set_broadcast_output(ctx, {0, 1}, ctx.input(0).dtype);
}

void infer_mod(InferContext& ctx) {
  check_type_class(ctx, 0, TypeClass::kNumeric);
  check_same_dtype(ctx, {0, 1});
  TESSEL_USER_CHECK(!is_float(ctx.input(0).dtype) || ctx.attrs().get_int("fmod") == 1, ctx.span())
      << "Mod of floating-point tensors requires fmod=1";
  set_broadcast_output(ctx, {0, 1}, ctx.input(0).dtype);
}

void infer_bit_shift(InferContext& ctx) {
  const std::string& direction = ctx.attrs().get_string("direction");
  TESSEL_USER_CHECK(direction == "LEFT" || direction == "RIGHT", ctx.span())
      << "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"" << direction << "\"";
  binary(TypeClass::kUnsigned)(ctx);
}

InferFn variadic(TypeClass c) {
  return [c](InferContext& ctx) {
    std::vector<size_t> all;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      TESSEL_USER_CHECK(ctx.has_input(i), ctx.span()) << "input " << i << " is missing (no input may be omitted)";
      all.push_back(i);
    }
    check_type_class(ctx, 0, c);
    check_same_dtype(ctx, all);
    set_broadcast_output(ctx, all, ctx.input(0).dtype);
  };
}

int64_t variadic_flops(const Node& node) {
  int64_t extra = int64_t(node.inputs.size()) - 1;
  return output_elements(node) * (extra > 0 ? extra : 1);
}

void infer_gelu(InferContext& ctx) {
  const std::string& approx = ctx.attrs().get_string("approximate");
  TESSEL_USER_CHECK(approx == "none" || approx == "tanh", ctx.span())
      << "attribute 'approximate' must be \"none\" or \"tanh\", got \"" << approx << "\"";
  unary(TypeClass::kFloat)(ctx);
}

// Celu divides by alpha, so alpha 0 is rejected.
void infer_celu(InferContext& ctx) {
  TESSEL_USER_CHECK(ctx.attrs().get_float("alpha") != 0.0, ctx.span())
      << "attribute 'alpha' must be non-zero";
  unary(TypeClass::kFloat)(ctx);
}

// PRelu broadcasts the slope to x's shape only (unidirectionally): the
// output has x's shape, a slope dimension is 1 or x's dimension.
void infer_prelu(InferContext& ctx) {
  check_type_class(ctx, 0, TypeClass::kNumeric);
  check_same_dtype(ctx, {0, 1});
  const TensorType& x = ctx.input(0);
  const TensorType& slope = ctx.input(1);
  if (!x.rank_known || !slope.rank_known) return ctx.set_output(0, x);
  TESSEL_USER_CHECK(slope.rank() <= x.rank(), ctx.span())
      << "slope " << slope.str() << " has a higher rank than x " << x.str();
  size_t lead = size_t(x.rank() - slope.rank());
  for (size_t d = 0; d < slope.dims.size(); ++d) {
    const Dim &s = slope.dims[d], &xd = x.dims[lead + d];
    TESSEL_USER_CHECK(!s.is_known() || s.value == 1 || !xd.is_known() || xd.value == s.value, ctx.span())
        << "slope " << slope.str() << " does not broadcast to x " << x.str();
  }
  set_broadcast_output(ctx, {0, 1}, x.dtype);  // x's shape, unknown dims refined by the slope
}

// IsNaN, IsInf: a bool per element of a float tensor.
void infer_float_predicate(InferContext& ctx) {
  check_type_class(ctx, 0, TypeClass::kFloat);
  set_same_shape_outputs(ctx, DType::kBool);
}

// One input, one output of the input's shape.
OpDef def_unary(OpRegistry& r, const char* op, TypeClass c) {
  return r.def(op, OpPattern::kElemwise).inputs(1).outputs(1).infer(unary(c)).flops(one_flop_per_element);
}

// Broadcasting inputs (min to max of them), one output.
OpDef def_broadcast(OpRegistry& r, const char* op, InferFn f, int min_inputs = 2, int max_inputs = 2) {
  FlopsFn flops = max_inputs > 2 ? FlopsFn(variadic_flops) : FlopsFn(one_flop_per_element);
  return r.def(op, OpPattern::kBroadcast).inputs(min_inputs, max_inputs).outputs(1).infer(f).flops(flops);
}

void register_unary(OpRegistry& r) {
  for (const char* op : {"Exp",   "Log",   "Sqrt",  "Reciprocal", "Erf",  "Tanh",  "Sigmoid",  "Softplus",
                         "Sin",   "Cos",   "Tan",   "Asin",       "Acos", "Atan",  "Sinh",     "Cosh",
                         "Asinh", "Acosh", "Atanh", "Floor",      "Ceil", "Round", "HardSwish"})
    def_unary(r, op, TypeClass::kFloat);
  for (const char* op : {"Neg", "Relu"}) def_unary(r, op, TypeClass::kSignedNumeric);
  for (const char* op : {"Abs", "Sign"}) def_unary(r, op, TypeClass::kNumeric);
  def_unary(r, "Not", TypeClass::kBool);
  def_unary(r, "BitwiseNot", TypeClass::kInteger);
  def_unary(r, "LeakyRelu", TypeClass::kFloat).attr("alpha", AttrType::kFloat, 0.01);
  def_unary(r, "HardSigmoid", TypeClass::kFloat)
      .attr("alpha", AttrType::kFloat, 0.2)
      .attr("beta", AttrType::kFloat, 0.5);
  for (const char* op : {"Softsign", "Mish"}) def_unary(r, op, TypeClass::kFloat);
  def_unary(r, "Elu", TypeClass::kFloat).attr("alpha", AttrType::kFloat, 1.0);
  def_unary(r, "Celu", TypeClass::kFloat).attr("alpha", AttrType::kFloat, 1.0).infer(infer_celu);
  def_unary(r, "ThresholdedRelu", TypeClass::kFloat).attr("alpha", AttrType::kFloat, 1.0);
  // The float32 values of ONNX's defaults.
  def_unary(r, "Selu", TypeClass::kFloat)
      .attr("alpha", AttrType::kFloat, 1.67326319217681884765625)
      .attr("gamma", AttrType::kFloat, 1.05070102214813232421875);
  def_unary(r, "Swish", TypeClass::kFloat).attr("alpha", AttrType::kFloat, 1.0);
  def_unary(r, "Shrink", TypeClass::kNumeric)
      .attr("bias", AttrType::kFloat, 0.0)
      .attr("lambd", AttrType::kFloat, 0.5);
  def_unary(r, "IsNaN", TypeClass::kFloat).infer(infer_float_predicate);
  def_unary(r, "IsInf", TypeClass::kFloat)
      .attr("detect_negative", AttrType::kInt, int64_t(1))
      .attr("detect_positive", AttrType::kInt, int64_t(1))
      .infer(infer_float_predicate);
  def_unary(r, "Gelu", TypeClass::kFloat)
      .attr("approximate", AttrType::kString, std::string("none"))
      .infer(infer_gelu);
}

void register_binary(OpRegistry& r) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) def_broadcast(r, op, binary(TypeClass::kNumeric));
  def_broadcast(r, "Pow", infer_pow);
  def_broadcast(r, "PRelu", infer_prelu);
  def_broadcast(r, "Mod", infer_mod).attr("fmod", AttrType::kInt, int64_t(0));
  def_broadcast(r, "Equal", binary(TypeClass::kAny, DType::kBool));
  for (const char* op : {"Greater", "Less", "GreaterOrEqual", "LessOrEqual"})
    def_broadcast(r, op, binary(TypeClass::kNumeric, DType::kBool));
  for (const char* op : {"And", "Or", "Xor"}) def_broadcast(r, op, binary(TypeClass::kBool));
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    def_broadcast(r, op, binary(TypeClass::kInteger));
  def_broadcast(r, "BitShift", infer_bit_shift).attr("direction", AttrType::kString);
  for (const char* op : {"Max", "Min", "Sum"})
    def_broadcast(r, op, variadic(TypeClass::kNumeric), 1, INT_MAX);
  def_broadcast(r, "Mean", variadic(TypeClass::kFloat), 1, INT_MAX);
}

}  // namespace

bool in_type_class(DType t, TypeClass c) {
  switch (c) {
    case TypeClass::kFloat: return is_float(t);
    case TypeClass::kSignedNumeric: return is_float(t) || (is_integer(t) && is_signed(t));
    case TypeClass::kNumeric: return is_float(t) || is_integer(t);
    case TypeClass::kBool: return t == DType::kBool;
    case TypeClass::kInteger: return is_integer(t);
    case TypeClass::kUnsigned: return is_integer(t) && !is_signed(t);
    case TypeClass::kAny: return true;
  }
  return false;
}

void check_type_class(const InferContext& ctx, size_t i, TypeClass c) {
  DType t = ctx.input(i).dtype;
  TESSEL_USER_CHECK(in_type_class(t, c), ctx.span())
      << "input " << i << " has dtype " << dtype_name(t) << ", but " << ctx.node().op << " expects "
      << type_class_text(c);
}

void set_same_shape_outputs(InferContext& ctx, DType dtype) {
  TensorType t = ctx.input(0);
  t.dtype = dtype;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, t);
}

void set_broadcast_output(InferContext& ctx, const std::vector<size_t>& inputs, DType dtype) {
  std::vector<const TensorType*> types;
  for (size_t i : inputs) {
    if (!ctx.has_input(i)) continue;
    if (!ctx.input(i).rank_known) return ctx.set_output(0, TensorType::unknown_rank(dtype));
    types.push_back(&ctx.input(i));
  }
  TensorType out;
  out.dtype = dtype;
  out.dims = broadcast_dims(types, ctx.span());
  ctx.set_output(0, std::move(out));
}

int64_t one_flop_per_element(const Node& node) {
  return output_elements(node);
}

void register_elementwise_ops(OpRegistry& r) {
  register_unary(r);
  register_binary(r);
  register_elementwise_special_ops(r);
}

}  // namespace tessel::graph::ops
