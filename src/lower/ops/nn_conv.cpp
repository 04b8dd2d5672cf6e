// Compute definitions of Conv and ConvTranspose: one reduction block over
// (input channel of the group, kernel taps) per output element, padding as an
// in-bounds Select on the input read, the bias an injective stage after it.
#include <optional>

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

  // Tap r along dim u in input elements (k * d), and split by the stride:
  // its phase, and its offset in positions of the re-laid-out input.
  static Expr tap(const std::vector<Expr>& r, size_t u, const WindowGeometry& g) {
    return g.dilations[u] == 1 ? r[1 + u] : r[1 + u] * g.dilations[u];
  }
  Expr tap_phase(const std::vector<Expr>& r, size_t u, const WindowGeometry& g) const {
    return floormod(tap(r, u, g), g.strides[u]);
  }
  Expr tap_position(const std::vector<Expr>& r, size_t u, const WindowGeometry& g) const {
    return phased[u] ? floordiv(tap(r, u, g), g.strides[u]) : tap(r, u, g);
  }

  // The re-laid-out 2-D input read at flat position f of a plane of width
  // `width`: the element f + (tap offset) of the plane, as [row, column].
  Expr at_flat(const Expr& n, const Expr& channel, const Expr& f, const std::vector<Expr>& r, int64_t width,
               const WindowGeometry& g) const {
    std::vector<Expr> idx = {n, channel};
    for (size_t u = 0; u < 2; ++u)
      if (phased[u]) idx.push_back(tap_phase(r, u, g));
    Expr p = f + tap_position(r, 0, g) * width + tap_position(r, 1, g);
    idx.push_back(floordiv(p, width));
    idx.push_back(floormod(p, width));
    return tensor.at(idx);
  }

  Expr at(const std::vector<Expr>& s, const Expr& channel, const std::vector<Expr>& r,
          const WindowGeometry& g) const {
    std::vector<Expr> idx = {s[0], channel}, positions;
    for (size_t u = 0; u < size_t(g.spatial()); ++u) {
      if (!phased[u]) {
        positions.push_back(window_index(s[2 + u], g.strides[u], pad[u], r[1 + u], g.dilations[u]));
        continue;
      }
      idx.push_back(tap_phase(r, u, g));
      positions.push_back(s[2 + u] + tap_position(r, u, g));
    }
    idx.insert(idx.end(), positions.begin(), positions.end());
    return tensor.at(idx);
  }
};

// The extents of the re-laid-out input's positions, per spatial dim.
std::vector<int64_t> relaid_positions(const WindowGeometry& g, const std::vector<int64_t>& out) {
  std::vector<int64_t> positions;
  for (size_t u = 0; u < size_t(g.spatial()); ++u) {
    int64_t highest = (out[2 + u] - 1) * g.strides[u] - g.pad_begin[u] + g.extent(int(u)) - 1;
    int64_t padded = std::max(highest + 1, g.in[u]) + g.pad_begin[u];
    int64_t s = std::max<int64_t>(g.strides[u], 1);
    positions.push_back((padded + s - 1) / s);
  }
  return positions;
}

// One re-layout stage over x (spatial extents `extents`): position q of
// spatial dim u, in phase ph when phased, reads x at q * s + ph - pad[u],
// zero outside x.
TensorExpr relayout_stage(LowerContext& ctx, const std::string& name, const TensorExpr& x, const WindowGeometry& g,
                          const std::vector<int64_t>& positions, const std::vector<bool>& phased,
                          const std::vector<int64_t>& pad, const std::vector<int64_t>& extents) {
  size_t dims = positions.size();
  std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
  for (size_t u = 0; u < dims; ++u)
    if (phased[u]) shape.push_back(g.strides[u]);
  shape.insert(shape.end(), positions.begin(), positions.end());
  return ctx.compute(ctx.unique_block_name(name), shape, x.dtype, [=](const std::vector<Expr>& p) {
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
      if (pad[u] != 0) i = i - pad[u];
      guard.check(i, -pad[u], highest - pad[u], extents[u]);
      xi.push_back(i);
    }
    return guard.read(x, xi, const_of(x.dtype, 0));
  });
}

