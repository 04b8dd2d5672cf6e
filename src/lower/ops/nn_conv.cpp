// Compute definitions of Conv and ConvTranspose: one reduction block over
// (input channel of the group, kernel taps) per output element, reading the
// input re-laid out (window_input: padding, stride phases) or, where the
// target's layout choice says so (layout_choices.h), over the flat plane or
// over the output positions with the output channels innermost;
// ConvTranspose with padding as an in-bounds Select; the bias an injective
// stage after it.
#include <optional>

#include "ir/graph/ops/window_geometry.h"
#include "src/lower/conv_shape.h"
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

// The output channel dimension of a conv's reduction block. A grouped conv
// with several input and output channels per group (RegNet, ResNeXt) splits
// it into [group, channel of the group], oc = g * Mg + j: its input channel
// then depends on the group alone, so the weight alone reads j, which becomes
// the register tile's rows (as an ungrouped conv's output channel), and the
// block is no per-channel window that recomputes its group's re-laid-out
// input once per output channel.
struct OutputChannels {
  int64_t group = 1, in_per_group = 1, out_per_group = 1;
  bool split() const { return group > 1 && in_per_group > 1 && out_per_group > 1; }
  // The block's shape: out with its channel dimension split (or not).
  std::vector<int64_t> block_shape(std::vector<int64_t> shape) const {
    if (!split()) return shape;
    shape[1] = out_per_group;
    shape.insert(shape.begin() + 1, group);
    return shape;
  }
  // A block index -> the output channel, its input channel at ci, and the index past the channels.
  Expr oc(const std::vector<Expr>& s) const { return split() ? s[1] * out_per_group + s[2] : s[1]; }
  Expr input(const std::vector<Expr>& s, const Expr& ci) const {
    return split() ? s[1] * in_per_group + ci : input_channel(s[1], ci, group, in_per_group, out_per_group);
  }
  size_t rest() const { return split() ? 3 : 2; }
  // The block read at output index i ([n, oc, ...] -> [n, (g, j), ...]).
  std::vector<Expr> block_index(const std::vector<Expr>& i) const {
    if (!split()) return i;
    std::vector<Expr> b = {i[0], floordiv(i[1], out_per_group), floormod(i[1], out_per_group)};
    b.insert(b.end(), i.begin() + 2, i.end());
    return b;
  }
};

}  // namespace

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

namespace {

// A 2-D convolution computed as one flat row per output channel over the re-laid-out input
// plane of width W': Yf[n, oc, f], f = oh * W' + ow, reads the plane at
// f + th * W' + tw (th, tw: the tap's offsets), so consecutive f read
// consecutive elements and the vector loop runs over whole vectors. Columns
// ow >= OW and the f past OH * W' are computed and never read; the plane has
// zero rows below for their reads. Y[n, oc, oh, ow] = Yf[n, oc, oh * W' + ow].
// The flat extent is padded to a multiple of `align` (whole register tiles).
std::vector<TensorExpr> lower_flat_conv(LowerContext& ctx, const graph::Node& node, const std::vector<TensorExpr>& in,
                                        const WindowGeometry& g, const std::vector<int64_t>& out,
                                        const std::vector<int64_t>& extents, int64_t align) {
  const TensorExpr &x = in[0], &w = in[1];
  int64_t group = node.attrs.get_int("group");
  OutputChannels channels{group, w.shape[1], out[1] / group};
  DType t = accum_dtype(x.dtype);
  std::vector<int64_t> positions = relaid_positions(g, out);
  int64_t width = positions[1];
  int64_t flat = (out[2] * width + align - 1) / align * align;
  auto tap_reach = [&](size_t u) {  // the largest tap offset in positions
    int64_t tap = (g.kernel[u] - 1) * g.dilations[u];
    return g.strides[u] > 1 ? tap / g.strides[u] : tap;
  };
  int64_t last = flat - 1 + tap_reach(0) * width + tap_reach(1);
  int64_t extra_rows = std::max<int64_t>(0, last / width + 1 - positions[0]);
  WindowInput xin = window_input(ctx, stage_name(node), x, g, out, extra_rows, const_of(x.dtype, 0));
  auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    Expr f = s[channels.rest()];
    return cast(t, xin.at_flat(s[0], channels.input(s, r[0]), f, r, width, g)) *
           cast(t, w.at({channels.oc(s), r[0], r[1], r[2]}));
  };
  std::vector<int64_t> shape = channels.block_shape({out[0], out[1], flat});
  TensorExpr yf = ctx.reduce(stage_name(node), shape, t, extents, Combiner::kSum, value);
  TensorExpr y;
  y.shape = out;
  y.dtype = t;
  y.at = [yf, width, channels](const std::vector<Expr>& i) {
    return yf.at(channels.block_index({i[0], i[1], i[2] * width + i[3]}));
  };
  return {with_bias(y, in, x.dtype)};
}

