// The quantization ops as graph ops: QuantizeLinear and DequantizeLinear
// (per tensor, per axis, blocked), DynamicQuantizeLinear, and the integer
// products MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv, whose
// exact int32 matrix product or convolution (integer_products.h) is then
// requantized.
// Rounding is half to even and saturation clips to the target type, as ONNX's
// reference does.
#include <cmath>
#include <limits>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/integer_products.h"
#include "src/frontend/onnx/tensor_proto.h"

namespace tessel::onnx_frontend {

namespace {

std::pair<double, double> integer_range(DType t) {
  if (is_small(t)) {
    double width = double(1 << small_types::width_bits(small_format(t)));
    bool is_signed_format = t == DType::kI4 || t == DType::kI2;
    return is_signed_format ? std::pair<double, double>(-width / 2, width / 2 - 1)
                            : std::pair<double, double>(0, width - 1);
  }
  return dispatch_dtype(t, [](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      return std::pair<double, double>(double(std::numeric_limits<T>::min()),
                                       double(std::numeric_limits<T>::max()));
    else
      return std::pair<double, double>(0, 0);
  });
}

// A scale or zero point laid out to broadcast against x: a scalar as is, a
// [C] one along `axis`, a blocked one (the axis divided in blocks of
// block_size) repeated over each block.
graph::Value* along_axis(AdaptContext& c, graph::Value* v, const graph::Value* x, const char* what) {
  if (!v || (v->type.rank_known && v->type.rank() == 0)) return v;
  TESSEL_USER_CHECK(x->type.rank_known && v->type.rank_known, c.span()) << "needs inputs of known rank";
  int64_t rank = x->type.rank(), axis = c.int_attr("axis", 1), block = c.int_attr("block_size", 0);
  if (block == 0 && v->type.rank() == 1 && v->type.dims[0].is_known() && v->type.dims[0].value == 1) return v;
  TESSEL_USER_CHECK(axis >= -rank && axis < rank, c.span())
      << "axis " << axis << " is out of range for rank " << rank;
  if (axis < 0) axis += rank;
  if (block > 0) {
    int64_t extent = c.static_dim(x, axis, "the input");
    TESSEL_USER_CHECK(v->type.rank() == rank, c.span())
        << what << " of a blocked quantization must have the input's rank";
    std::vector<int64_t> which(static_cast<size_t>(extent));
    for (int64_t i = 0; i < extent; ++i) which[size_t(i)] = i / block;
    return c.emit("Gather", {v, c.i64_vector(which)}, one_attr("axis", axis))[0];
  }
  TESSEL_USER_CHECK(v->type.rank() == 1, c.span())
      << what << " must be a scalar or a [C] tensor, got " << v->type.str();
  std::vector<int64_t> trailing;
  for (int64_t d = axis + 1; d < rank; ++d) trailing.push_back(d - axis);
  if (trailing.empty()) return v;
  return c.emit("Unsqueeze", {v, c.i64_vector(trailing)})[0];
}

// round(x) + zero point, clipped to `to`'s range and cast to it; x in `wide`.
graph::Value* saturate(AdaptContext& c, graph::Value* x, graph::Value* zero_point, DType to, DType wide) {
  graph::Value* y = c.emit("Round", {x})[0];
  if (zero_point) y = c.emit("Add", {y, c.cast(zero_point, wide)})[0];
  auto [lo, hi] = integer_range(to);
  y = c.emit("Clip", {y, c.scalar(wide, lo), c.scalar(wide, hi)})[0];
  return c.cast(y, to);
}

// y = saturate(round(x / scale) + zero_point), computed in f32 (f64 for f64 x).
void adapt_quantize(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "x");
  graph::Value* scale = along_axis(c, c.required_input(1, "y_scale"), x, "y_scale");
  graph::Value* zero_point = along_axis(c, c.input_or_null(2), x, "y_zero_point");
  DType to = zero_point ? zero_point->type.dtype : DType::kU8;
  if (!zero_point && c.attrs.find("output_dtype")) {
    auto t = dtype_from_onnx(int(c.int_attr("output_dtype", 0)));
    TESSEL_USER_CHECK(t.has_value(), c.span()) << "attribute 'output_dtype' names an unsupported type";
    to = *t;
  }
  bool small_float = is_small(to) && !small_types::is_integer_format(small_format(to));
  TESSEL_USER_CHECK(is_integer(to) || is_small(to), c.span())
      << "quantizing to " << dtype_name(to) << " is not supported";
  DType wide = x->type.dtype == DType::kF64 ? DType::kF64 : DType::kF32;
  graph::Value* q = c.emit("Div", {c.cast(x, wide), c.cast(scale, wide)})[0];
  if (small_float) {  // the float formats round to their own grid, saturating as `saturate` says
    if (zero_point) q = c.emit("Add", {q, c.cast(zero_point, wide)})[0];
    graph::Attrs to_small = one_attr("to", std::string(dtype_name(to)));
    to_small.set("saturate", c.int_attr("saturate", 1));
    c.results = c.emit("Cast", {q}, to_small);
    return;
  }
  c.results = std::vector<graph::Value*>{saturate(c, q, zero_point, to, wide)};
}

// y = (x - zero_point) * scale, in f32, as the scale's type.
void adapt_dequantize(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "x");
  graph::Value* scale_in = c.required_input(1, "x_scale");
  graph::Value* scale = along_axis(c, scale_in, x, "x_scale");
  graph::Value* zero_point = along_axis(c, c.input_or_null(2), x, "x_zero_point");
  TESSEL_USER_CHECK(is_integer(x->type.dtype) || is_small(x->type.dtype), c.span())
      << "dequantizing " << dtype_name(x->type.dtype) << " is not supported";
  graph::Value* v = c.cast(x, DType::kF32);
  if (zero_point) v = c.emit("Sub", {v, c.cast(zero_point, DType::kF32)})[0];
  v = c.emit("Mul", {v, c.cast(scale, DType::kF32)})[0];
  c.results = std::vector<graph::Value*>{c.cast(v, scale_in->type.dtype)};
}