// extra_rows: zero rows appended to the first spatial dim's positions (for
// the reads of a flat convolution past its last output row); forces the stage.
// A strided input that also needs zeros is re-laid out in two stages: the
// zeros first, then the phases, read without a guard. In one stage, the
// guard's clamped indices make every strided read a gather (a stride-2
// depthwise conv spent 3/4 of its time there); apart, the padding reads
// rows in order and the phase split reads every other element.
ConvInput conv_input(LowerContext& ctx, const std::string& name, const TensorExpr& x, const WindowGeometry& g,
                     const std::vector<int64_t>& out, int64_t extra_rows = 0) {
  size_t dims = size_t(g.spatial());
  ConvInput in{x, std::vector<int64_t>(g.pad_begin.begin(), g.pad_begin.end()), std::vector<bool>(dims, false)};
  bool relayout = false;
  for (size_t u = 0; u < dims; ++u) {
    int64_t highest = (out[2 + u] - 1) * g.strides[u] - g.pad_begin[u] + g.extent(int(u)) - 1;
    in.phased[u] = g.strides[u] > 1;
    relayout = relayout || g.pad_begin[u] > 0 || highest >= g.in[u] || in.phased[u];
  }
  if (!relayout && extra_rows == 0) return in;
  std::vector<int64_t> positions = relaid_positions(g, out);
  positions[0] += extra_rows;
  std::vector<int64_t> source_extents(g.in.begin(), g.in.end()), pad = in.pad, padded = positions;
  bool any_phased = false, zeros = false;
  for (size_t u = 0; u < dims; ++u) {
    if (in.phased[u]) padded[u] = positions[u] * g.strides[u];
    any_phased = any_phased || in.phased[u];
    zeros = zeros || pad[u] > 0 || padded[u] - pad[u] > g.in[u];
  }
  TensorExpr source = x;
  if (any_phased && zeros) {
    source = relayout_stage(ctx, name + "_pad", x, g, padded, std::vector<bool>(dims, false), pad, source_extents);
    source_extents = padded;
    pad.assign(dims, 0);
  }
  in.tensor = relayout_stage(ctx, name + (any_phased ? "_phases" : "_pad"), source, g, positions, in.phased, pad,
                             source_extents);
  in.pad.assign(dims, 0);
  return in;
}

// Output rows shorter than this, or not a multiple of kFlatRowMultiple, are
// computed flat (lower_flat_conv): a row of 14 or 55 outputs is vectors and a
// tail; a flat row is whole vectors.
constexpr int64_t kFlatRowLimit = 32;
constexpr int64_t kFlatRowMultiple = 8;
// The flat extent is padded to a multiple of this (16 f32 lanes: AVX-512; two AVX2 vectors).
constexpr int64_t kFlatAlign = 16;