// The last columns of a flat pointwise conv, from `first` on: fewer than the
// narrowest tile, so the tail is a few matrix-vector products. Its columns of
// X are copied first with the channels innermost (Xt[n, j, c]): each product
// then reads a row of W and a row of Xt in order (summed by lanes); read in
// place, a column of X is one plane apart per channel.
TensorExpr tail_columns(LowerContext& ctx, const std::string& name, const TensorExpr& x, const TensorExpr& w,
                        const std::vector<int64_t>& out, int64_t first) {
  DType t = accum_dtype(x.dtype);
  int64_t width = out[3], count = out[2] * out[3] - first, channels = w.shape[1];
  TensorExpr xt = ctx.compute(name + "_input", {out[0], count, channels}, x.dtype, [=](const std::vector<Expr>& i) {
    Expr j = i[1] + first;
    return x.at({i[0], i[2], floordiv(j, width), floormod(j, width)});
  });
  auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    return cast(t, xt.at({s[0], s[2], r[0]})) * cast(t, w.at({s[1], r[0], int_imm(0), int_imm(0)}));
  };
  return ctx.reduce(name, {out[0], out[1], count}, t, {channels}, Combiner::kSum, value);
}

// The plane a strided 1x1 convolution reads, Xs[n, c, h, w] = X[n, c, h * sh, w * sw],
// copied: its positions become one contiguous flat plane, a quarter of X at
// stride 2 (a window_input would copy every stride phase of X and pad it).
TensorExpr subsampled(LowerContext& ctx, const std::string& name, const TensorExpr& x,
                      const WindowGeometry& g, const std::vector<int64_t>& out) {
  if (g.strides[0] == 1 && g.strides[1] == 1) return x;
  std::vector<int64_t> shape = {out[0], x.shape[1], out[2], out[3]};
  return ctx.compute(name, shape, x.dtype, [x, g](const std::vector<Expr>& i) {
    Expr h = g.strides[0] == 1 ? i[2] : i[2] * g.strides[0];
    Expr w = g.strides[1] == 1 ? i[3] : i[3] * g.strides[1];
    return x.at({i[0], i[1], h, w});
  });
}

