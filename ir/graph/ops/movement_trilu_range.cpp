// Schemas and shape functions of Trilu (keep one triangle of each matrix of a
// batch, zero the rest) and Range (the 1-D sequence start, start + delta, ...
// below limit). Both are injective and count no FLOPs.
#include <cmath>

#include "ir/graph/op_registry.h"
#include "ir/graph/ops/movement_geometry.h"
#include "ir/graph/ops/shape_helpers.h"

namespace tessel::graph::ops {

namespace {

// A scalar-like input (rank 0 or one element, when the shape is known).
void check_one_element(const InferContext& ctx, size_t i, const char* what) {
  auto n = ctx.input(i).numel();
  TESSEL_USER_CHECK(!n || *n == 1, ctx.span())
      << "'" << what << "' must be a scalar, got " << ctx.input(i).str();
}

void infer_trilu(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  TESSEL_USER_CHECK(!in.rank_known || in.rank() >= 2, ctx.span())
      << "the input must have rank 2 or more, got " << in.str();
  if (ctx.has_input(1)) {
    TESSEL_USER_CHECK(ctx.input(1).dtype == DType::kI64, ctx.span())
        << "'k' must be an int64 scalar, got " << ctx.input(1).str();
    check_one_element(ctx, 1, "k");
  }
  ctx.set_output(0, in);
}

bool is_range_dtype(DType t) {
  return is_float(t) || t == DType::kI32 || t == DType::kI64;
}

// max(ceil((limit - start) / delta), 0). As ONNX Runtime does, a float
// difference is taken in the element type (f64 for f64, f32 otherwise) and
// divided in double; integers divide exactly.
int64_t range_length(DType t, const Tensor& start, const Tensor& limit, const Tensor& delta,
                     const Span& span) {
  if (is_integer(t)) {
    int64_t s = start.get_i64(0), l = limit.get_i64(0), d = delta.get_i64(0);
    TESSEL_USER_CHECK(d != 0, span) << "'delta' must be non-zero";
    __int128 diff = __int128(l) - s;  // int64 limit - start may overflow int64
    __int128 n = diff / d + ((diff % d != 0 && (diff < 0) == (d < 0)) ? 1 : 0);  // ceil
    return n > 0 ? int64_t(n) : 0;
  }
  double s = start.get_f64(0), l = limit.get_f64(0), d = delta.get_f64(0);
  TESSEL_USER_CHECK(d != 0, span) << "'delta' must be non-zero";
  double diff = t == DType::kF64 ? l - s : double(float(l) - float(s));
  double n = std::ceil(diff / d);
  TESSEL_USER_CHECK(std::isfinite(n) && n < 9.0e15, span)
      << "Range from " << s << " to " << l << " by " << d << " has no finite length";
  return n > 0 ? int64_t(n) : 0;
}

void infer_range(InferContext& ctx) {
  DType t = ctx.input(0).dtype;
  TESSEL_USER_CHECK(is_range_dtype(t), ctx.span())
      << "Range takes floating-point, int32 or int64 scalars, got " << dtype_name(t);
  check_same_dtype(ctx, {0, 1, 2});
  const char* names[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) check_one_element(ctx, i, names[i]);
  const Tensor *start = ctx.value(0), *limit = ctx.value(1), *delta = ctx.value(2);
  if (!start || !limit || !delta) return ctx.set_output(0, TensorType::of_rank(t, 1));
  for (const Tensor* v : {start, limit, delta})
    TESSEL_USER_CHECK(v->numel() == 1, ctx.span()) << "Range's inputs must be scalars";
  ctx.set_output(0, TensorType(t, {range_length(t, *start, *limit, *delta, ctx.span())}));
}

}  // namespace

void register_movement_trilu_range_ops(OpRegistry& r) {
  r.def("Trilu", OpPattern::kInjective)
      .inputs(1, 2)
      .outputs(1)
      .attr("upper", AttrType::kInt, int64_t(1))
      .infer(infer_trilu);
  // Injective like TVM's arange: each output element is a function of its index.
  r.def("Range", OpPattern::kInjective).inputs(3).outputs(1).infer(infer_range);
}

}  // namespace tessel::graph::ops
