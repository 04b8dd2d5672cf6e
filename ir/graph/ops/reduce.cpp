// Schemas and shape functions of the reduce ops (ReduceSum, ReduceMean, ...,
// in the newest ONNX form: axes an optional input, as in opset 18 and
// ReduceSum-13) and of ArgMax / ArgMin.
#include "ir/graph/op_registry.h"
#include "ir/graph/ops/reduce_axes.h"
#include "ir/graph/ops/register.h"
#include "ir/graph/ops/shape_helpers.h"

namespace tessel::graph::ops {

std::vector<bool> reduced_axes(const std::vector<int64_t>& axes, int rank, bool noop_with_empty_axes,
                               const Span& span) {
  if (axes.empty()) return std::vector<bool>(size_t(rank), !noop_with_empty_axes);
  TESSEL_USER_CHECK(rank > 0, span) << "a scalar has no axis to reduce, got axes " << dims_str(axes);
  std::vector<bool> reduced(size_t(rank), false);
  for (int a : normalize_axes(axes, rank, span)) reduced[size_t(a)] = true;
  return reduced;
}

namespace {

// Which element types a reduce op accepts (ONNX allows bool only for Max/Min).
enum class Accepts { kNumeric, kNumericOrBool };

void check_reduce_dtype(const InferContext& ctx, Accepts accepts) {
  DType t = ctx.input(0).dtype;
  TESSEL_USER_CHECK(t != DType::kBool || accepts == Accepts::kNumericOrBool, ctx.span())
      << ctx.node().op << " does not accept bool tensors";
  if (!ctx.has_input(1)) return;
  TESSEL_USER_CHECK(ctx.input(1).dtype == DType::kI64, ctx.span())
      << "'axes' must be an int64 tensor, got " << dtype_name(ctx.input(1).dtype);
  const TensorType& axes = ctx.input(1);
  TESSEL_USER_CHECK(!axes.rank_known || axes.rank() == 1, ctx.span())
      << "'axes' must be 1-D, got " << axes.str();
}

void infer_reduce(InferContext& ctx, Accepts accepts) {
  check_reduce_dtype(ctx, accepts);
  const TensorType& in = ctx.input(0);
  bool keep = ctx.attrs().get_int("keepdims") != 0;
  bool noop = ctx.attrs().get_int("noop_with_empty_axes") != 0;
  std::optional<std::vector<int64_t>> axes = std::vector<int64_t>{};
  if (ctx.has_input(1)) axes = ctx.int_values(1);
  if (!in.rank_known) return ctx.set_output(0, TensorType::unknown_rank(in.dtype));
  if (!axes) {
    // Which axes go is known only at run time; with keepdims the rank stays.
    return ctx.set_output(
        0, keep ? TensorType::of_rank(in.dtype, in.rank()) : TensorType::unknown_rank(in.dtype));
  }
  std::vector<bool> reduced = reduced_axes(*axes, in.rank(), noop, ctx.span());
  TensorType out;
  out.dtype = in.dtype;
  for (int d = 0; d < in.rank(); ++d) {
    if (!reduced[size_t(d)])
      out.dims.push_back(in.dims[size_t(d)]);
    else if (keep)
      out.dims.push_back(Dim::known(1));
  }
  ctx.set_output(0, out);
}

// ArgMax / ArgMin: the int64 index of the extreme along one axis.
void infer_arg_reduce(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  TESSEL_USER_CHECK(in.dtype != DType::kBool, ctx.span()) << ctx.node().op << " does not accept bool tensors";
  if (!in.rank_known) return ctx.set_output(0, TensorType::unknown_rank(DType::kI64));
  TESSEL_USER_CHECK(in.rank() > 0, ctx.span()) << ctx.node().op << " needs at least one axis, got a scalar";
  int axis = normalize_axis(ctx.attrs().get_int("axis"), in.rank(), ctx.span());
  const Dim& d = in.dims[size_t(axis)];
  TESSEL_USER_CHECK(!d.is_known() || d.value > 0, ctx.span())
      << "axis " << axis << " of " << in.str() << " is empty: there is no extreme to find";
  TensorType out = in;
  out.dtype = DType::kI64;
  if (ctx.attrs().get_int("keepdims") != 0)
    out.dims[size_t(axis)] = Dim::known(1);
  else
    out.dims.erase(out.dims.begin() + axis);
  ctx.set_output(0, out);
}

// FLOPs per input element: 1 for a plain fold (add, multiply, compare, |x|),
// 2 for a square and an add, 4 for LogSumExp (max, subtract, exp, add). The
// per-output finish (divide, sqrt, log) is not counted.
FlopsFn reduce_flops(int64_t per_element) {
  return [per_element](const Node& n) -> int64_t {
    auto elems = n.inputs[0]->type.numel();
    return elems ? per_element * *elems : 0;
  };
}

void def_reduce(OpRegistry& r, const std::string& op, Accepts accepts, int64_t flops_per_element) {
  r.def(op, OpPattern::kReduce)
      .inputs(1, 2)
      .outputs(1)
      .attr("keepdims", AttrType::kInt, int64_t(1))
      .attr("noop_with_empty_axes", AttrType::kInt, int64_t(0))
      .infer([accepts](InferContext& ctx) { infer_reduce(ctx, accepts); })
      .flops(reduce_flops(flops_per_element));
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  def_reduce(r, "ReduceSum", Accepts::kNumeric, 1);
  def_reduce(r, "ReduceMean", Accepts::kNumeric, 1);
  def_reduce(r, "ReduceProd", Accepts::kNumeric, 1);
  def_reduce(r, "ReduceMax", Accepts::kNumericOrBool, 1);
  def_reduce(r, "ReduceMin", Accepts::kNumericOrBool, 1);
  def_reduce(r, "ReduceL1", Accepts::kNumeric, 1);
  def_reduce(r, "ReduceL2", Accepts::kNumeric, 2);
  def_reduce(r, "ReduceSumSquare", Accepts::kNumeric, 2);
  def_reduce(r, "ReduceLogSum", Accepts::kNumeric, 1);
  def_reduce(r, "ReduceLogSumExp", Accepts::kNumeric, 4);
  for (const char* op : {"ArgMax", "ArgMin"})
    r.def(op, OpPattern::kReduce)
        .inputs(1)
        .outputs(1)
        .attr("axis", AttrType::kInt, int64_t(0))
        .attr("keepdims", AttrType::kInt, int64_t(1))
        .attr("select_last_index", AttrType::kInt, int64_t(0))
        .infer(infer_arg_reduce)
        .flops(reduce_flops(1));
}

}  // namespace tessel::graph::ops