// uint8 quantization over the range of x and 0: scale = (max - min) / 255,
// zero point = saturate(round(-min / scale)).
void adapt_dynamic_quantize(AdaptContext& c) {
  graph::Value* x = c.cast(c.required_input(0, "x"), DType::kF32);
  graph::Attrs whole = one_attr("keepdims", int64_t(0));
  graph::Value* zero = c.scalar(DType::kF32, 0.0);
  graph::Value* lo = c.emit("Min", {c.emit("ReduceMin", {x}, whole)[0], zero})[0];
  graph::Value* hi = c.emit("Max", {c.emit("ReduceMax", {x}, whole)[0], zero})[0];
  graph::Value* scale = c.emit("Div", {c.emit("Sub", {hi, lo})[0], c.scalar(DType::kF32, 255.0)})[0];
  graph::Value* zero_point =
      saturate(c, c.emit("Div", {c.emit("Neg", {lo})[0], scale})[0], nullptr, DType::kU8, DType::kF32);
  graph::Value* y = saturate(c, c.emit("Div", {x, scale})[0], zero_point, DType::kU8, DType::kF32);
  c.results = std::vector<graph::Value*>{y, scale, zero_point};
}

void adapt_matmul_integer(AdaptContext& c) {
  graph::Value* product = integer_matmul(c, c.required_input(0, "A"), c.input_or_null(2),
                                         c.required_input(1, "B"), c.input_or_null(3));
  c.results = std::vector<graph::Value*>{c.cast(product, DType::kI32)};
}

// saturate(round((A - a_zero) (B - b_zero) * a_scale * b_scale / y_scale) + y_zero),
// the exact product scaled in f64 by the f32 ratio of the scales, as ONNX's reference.
void adapt_qlinear_matmul(AdaptContext& c) {
  graph::Value* product = integer_matmul(c, c.required_input(0, "a"), c.required_input(2, "a_zero_point"),
                                         c.required_input(3, "b"), c.required_input(5, "b_zero_point"));
  graph::Value* a_scale = c.cast(c.required_input(1, "a_scale"), DType::kF32);
  graph::Value* b_scale = c.cast(c.required_input(4, "b_scale"), DType::kF32);
  graph::Value* y_scale = c.cast(c.required_input(6, "y_scale"), DType::kF32);
  graph::Value* y_zero = c.required_input(7, "y_zero_point");
  graph::Value* ratio = c.emit("Div", {c.emit("Mul", {a_scale, b_scale})[0], y_scale})[0];
  graph::Value* y = c.emit("Mul", {c.cast(product, DType::kF64), c.cast(ratio, DType::kF64)})[0];
  c.results = std::vector<graph::Value*>{saturate(c, y, y_zero, y_zero->type.dtype, DType::kF64)};
}

void adapt_conv_integer(AdaptContext& c) {
  graph::Value* acc = integer_conv(c, c.required_input(0, "x"), c.input_or_null(2), c.required_input(1, "w"),
                                   c.input_or_null(3));
  c.results = std::vector<graph::Value*>{c.cast(acc, DType::kI32)};
}

// saturate(round((conv + B) * x_scale * w_scale / y_scale) + y_zero), w_scale
// and B per output channel, scaled as QLinearMatMul is.
void adapt_qlinear_conv(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "x");
  graph::Value* acc = c.cast(integer_conv(c, x, c.required_input(2, "x_zero_point"), c.required_input(3, "w"),
                                          c.required_input(5, "w_zero_point")),
                             DType::kF64);
  int64_t rank = acc->type.rank();
  // In f64 the sum with the int32 bias is exact, as int32's is short of wrapping around.
  if (graph::Value* bias = c.input_or_null(8))
    acc = c.emit("Add", {acc, per_channel(c, c.cast(bias, DType::kF64), 1, rank)})[0];
  graph::Value* x_scale = c.cast(c.required_input(1, "x_scale"), DType::kF32);
  graph::Value* w_scale = per_channel(c, c.cast(c.required_input(4, "w_scale"), DType::kF32), 1, rank);
  graph::Value* y_scale = c.cast(c.required_input(6, "y_scale"), DType::kF32);
  graph::Value* y_zero = c.required_input(7, "y_zero_point");
  graph::Value* ratio = c.emit("Div", {c.emit("Mul", {x_scale, w_scale})[0], y_scale})[0];
  graph::Value* y = c.emit("Mul", {c.cast(acc, DType::kF64), c.cast(ratio, DType::kF64)})[0];
  c.results = std::vector<graph::Value*>{saturate(c, y, y_zero, y_zero->type.dtype, DType::kF64)};
}

}  // namespace

void register_quantize_adapters(AdapterTable& t) {
  t["ConvInteger"] = adapt_conv_integer;
  t["QLinearConv"] = adapt_qlinear_conv;
  t["QuantizeLinear"] = adapt_quantize;
  t["DequantizeLinear"] = adapt_dequantize;
  t["DynamicQuantizeLinear"] = adapt_dynamic_quantize;
  t["MatMulInteger"] = adapt_matmul_integer;
  t["QLinearMatMul"] = adapt_qlinear_matmul;
}

}  // namespace tessel::onnx_frontend
