// Schemas and shape functions of the windowed nn ops: Conv, ConvTranspose,
// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
#include "ir/graph/op_registry.h"
#include "ir/graph/ops/nn_register.h"
#include "ir/graph/ops/shape_helpers.h"
#include "ir/graph/ops/window_geometry.h"

namespace tessel::graph::ops {

namespace {

std::vector<int64_t> dim_values(const std::vector<Dim>& dims, size_t from) {
  std::vector<int64_t> out;
  for (size_t i = from; i < dims.size(); ++i) out.push_back(dims[i].value);
  return out;
}

bool all_known(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x < 0) return false;
  return true;
}

// [N, channels, out...] with unknown entries where out is -1.
TensorType windowed_output(DType dtype, const Dim& n, const Dim& channels, const std::vector<int64_t>& out) {
  TensorType t;
  t.dtype = dtype;
  t.dims = {n, channels};
  for (int64_t o : out) t.dims.push_back(o >= 0 ? Dim::known(o) : Dim::unknown());
  return t;
}

// Shared checks of Conv and ConvTranspose: ranks, dtypes, group, bias size.
// Returns the rank (0 when unknown). bias_channels is the dimension B must match.
int check_conv_operands(InferContext& ctx, const Dim& bias_channels) {
  check_same_dtype(ctx, {0, 1, 2});
  const TensorType& x = ctx.input(0);
  const TensorType& w = ctx.input(1);
  // int32: the integer convolutions ConvInteger and QLinearConv import to.
  TESSEL_USER_CHECK(is_float(x.dtype) || x.dtype == DType::kI32, ctx.span())
      << ctx.node().op << " needs a float or int32 input, got " << dtype_name(x.dtype);
  TESSEL_USER_CHECK(ctx.attrs().get_int("group") >= 1, ctx.span()) << "attribute 'group' must be positive";
  int rank = x.rank_known ? x.rank() : (w.rank_known ? w.rank() : 0);
  if (rank == 0) return 0;
  TESSEL_USER_CHECK(rank >= 3, ctx.span())
      << "the input must be N x C x D1 x ... (rank at least 3), got " << x.str();
  TESSEL_USER_CHECK(!w.rank_known || w.rank() == rank, ctx.span())
      << "the weight " << w.str() << " must have the input's rank " << rank;
  if (ctx.has_input(2) && ctx.input(2).rank_known) {
    const TensorType& b = ctx.input(2);
    TESSEL_USER_CHECK(b.rank() == 1, ctx.span()) << "the bias must be 1-D, got " << b.str();
    TESSEL_USER_CHECK(
        !b.dims[0].is_known() || !bias_channels.is_known() || b.dims[0].value == bias_channels.value,
        ctx.span())
        << "the bias has " << b.dims[0].value << " entries, expected " << bias_channels.value;
  }
  return rank;
}

void infer_conv(InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& w = ctx.input(1);
  Dim m = w.rank_known && w.rank() >= 1 ? w.dims[0] : Dim::unknown();
  int rank = check_conv_operands(ctx, m);
  if (rank == 0) return ctx.set_output(0, TensorType::unknown_rank(x.dtype));
  int64_t group = ctx.attrs().get_int("group");
  TensorType xs = x.rank_known ? x : TensorType::of_rank(x.dtype, rank);
  TensorType ws = w.rank_known ? w : TensorType::of_rank(w.dtype, rank);
  const Dim &c = xs.dims[1], &cg = ws.dims[1];
  TESSEL_USER_CHECK(!c.is_known() || !cg.is_known() || c.value == cg.value * group, ctx.span())
      << "the input has " << c.value << " channels, but the weight expects " << cg.value << " x group "
      << group;
  TESSEL_USER_CHECK(!m.is_known() || m.value % group == 0, ctx.span())
      << "the output channels " << m.value << " are not divisible by group " << group;
  std::vector<int64_t> kernel = conv_kernel_shape(ctx.attrs(), dim_values(ws.dims, 2), ctx.span());
  std::vector<int64_t> out(size_t(rank - 2), -1);
  if (all_known(kernel))
    out = window_geometry(ctx.attrs(), dim_values(xs.dims, 2), kernel, false, ctx.span()).out;
  ctx.set_output(0, windowed_output(x.dtype, xs.dims[0], m, out));
}

// W is [C, M / group, k...]; the output has M channels.
void infer_conv_transpose(InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& w = ctx.input(1);
  int64_t group = ctx.attrs().get_int("group");
  Dim m = w.rank_known && w.rank() >= 2 && w.dims[1].is_known() ? Dim::known(w.dims[1].value * group)
                                                                : Dim::unknown();
  int rank = check_conv_operands(ctx, m);
  if (rank == 0) return ctx.set_output(0, TensorType::unknown_rank(x.dtype));
  TensorType xs = x.rank_known ? x : TensorType::of_rank(x.dtype, rank);
  TensorType ws = w.rank_known ? w : TensorType::of_rank(w.dtype, rank);
  TESSEL_USER_CHECK(!xs.dims[1].is_known() || !ws.dims[0].is_known() || xs.dims[1].value == ws.dims[0].value,
                    ctx.span())
      << "the input has " << xs.dims[1].value << " channels, but the weight has " << ws.dims[0].value;
  std::vector<int64_t> kernel = conv_kernel_shape(ctx.attrs(), dim_values(ws.dims, 2), ctx.span());
  std::vector<int64_t> out(size_t(rank - 2), -1);
  if (all_known(kernel))
    out = conv_transpose_geometry(ctx.attrs(), dim_values(xs.dims, 2), kernel, ctx.span()).out;
  ctx.set_output(0, windowed_output(x.dtype, xs.dims[0], m, out));
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// 2 FLOPs per multiply-add; one more per output for the bias.
int64_t conv_flops(const Node& n) {
  const TensorType& w = n.inputs[1]->type;
  if (!w.is_static()) return 0;
  Dims wd = w.static_dims();
  int64_t taps = product(Dims(wd.begin() + 1, wd.end()));  // C / group x kernel
  return 2 * output_elements(n) * taps + (n.has_input(2) ? output_elements(n) : 0);
}

// Every input element meets every weight of its group once.
int64_t conv_transpose_flops(const Node& n) {
  const TensorType& x = n.inputs[0]->type;
  const TensorType& w = n.inputs[1]->type;
  if (!x.is_static() || !w.is_static()) return 0;
  Dims wd = w.static_dims();
  return 2 * *x.numel() * product(Dims(wd.begin() + 1, wd.end())) + (n.has_input(2) ? output_elements(n) : 0);
}

// As ONNX Runtime (PoolAttributes: "Pad should be smaller than kernel"), explicit
// pads must be smaller than the kernel (not its dilated extent) on both sides:
// otherwise a window can lie wholly in the padding, a max of nothing.
void check_pads_below_kernel(const Attrs& attrs, const std::vector<int64_t>& kernel, const Span& span) {
  const AttrValue* v = attrs.find("pads");
  if (v == nullptr || attrs.get_string("auto_pad") != "NOTSET") return;
  const auto& pads = std::get<std::vector<int64_t>>(*v);
  size_t n = kernel.size();
  if (pads.size() != 2 * n) return;  // window_geometry reports it
  for (size_t i = 0; i < n; ++i)
    TESSEL_USER_CHECK(pads[i] < kernel[i] && pads[n + i] < kernel[i], span)
        << "attribute 'pads' (" << pads[i] << ", " << pads[n + i] << ") of spatial dimension " << i
        << " must be smaller than its kernel size " << kernel[i];
}

void infer_pool(InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  bool is_max = ctx.node().op == "MaxPool";
  bool dtype_ok = is_float(x.dtype) || (is_max && (x.dtype == DType::kI8 || x.dtype == DType::kU8));
  TESSEL_USER_CHECK(dtype_ok, ctx.span())
      << ctx.node().op << " does not support dtype " << dtype_name(x.dtype);
  if (is_max) {
    int64_t order = ctx.attrs().get_int("storage_order");
    TESSEL_USER_CHECK(order == 0 || order == 1, ctx.span()) << "attribute 'storage_order' must be 0 or 1";
  }
  const std::vector<int64_t>& kernel = ctx.attrs().get_ints("kernel_shape");
  TESSEL_USER_CHECK(!x.rank_known || x.rank() == int(kernel.size()) + 2, ctx.span())
      << "kernel_shape has " << kernel.size() << " dimensions, so the input must have rank "
      << kernel.size() + 2 << ", got " << x.str();
  TensorType xs = x.rank_known ? x : TensorType::of_rank(x.dtype, int(kernel.size()) + 2);
  check_pads_below_kernel(ctx.attrs(), kernel, ctx.span());
  bool ceil_mode = ctx.attrs().get_int("ceil_mode") != 0;
  WindowGeometry g = window_geometry(ctx.attrs(), dim_values(xs.dims, 2), kernel, ceil_mode, ctx.span());
  ctx.set_output(0, windowed_output(x.dtype, xs.dims[0], xs.dims[1], g.out));
  if (ctx.num_outputs() == 2) ctx.set_output(1, windowed_output(DType::kI64, xs.dims[0], xs.dims[1], g.out));
}

// One comparison (max) or addition (average) per window tap, plus the division.
int64_t pool_flops(const Node& n) {
  int64_t taps = product(n.attrs.get_ints("kernel_shape"));
  return output_elements(n) * (taps + (n.op == "AveragePool" ? 1 : 0));
}

void infer_global_pool(InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  TESSEL_USER_CHECK(is_float(x.dtype), ctx.span())
      << ctx.node().op << " needs a float input, got " << dtype_name(x.dtype);
  if (!x.rank_known) return ctx.set_output(0, x);
  TESSEL_USER_CHECK(x.rank() >= 2, ctx.span()) << "the input must be N x C x D1 x ..., got " << x.str();
  TensorType out = x;
  for (size_t i = 2; i < out.dims.size(); ++i) out.dims[i] = Dim::known(1);
  ctx.set_output(0, out);
}

int64_t global_pool_flops(const Node& n) {
  auto in = n.inputs[0]->type.numel();
  return in ? *in : 0;
}

}  // namespace

void register_conv_pool_ops(OpRegistry& r) {
  const std::vector<int64_t> none;
  auto window_attrs = [&](OpDef d) {
    return d.attr("auto_pad", AttrType::kString, std::string("NOTSET"))
        .attr("dilations", AttrType::kInts, none)
        .attr("pads", AttrType::kInts, none)
        .attr("strides", AttrType::kInts, none);
  };
  window_attrs(r.def("Conv", OpPattern::kOutElemwiseFusable))
      .inputs(2, 3)
      .outputs(1)
      .attr("group", AttrType::kInt, int64_t(1))
      .attr("kernel_shape", AttrType::kInts, none)
      .infer(infer_conv)
      .flops(conv_flops);
  window_attrs(r.def("ConvTranspose", OpPattern::kOutElemwiseFusable))
      .inputs(2, 3)
      .outputs(1)
      .attr("group", AttrType::kInt, int64_t(1))
      .attr("kernel_shape", AttrType::kInts, none)
      .attr("output_padding", AttrType::kInts, none)
      .attr("output_shape", AttrType::kInts, none)
      .infer(infer_conv_transpose)
      .flops(conv_transpose_flops);
  // Windowed pools read a small neighbourhood per output, like a depthwise
  // Conv, so an elementwise consumer can fuse into their output loop.
  window_attrs(r.def("MaxPool", OpPattern::kOutElemwiseFusable))
      .inputs(1)
      .outputs(1, 2)
      .attr("ceil_mode", AttrType::kInt, int64_t(0))
      .attr("kernel_shape", AttrType::kInts)
      .attr("storage_order", AttrType::kInt, int64_t(0))
      .infer(infer_pool)
      .flops(pool_flops);
  window_attrs(r.def("AveragePool", OpPattern::kOutElemwiseFusable))
      .inputs(1)
      .outputs(1)
      .attr("ceil_mode", AttrType::kInt, int64_t(0))
      .attr("count_include_pad", AttrType::kInt, int64_t(0))
      .attr("kernel_shape", AttrType::kInts)
      .infer(infer_pool)
      .flops(pool_flops);
  // Global pools are plain reductions over the spatial axes.
  r.def("GlobalAveragePool", OpPattern::kReduce)
      .inputs(1)
      .outputs(1)
      .infer(infer_global_pool)
      .flops(global_pool_flops);
  r.def("GlobalMaxPool", OpPattern::kReduce)
      .inputs(1)
      .outputs(1)
      .infer(infer_global_pool)
      .flops(global_pool_flops);
}

}  // namespace tessel::graph::ops
