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

// The convolution's view of its input: X itself, or X re-laid out by one
// stage so that the reduction reads it without a guard and, along each
// spatial dimension, with unit stride in the output position:
//  - zero padding materialised: a guard in the reduction would put a branch
//    in its innermost loops, which keeps them from being vectorized;
//  - a strided dimension split into phases, Xs[.., ph, .., q] = Xpad[.., q * s + ph],
//    so the window element o * s + k * d is Xs[.., (k * d) % s, .., o + (k * d) / s]:
//    consecutive outputs read consecutive elements (a gather otherwise).
// The stage costs one pass over the input.
struct ConvInput {
  TensorExpr tensor;
  std::vector<int64_t> pad;  // per spatial dim: the padding the index still subtracts
  std::vector<bool> phased;  // per spatial dim: split into stride phases

  Expr at(const std::vector<Expr>& s, const Expr& channel, const std::vector<Expr>& r,
          const WindowGeometry& g) const {
    std::vector<Expr> idx = {s[0], channel}, positions;
    for (int d = 0; d < g.spatial(); ++d) {
      size_t u = size_t(d);
      Expr tap = g.dilations[u] == 1 ? r[1 + u] : r[1 + u] * g.dilations[u];
      if (!phased[u]) {
        positions.push_back(window_index(s[2 + u], g.strides[u], pad[u], r[1 + u], g.dilations[u]));
        continue;
      }
      idx.push_back(floormod(tap, g.strides[u]));
      positions.push_back(s[2 + u] + floordiv(tap, g.strides[u]));
    }
    idx.insert(idx.end(), positions.begin(), positions.end());
    return tensor.at(idx);
  }
};

ConvInput conv_input(LowerContext& ctx, const std::string& name, const TensorExpr& x, const WindowGeometry& g,
                     const std::vector<int64_t>& out) {
  size_t dims = size_t(g.spatial());
  ConvInput in{x, std::vector<int64_t>(g.pad_begin.begin(), g.pad_begin.end()), std::vector<bool>(dims, false)};
  std::vector<int64_t> padded(dims);  // the padded extent each window position may reach
  bool relayout = false;
  for (size_t u = 0; u < dims; ++u) {
    int64_t highest = (out[2 + u] - 1) * g.strides[u] - g.pad_begin[u] + g.extent(int(u)) - 1;
    padded[u] = std::max(highest + 1, g.in[u]) + g.pad_begin[u];
    in.phased[u] = g.strides[u] > 1;
    relayout = relayout || g.pad_begin[u] > 0 || highest >= g.in[u] || in.phased[u];
  }
  if (!relayout) return in;
  std::vector<int64_t> shape = {x.shape[0], x.shape[1]}, positions;
  for (size_t u = 0; u < dims; ++u) {
    int64_t s = in.phased[u] ? g.strides[u] : 1;
    if (in.phased[u]) shape.push_back(s);
    positions.push_back((padded[u] + s - 1) / s);
  }
  shape.insert(shape.end(), positions.begin(), positions.end());
  std::vector<bool> phased = in.phased;
  in.tensor = ctx.compute(ctx.unique_block_name(name + "_pad"), shape, x.dtype, [=](const std::vector<Expr>& p) {
    std::vector<Expr> xi = {p[0], p[1]};
    GuardedRead guard;
    size_t phase = 2, position = shape.size() - dims;
    for (size_t u = 0; u < dims; ++u) {
      Expr i = p[position + u];
      int64_t highest = positions[u] - 1;
      if (phased[u]) {
        i = i * g.strides[u] + p[phase++];
        highest = highest * g.strides[u] + g.strides[u] - 1;
      }
      if (g.pad_begin[u] != 0) i = i - g.pad_begin[u];
      guard.check(i, -g.pad_begin[u], highest - g.pad_begin[u], g.in[u]);
      xi.push_back(i);
    }
    return guard.read(x, xi, const_of(x.dtype, 0));
  });
  in.pad.assign(dims, 0);
  return in;
}

// Y[n, oc, o...] = sum over ci < C/group, k...:
//   X[n, g * C/group + ci, o * s - pad + k * d ...] * W[oc, ci, k...]   (g = oc / (M/group))
// read through the re-laid-out input of conv_input.
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
  ConvInput xin = conv_input(ctx, stage_name(node), x, g, out);
  auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    std::vector<Expr> wi = {s[1], r[0]};
    for (int d = 0; d < g.spatial(); ++d) wi.push_back(r[1 + size_t(d)]);
    Expr channel = input_channel(s[1], r[0], group, cg, mg);
    return cast(t, xin.at(s, channel, r, g)) * cast(t, w.at(wi));
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
