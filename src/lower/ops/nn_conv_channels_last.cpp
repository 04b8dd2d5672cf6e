// The channels-last form of a 2-D convolution: a block over its output
// positions with the output channels innermost, Yt[n, p, oc] (p = oh * OW +
// ow), read from the weight packed [C, kh, kw, M] (pack_conv_weights), so
// that a vector of output channels reads one contiguous run of weights per
// tap and each input element is one broadcast per position. No position is
// computed twice or for padding (a flat plane of 7 x 9 for a 7 x 7 output
// computes 63 + 1 positions for 49); the output reads Yt back,
// Y[n, oc, oh, ow] = Yt[n, oh * OW + ow, oc] (transposed where Y is stored
// as its type says, in order where it is stored channels-last).
//
// A grouped conv (several channels per group) computes Yt[n, g, p, j],
// oc = g * Mg + j: a vector of a group's channels reads one input channel.
// A depthwise conv (one channel per group) is computed this way only over a
// channels-last input: a vector of output channels then reads a vector of
// input channels, one tap a term of the sum.
//
// The positions are padded to a multiple of `align` (whole register tiles);
// the input has zero rows below for the padding positions' reads, or, where
// it is read in place (a 1x1 conv without padding), the padding positions
// read the last position's input: a copy of the whole input for a few
// positions' reads cost more than their tile saved. The input
// is read one element (or, depthwise, one channel vector) at a time, so a
// strided conv reads its padded input in place of a copy split into stride
// phases; a channels-last input is padded in a copy stored channels-last.
#include "ir/graph/ops/window_geometry.h"
#include "src/lower/conv_shape.h"
#include "src/lower/ops/nn_lowerings.h"

namespace tessel::lower::nn {

using namespace tir;

std::vector<TensorExpr> lower_channels_last_conv(LowerContext& ctx, const graph::Node& node,
                                                 const std::vector<TensorExpr>& in,
                                                 const graph::ops::WindowGeometry& g,
                                                 const std::vector<int64_t>& out, int64_t align) {
  const TensorExpr &x = in[0], &w = in[1];
  DType t = accum_dtype(x.dtype);
  int64_t group = node.attrs.get_int("group"), cg = w.shape[1], mg = out[1] / group;
  bool depthwise = group > 1 && cg == 1, grouped = group > 1 && !depthwise;
  int64_t width = out[3], outputs = out[2] * width, positions = (outputs + align - 1) / align * align;
  bool clamped = positions > outputs && window_reads_in_place(g, out, /*phases=*/false);
  int64_t extra_rows = clamped ? 0 : ((positions - 1) / width + 1 - out[2]) * g.strides[0];
  std::vector<int64_t> storage;  // the input's padded copy stored as the input is
  if (passes::stored_channels_last(*node.inputs[0])) storage = passes::channels_last_storage();
  WindowInput xin = window_input(ctx, stage_name(node), x, g, out, extra_rows, const_of(x.dtype, 0),
                                 /*phases=*/false, storage);
  // The reduction: the input channels of a group (none depthwise) and the
  // taps along each spatial dim of more than one (a unit dim's variable
  // would leave the loads, and the block would read as no contraction).
  std::vector<int64_t> extents;
  std::vector<int> summed;  // per reduction loop: -1 the channel, u the taps of spatial dim u
  if (!depthwise && cg > 1) extents.push_back(cg), summed.push_back(-1);
  for (int u = 0; u < 2; ++u)
    if (w.shape[size_t(2 + u)] > 1) extents.push_back(w.shape[size_t(2 + u)]), summed.push_back(u);
  if (extents.empty()) extents.push_back(1), summed.push_back(-1);  // a product of one term
  auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& reduced) {
    std::vector<Expr> r = {int_imm(0), int_imm(0), int_imm(0)};  // [channel, kh, kw]
    for (size_t i = 0; i < summed.size(); ++i) r[size_t(summed[i] + 1)] = reduced[i];
    Expr p = grouped ? s[2] : s[1];
    if (clamped) p = min(p, int_imm(outputs - 1));
    Expr oh = width == 1 ? p : floordiv(p, width), ow = width == 1 ? int_imm(0) : floormod(p, width);
    Expr oc = grouped ? s[1] * mg + s[3] : s[2];
    Expr channel = depthwise ? (mg == 1 ? oc : floordiv(oc, mg)) : grouped ? s[1] * cg + r[0] : r[0];
    return cast(t, xin.at({s[0], oc, oh, ow}, channel, r, g)) * cast(t, w.at({oc, r[0], r[1], r[2]}));
  };
  std::vector<int64_t> shape = grouped ? std::vector<int64_t>{out[0], group, positions, mg}
                                       : std::vector<int64_t>{out[0], positions, out[1]};
  TensorExpr yt = ctx.reduce(stage_name(node), shape, t, extents, Combiner::kSum, value);
  TensorExpr y;
  y.shape = out;
  y.dtype = t;
  y.flat_positions = !grouped;
  y.at = [yt, width, grouped, mg](const std::vector<Expr>& i) {
    Expr p = i[2] * width + i[3];
    if (!grouped) return yt.at({i[0], p, i[1]});
    return yt.at({i[0], floordiv(i[1], mg), p, floormod(i[1], mg)});
  };
  return {with_bias(y, in, x.dtype)};
}

}  // namespace tessel::lower::nn
