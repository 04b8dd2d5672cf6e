// Compute definitions of Conv and ConvTranspose: one reduction block over
// (input channel of the group, kernel taps) per output element, padding as an
// in-bounds Select on the input read, the bias an injective stage after it.
#include "ir/graph/ops/window_geometry.h"
#include "src/lower/ops/nn_lowerings.h"

namespace tessel::lower::nn {

using namespace tir;

namespace {

using graph::ops::WindowGeometry;

std::vector<int64_t> spatial_of(const std::vector<int64_t>& shape) {
  return std::vector<int64_t>(shape.begin() + 2, shape.end());
}

// The input channel read by output channel oc at group-local channel ci.
Expr input_channel(const Expr& oc, const Expr& ci, int64_t group, int64_t in_per_group,
                   int64_t out_per_group) {
  if (group == 1) return ci;
  Expr g = out_per_group == 1 ? oc : floordiv(oc, out_per_group);
  return (in_per_group == 1 ? g : g * in_per_group) + ci;
}

// y + bias[channel] as `dtype`, composed into the consumer.
TensorExpr with_bias(const TensorExpr& y, const std::vector<TensorExpr>& in, DType dtype) {
  if (!has_expr(in, 2)) return cast_expr(y, dtype);
  TensorExpr out = y;
  TensorExpr bias = in[2];
  out.buffer = {};
  out.dtype = dtype;
  out.at = [y, bias, dtype](const std::vector<Expr>& idx) {
    return cast(dtype, y.at(idx) + cast(y.dtype, bias.at({idx[1]})));
  };
  return out;
}

// Y[n, oc, o...] = sum over ci < C/group, k...:
//   X[n, g * C/group + ci, o * s - pad + k * d ...] * W[oc, ci, k...]   (g = oc / (M/group))
std::vector<TensorExpr> lower_conv(LowerContext& ctx, const graph::Node& node,
                                   const std::vector<TensorExpr>& in) {
  const TensorExpr &x = in[0], &w = in[1];
  std::vector<int64_t> out = output_shape(node);
  std::vector<int64_t> kernel = graph::ops::conv_kernel_shape(node.attrs, spatial_of(w.shape), node.span());
  WindowGeometry g = graph::ops::window_geometry(node.attrs, spatial_of(x.shape), kernel, false, node.span());
  int64_t group = node.attrs.get_int("group");
  int64_t cg = w.shape[1], mg = out[1] / group;
  std::vector<int64_t> extents = {cg};
  extents.insert(extents.end(), kernel.begin(), kernel.end());
  DType t = accum_dtype(x.dtype);
  auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    std::vector<Expr> xi = {s[0], input_channel(s[1], r[0], group, cg, mg)};
    std::vector<Expr> wi = {s[1], r[0]};
    GuardedRead guard;
    for (int d = 0; d < g.spatial(); ++d) {
      size_t u = size_t(d);
      Expr i = window_index(s[2 + u], g.strides[u], g.pad_begin[u], r[1 + u], g.dilations[u]);
      guard.check(i, -g.pad_begin[u], (out[2 + u] - 1) * g.strides[u] - g.pad_begin[u] + g.extent(d) - 1,
                  g.in[u]);
      xi.push_back(i);
      wi.push_back(r[1 + u]);
    }
    return cast(t, guard.read(x, xi, const_of(x.dtype, 0))) * cast(t, w.at(wi));
  };
  TensorExpr y = ctx.reduce(stage_name(node), out, t, extents, Combiner::kSum, value);
  return {with_bias(y, in, x.dtype)};
}

// The transpose as a gather: output position o receives input position
// i = (o + pad - k * d) / s wherever that division is exact and i in range.
//   Y[n, oc, o...] = sum over ci < C/group, k...:
//     X[n, g * C/group + ci, i...] * W[g * C/group + ci, oc % (M/group), k...]
std::vector<TensorExpr> lower_conv_transpose(LowerContext& ctx, const graph::Node& node,
                                             const std::vector<TensorExpr>& in) {
  const TensorExpr &x = in[0], &w = in[1];
  std::vector<int64_t> out = output_shape(node);
  std::vector<int64_t> kernel = graph::ops::conv_kernel_shape(node.attrs, spatial_of(w.shape), node.span());
  WindowGeometry g =
      graph::ops::conv_transpose_geometry(node.attrs, spatial_of(x.shape), kernel, node.span());
  int64_t group = node.attrs.get_int("group");
  int64_t cg = x.shape[1] / group, mg = w.shape[1];
  std::vector<int64_t> extents = {cg};
  extents.insert(extents.end(), kernel.begin(), kernel.end());
  DType t = accum_dtype(x.dtype);
  auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    Expr ic = input_channel(s[1], r[0], group, cg, mg);
    std::vector<Expr> xi = {s[0], ic};
    std::vector<Expr> wi = {ic, group == 1 ? s[1] : floormod(s[1], mg)};
    GuardedRead guard;
    for (int d = 0; d < g.spatial(); ++d) {
      size_t u = size_t(d);
      int64_t stride = g.strides[u];
      // o + pad - k * d, spanning [pad - (K-1) * d, out - 1 + pad].
      Expr num = g.pad_begin[u] == 0 ? s[2 + u] : s[2 + u] + g.pad_begin[u];
      num = num - (g.dilations[u] == 1 ? r[1 + u] : r[1 + u] * g.dilations[u]);
      int64_t lowest = g.pad_begin[u] - (kernel[u] - 1) * g.dilations[u],
              highest = out[2 + u] - 1 + g.pad_begin[u];
      if (stride > 1) guard.require(eq(floormod(num, stride), int_imm(0)));
      Expr i = stride == 1 ? num : floordiv(num, stride);
      guard.check(i, lowest < 0 ? -1 : 0, highest < 0 ? -1 : highest / stride, g.in[u]);
      xi.push_back(i);
      wi.push_back(r[1 + u]);
    }
    return cast(t, guard.read(x, xi, const_of(x.dtype, 0))) * cast(t, w.at(wi));
  };
  TensorExpr y = ctx.reduce(stage_name(node), out, t, extents, Combiner::kSum, value);
  return {with_bias(y, in, x.dtype)};
}

}  // namespace

void register_conv_lowerings(LoweringRegistry& r) {
  r.add("Conv", lower_conv);
  r.add("ConvTranspose", lower_conv_transpose);
}

}  // namespace tessel::lower::nn