// A 2-D convolution with short output rows (ResNet's 14 x 14 and 7 x 7)
// computed as one flat row per output channel over the re-laid-out input
// plane of width W': Yf[n, oc, f], f = oh * W' + ow, reads the plane at
// f + th * W' + tw (th, tw: the tap's offsets), so consecutive f read
// consecutive elements and the vector loop runs over whole vectors. Columns
// ow >= OW and the f past OH * W' are computed and never read; the plane has
// zero rows below for their reads. Y[n, oc, oh, ow] = Yf[n, oc, oh * W' + ow].
std::vector<TensorExpr> lower_flat_conv(LowerContext& ctx, const graph::Node& node, const std::vector<TensorExpr>& in,
                                        const WindowGeometry& g, const std::vector<int64_t>& out,
                                        const std::vector<int64_t>& extents) {
  const TensorExpr &x = in[0], &w = in[1];
  int64_t group = node.attrs.get_int("group");
  int64_t cg = w.shape[1], mg = out[1] / group;
  DType t = accum_dtype(x.dtype);
  std::vector<int64_t> positions = relaid_positions(g, out);
  int64_t width = positions[1];
  int64_t flat = (out[2] * width + kFlatAlign - 1) / kFlatAlign * kFlatAlign;
  auto tap_reach = [&](size_t u) {  // the largest tap offset in positions
    int64_t tap = (g.kernel[u] - 1) * g.dilations[u];
    return g.strides[u] > 1 ? tap / g.strides[u] : tap;
  };
  int64_t last = flat - 1 + tap_reach(0) * width + tap_reach(1);
  int64_t extra_rows = std::max<int64_t>(0, last / width + 1 - positions[0]);
  ConvInput xin = conv_input(ctx, stage_name(node), x, g, out, extra_rows);
  auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    Expr channel = input_channel(s[1], r[0], group, cg, mg);
    return cast(t, xin.at_flat(s[0], channel, s[2], r, width, g)) * cast(t, w.at({s[1], r[0], r[1], r[2]}));
  };
  TensorExpr yf = ctx.reduce(stage_name(node), {out[0], out[1], flat}, t, extents, Combiner::kSum, value);
  TensorExpr y;
  y.shape = out;
  y.dtype = t;
  y.at = [yf, width](const std::vector<Expr>& i) { return yf.at({i[0], i[1], i[2] * width + i[3]}); };
  return {with_bias(y, in, x.dtype)};
}

// A 1x1 convolution (stride 1, no padding, one group) is a matmul over the
// flat plane: Y[n, oc, j] = sum over c: W[oc, c] * X[n, c, j], j = h * W + w,
// and X's plane is already flat and contiguous. The columns split at the
// largest multiple of kFlatAlign: one block over those (whole register tiles,
// 6 x 16 or 4 x 24) and one over the rest (fewer than 16 columns). A short
// row (7, 14) as the tile's vector part was a vector, a half and a scalar.
bool is_plain_pointwise(const WindowGeometry& g, int64_t group) {
  if (g.spatial() != 2 || group != 1) return false;
  for (size_t u = 0; u < 2; ++u)
    if (g.kernel[u] != 1 || g.strides[u] != 1 || g.pad_begin[u] != 0 || g.pad_end[u] != 0) return false;
  return true;
}

std::vector<TensorExpr> lower_flat_pointwise(LowerContext& ctx, const graph::Node& node,
                                             const std::vector<TensorExpr>& in, const std::vector<int64_t>& out) {
  const TensorExpr &x = in[0], &w = in[1];
  DType t = accum_dtype(x.dtype);
  int64_t width = out[3], plane = out[2] * out[3], main = plane / kFlatAlign * kFlatAlign;
  auto columns = [&](const std::string& name, int64_t first, int64_t count) {
    auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
      Expr j = first == 0 ? s[2] : s[2] + first;
      Expr xv = x.at({s[0], r[0], floordiv(j, width), floormod(j, width)});
      return cast(t, xv) * cast(t, w.at({s[1], r[0], int_imm(0), int_imm(0)}));
    };
    return ctx.reduce(name, {out[0], out[1], count}, t, {w.shape[1]}, Combiner::kSum, value);
  };
  TensorExpr head = columns(stage_name(node), 0, main);
  std::optional<TensorExpr> tail;
  if (main < plane) tail = columns(stage_name(node, "tail"), main, plane - main);
  TensorExpr y;
  y.shape = out;
  y.dtype = t;
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
  // Pointwise convs (1x1 taps) keep their rows: flat rows would need a
  // re-laid-out copy of their input for the alignment (measured slower).
  bool pointwise = kernel.size() == 2 && kernel[0] == 1 && kernel[1] == 1;
  bool ragged = g.spatial() == 2 && (out[3] < kFlatRowLimit || out[3] % kFlatRowMultiple != 0);
  if (ragged && is_plain_pointwise(g, group) && out[2] * out[3] >= kFlatAlign)
    return lower_flat_pointwise(ctx, node, in, out);
  if (ragged && !pointwise)
    return lower_flat_conv(ctx, node, in, g, out, extents);
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