// A 1x1 convolution (no padding, one group) is a matmul over the flat plane:
// Y[n, oc, j] = sum over c: W[oc, c] * X[n, c, j], j = h * W + w, and X's
// plane (subsampled first at a stride) is flat and contiguous. The columns split at the
// largest multiple of `align`: one block over those (whole register tiles)
// and one over the rest. A short row (7, 14) as the tile's vector part was a
// vector, a half and a scalar.
std::vector<TensorExpr> lower_flat_pointwise(LowerContext& ctx, const graph::Node& node,
                                             const std::vector<TensorExpr>& in, const WindowGeometry& g,
                                             const std::vector<int64_t>& out, int64_t align) {
  const TensorExpr& w = in[1];
  TensorExpr x = subsampled(ctx, stage_name(node, "subsample"), in[0], g, out);
  DType t = accum_dtype(x.dtype);
  int64_t width = out[3], plane = out[2] * out[3], main = plane / align * align;
  auto columns = [&](const std::string& name, int64_t first, int64_t count) {
    auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
      Expr j = first == 0 ? s[2] : s[2] + first;
      Expr xv = x.at({s[0], r[0], floordiv(j, width), floormod(j, width)});
      return cast(t, xv) * cast(t, w.at({s[1], r[0], int_imm(0), int_imm(0)}));
    };
    return ctx.reduce(name, {out[0], out[1], count}, t, {w.shape[1]}, Combiner::kSum, value);
  };
  TESSEL_ICHECK(main > 0) << node.name << ": a flat pointwise conv of " << plane << " positions aligned to " << align;
  TensorExpr head = columns(stage_name(node), 0, main);
  // Where `align` is several tiles wide (three vectors, flat_pointwise_align)
  // and whole narrowest tiles are left over, they are a block of their own
  // computed like the head; fewer columns are matrix-vector products.
  std::optional<TensorExpr> tail;
  if (main < plane && (plane - main) % kNarrowestFlatTile == 0)
    tail = columns(stage_name(node, "tail"), main, plane - main);
  else if (main < plane)
    tail = tail_columns(ctx, stage_name(node, "tail"), x, w, out, main);
  TensorExpr y;
  y.shape = out;
  y.dtype = t;
  y.flat_tail = 2;  // its consumers iterate the flat plane too, and can join the matmul's tile
  if (tail) y.flat_head = main;
  y.at = [=](const std::vector<Expr>& i) {
    Expr j = i[2] * width + i[3];
    if (!tail) return head.at({i[0], i[1], j});
    // Both reads in bounds wherever the select is evaluated.
    Expr in_head = head.at({i[0], i[1], min(j, int_imm(main - 1))});
    Expr in_tail = tail->at({i[0], i[1], max(j - main, int_imm(0))});
    return select(j < int_imm(main), in_head, in_tail);
  };
  return {with_bias(y, in, x.dtype)};
}

// Y[n, oc, o...] = sum over ci < C/group, k...:
//   X[n, g * C/group + ci, o * s - pad + k * d ...] * W[oc, ci, k...]   (g = oc / (M/group))
// read through the re-laid-out input of window_input.
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
  ConvLayout layout = ctx.layouts().conv_layout(conv_shape_of(node));
  if (layout.form == ConvForm::kChannelsLast)
    return lower_channels_last_conv(ctx, node, in, g, out, layout.flat_align);
  if (layout.form == ConvForm::kFlatPointwise)
    return lower_flat_pointwise(ctx, node, in, g, out, layout.flat_align);
  if (layout.form == ConvForm::kFlat) return lower_flat_conv(ctx, node, in, g, out, extents, layout.flat_align);
  // A depthwise conv's taps are a few vector loads per output row, which
  // read a padded row at a stride as well as a phase of it; its phase split
  // was one more copy of the input per channel.
  bool depthwise = cg == 1;
  WindowInput xin = window_input(ctx, stage_name(node), x, g, out, 0, const_of(x.dtype, 0), !depthwise);
  OutputChannels channels{group, cg, mg};
  auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    Expr oc = channels.oc(s);
    std::vector<Expr> wi = {oc, r[0]};
    for (int d = 0; d < g.spatial(); ++d) wi.push_back(r[1 + size_t(d)]);
    std::vector<Expr> output = {s[0], oc};
    output.insert(output.end(), s.begin() + long(channels.rest()), s.end());
    return cast(t, xin.at(output, channels.input(s, r[0]), r, g)) * cast(t, w.at(wi));
  };
  TensorExpr block =
      ctx.reduce(stage_name(node), channels.block_shape(out), t, extents, Combiner::kSum, value);
  TensorExpr y = block;
  if (channels.split()) {
    y.buffer = {};
    y.shape = out;
    y.at = [block, channels](const std::vector<Expr>& i) { return block.at(channels.block_index(i)); };
  }
  return {with_bias(y, in, x.dtype)};
}

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
