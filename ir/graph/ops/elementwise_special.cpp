// Schemas of the elementwise ops that are not plain math: Where, Clip, Cast,
// Identity and inference-mode Dropout.
// Cast's canonical attribute `to` is a Tessel dtype name ("f32", "i64", ...);
// the ONNX adapter maps the TensorProto data type number onto it.
#include <string>

#include "ir/graph/ops/elementwise.h"
#include "ir/graph/ops/shape_helpers.h"

namespace tessel::graph::ops {

namespace {

void infer_where(InferContext& ctx) {
  TESSEL_USER_CHECK(ctx.input(0).dtype == DType::kBool, ctx.span())
      << "condition (input 0) must be bool, got " << dtype_name(ctx.input(0).dtype);
  check_same_dtype(ctx, {1, 2});
  set_broadcast_output(ctx, {0, 1, 2}, ctx.input(1).dtype);
}

// Clip's min and max (inputs 1 and 2, each optional) are single values.
void infer_clip(InferContext& ctx) {
  check_type_class(ctx, 0, TypeClass::kNumeric);
  check_same_dtype(ctx, {0, 1, 2});
  for (size_t i : {size_t(1), size_t(2)}) {
    if (!ctx.has_input(i)) continue;
    auto n = ctx.input(i).numel();
    TESSEL_USER_CHECK(!n || *n == 1, ctx.span())
        << (i == 1 ? "min" : "max") << " must be a scalar, got shape " << ctx.input(i).str();
  }
  set_same_shape_outputs(ctx, ctx.input(0).dtype);
}

void infer_cast(InferContext& ctx) {
  const std::string& to = ctx.attrs().get_string("to");
  auto dtype = dtype_from_name(to);
  TESSEL_USER_CHECK(dtype.has_value(), ctx.span())
      << "attribute 'to' must name a dtype (f32, f16, bf16, f64, i8, u8, i16, u16, i32, u32, i64, u64, bool, "
      << "f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, f8e8m0, f4e2m1, i4, u4, i2, u2), got '" << to << "'";
  const std::string& round_mode = ctx.attrs().get_string("round_mode");
  TESSEL_USER_CHECK(*dtype != DType::kF8E8M0 || round_mode == "up", ctx.span())
      << "casting to f8e8m0 with round_mode \"" << round_mode << "\" is not supported (only \"up\")";
  set_same_shape_outputs(ctx, *dtype);
}

// BitCast: the same bytes read as `to` (ONNX's BitCast-26).
void infer_bitcast(InferContext& ctx) {
  const std::string& to = ctx.attrs().get_string("to");
  auto dtype = dtype_from_name(to);
  TESSEL_USER_CHECK(dtype.has_value(), ctx.span()) << "attribute 'to' must name a dtype, got '" << to << "'";
  DType from = ctx.input(0).dtype;
  TESSEL_USER_CHECK(bitcast_allowed(from, *dtype), ctx.span())
      << "cannot read " << dtype_name(from) << " bits as " << dtype_name(*dtype)
      << ": both types must have one size, neither may be a 16-bit float (Tessel computes those in f32) or "
         "a type below 8 bits, and bool only as the source";
  set_same_shape_outputs(ctx, *dtype);
}

void infer_identity(InferContext& ctx) {
  set_same_shape_outputs(ctx, ctx.input(0).dtype);
}

// Dropout in inference mode, or in training mode with a ratio of 0 (checked
// at run time when only a run knows it): output 0 is the input, output 1
// (the mask) is all true.
void infer_dropout(InferContext& ctx) {
  check_type_class(ctx, 0, TypeClass::kFloat);
  bool zero_ratio = false;
  if (ctx.has_input(1)) {
    TESSEL_USER_CHECK(is_float(ctx.input(1).dtype), ctx.span())
        << "ratio (input 1) must be a floating-point scalar, got " << ctx.input(1).str();
    if (const Tensor* r = ctx.value(1)) {
      TESSEL_USER_CHECK(r->numel() == 1, ctx.span()) << "ratio (input 1) must be a scalar";
      double ratio = r->get_f64(0);
      TESSEL_USER_CHECK(ratio >= 0 && ratio < 1, ctx.span()) << "ratio must be in [0, 1), got " << ratio;
      zero_ratio = ratio == 0;
    }
  }
  // Without a ratio (0.5), known training drops at random.
  bool may_pass = zero_ratio || (ctx.has_input(1) && !ctx.value(1));
  if (ctx.has_input(2)) {
    TESSEL_USER_CHECK(ctx.input(2).dtype == DType::kBool, ctx.span())
        << "training_mode (input 2) must be a bool scalar, got " << ctx.input(2).str();
    const Tensor* mode = ctx.value(2);
    TESSEL_USER_CHECK(!mode || mode->numel() != 1 || mode->get_i64(0) == 0 || may_pass, ctx.span())
        << "training-mode Dropout drops at random, which a compiled model does not (training_mode is true "
           "and the ratio is not a constant 0)";
  }
  TensorType t = ctx.input(0);
  ctx.set_output(0, t);
  if (ctx.num_outputs() < 2) return;
  t.dtype = DType::kBool;
  ctx.set_output(1, t);
}

}  // namespace

void register_elementwise_special_ops(OpRegistry& r) {
  r.def("Where", OpPattern::kBroadcast).inputs(3).outputs(1).infer(infer_where);
  r.def("Clip", OpPattern::kBroadcast).inputs(1, 3).outputs(1).infer(infer_clip).flops(one_flop_per_element);
  r.def("Cast", OpPattern::kElemwise)
      .inputs(1)
      .outputs(1)
      .attr("to", AttrType::kString)
      .attr("saturate", AttrType::kInt, int64_t(1))
      .attr("round_mode", AttrType::kString, std::string("up"))
      .infer(infer_cast);
  r.def("Identity", OpPattern::kElemwise).inputs(1).outputs(1).infer(infer_identity);
  r.def("BitCast", OpPattern::kElemwise)
      .inputs(1)
      .outputs(1)
      .attr("to", AttrType::kString)
      .infer(infer_bitcast);
  r.def("Dropout", OpPattern::kElemwise)
      .inputs(1, 3)
      .outputs(1, 2)
      .attr("seed", AttrType::kInt, int64_t(0))
      .infer(infer_dropout);
}

}  // namespace tessel::graph::ops
