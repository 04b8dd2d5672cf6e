// Schemas and shape functions of the ops that read or make shapes: Shape and
// Size (whose values are known while compiling when the input's shape is
// static) and ConstantOfShape.
#include <climits>

#include "ir/graph/op_registry.h"
#include "ir/graph/ops/shape_helpers.h"
#include "ir/graph/ops/shape_ops.h"

namespace tessel::graph::ops {

namespace {

// The value is set whenever the reported dimensions are known, so a Reshape
// target computed from it folds to a constant.
void infer_shape(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  if (!in.rank_known) return ctx.set_output(0, TensorType::of_rank(DType::kI64, 1));
  auto [first, last] = shape_range(in.rank(), ctx.attrs().get_int("start"), ctx.attrs().get_int("end"));
  std::vector<int64_t> dims;
  for (int d = first; d < last; ++d) dims.push_back(in.dims[size_t(d)].value);
  bool known = std::all_of(dims.begin(), dims.end(), [](int64_t v) { return v >= 0; });
  if (known) return ctx.set_output_value(0, Tensor::from_i64(dims));
  ctx.set_output(0, TensorType(DType::kI64, {int64_t(dims.size())}));
}

void infer_size(InferContext& ctx) {
  auto n = ctx.input(0).numel();
  if (n) return ctx.set_output_value(0, Tensor::from_i64({*n}, {}));
  ctx.set_output(0, TensorType(DType::kI64, Dims{}));
}

void infer_constant_of_shape(InferContext& ctx) {
  const Tensor& value = ctx.attrs().get_tensor("value");
  TESSEL_USER_CHECK(value.numel() == 1, ctx.span())
      << "'value' must hold exactly one element, got " << value.type_str();
  const TensorType& shape = ctx.input(0);
  TESSEL_USER_CHECK(shape.dtype == DType::kI64, ctx.span())
      << "the shape input must be an int64 tensor, got " << dtype_name(shape.dtype);
  TESSEL_USER_CHECK(!shape.rank_known || shape.rank() == 1, ctx.span())
      << "the shape input must be 1-D, got " << shape.str();
  std::optional<std::vector<int64_t>> dims = ctx.int_values(0);
  if (!dims) {
    bool len_known = shape.rank_known && shape.dims[0].is_known();
    return ctx.set_output(0, len_known ? TensorType::of_rank(value.dtype(), int(shape.dims[0].value))
                                       : TensorType::unknown_rank(value.dtype()));
  }
  for (int64_t d : *dims)
    TESSEL_USER_CHECK(d >= 0, ctx.span()) << "shape " << dims_str(*dims) << " has a negative entry";
  ctx.set_output(0, TensorType(value.dtype(), *dims));
}

}  // namespace

void register_shape_query_ops(OpRegistry& r) {
  // Shape and Size read only metadata, so nothing fuses with them (opaque);
  // they usually fold away. `end` INT64_MAX: not given, i.e. the rank.
  r.def("Shape", OpPattern::kOpaque)
      .inputs(1)
      .outputs(1)
      .attr("start", AttrType::kInt, int64_t(0))
      .attr("end", AttrType::kInt, int64_t(INT64_MAX))
      .infer(infer_shape);
  r.def("Size", OpPattern::kOpaque).inputs(1).outputs(1).infer(infer_size);
  // A fill: every output element is the same function of no input (injective).
  r.def("ConstantOfShape", OpPattern::kInjective)
      .inputs(1)
      .outputs(1)
      .attr("value", AttrType::kTensor, Tensor(DType::kF32, {1}))
      .infer(infer_constant_of_shape);
}

}  // namespace tessel::graph::ops
