// Internal to the nn and reduce lowerings: the registration function of each
// nn file, and the helpers they share (stage names, shapes, window indices,
// in-bounds guards), in namespace lower::nn so that they cannot collide with the
// other families' helpers. register_nn_lowerings (nn.cpp) calls the register functions.
#pragma once

#include <string>
#include <vector>

#include "ir/graph/ops/window_geometry.h"
#include "src/lower/op_lowering.h"

namespace tessel::lower::nn {

void register_linear_lowerings(LoweringRegistry& r);   // MatMul, Gemm (nn.cpp)
void register_conv_lowerings(LoweringRegistry& r);     // Conv, ConvTranspose (nn_conv.cpp)
void register_pool_lowerings(LoweringRegistry& r);     // MaxPool, AveragePool, Global*Pool (nn_pool.cpp)
void register_norm_lowerings(LoweringRegistry& r);     // the normalisations (nn_norm.cpp)
void register_softmax_lowerings(LoweringRegistry& r);  // Softmax, LogSoftmax (nn_softmax.cpp)

// A readable block name for a stage of `node`: the node name with every
// character outside [A-Za-z0-9_] made '_' (the op name in lower case when the
// node has none), then "_" + suffix when given. LowerContext makes it unique.
std::string stage_name(const graph::Node& node, const std::string& suffix = {});

// The static shape of output i of node.
std::vector<int64_t> output_shape(const graph::Node& node, size_t i = 0);

// Whether optional input i is present (an omitted one has an empty `at`).
inline bool has_expr(const std::vector<TensorExpr>& inputs, size_t i) {
  return i < inputs.size() && bool(inputs[i].at);
}

// The dtype a sum of t accumulates in: f32 for the 16-bit floats (their
// partial sums would round at every step), t itself otherwise.
DType accum_dtype(DType t);

// t read as `dtype`: a Cast composed into its index map (t itself when it has that dtype).
TensorExpr cast_expr(const TensorExpr& t, DType dtype);

// x[indices...] with every index outside the buffer read as `otherwise`: the
// conjunction of the bounds checks that can fail guards the read in a Select
// (so that no out-of-bounds element is ever loaded). Checks are added per
// dimension with the index's possible range, so a dimension that cannot
// leave [0, extent) adds nothing.
class GuardedRead {
 public:
  // index takes values in [lowest, highest]; the element exists for [0, extent).
  void check(const tir::Expr& index, int64_t lowest, int64_t highest, int64_t extent);
  // An extra condition that must hold for the read (a stride divisibility).
  void require(const tir::Expr& cond);
  // x at indices where every check holds, else otherwise; the indices are
  // clamped into x, so the read is in bounds either way.
  tir::Expr read(const TensorExpr& x, const std::vector<tir::Expr>& indices,
                 const tir::Expr& otherwise) const;
  // value where every check holds, else otherwise (value may load out of bounds there).
  tir::Expr guard(const tir::Expr& value, const tir::Expr& otherwise) const;

 private:
  tir::Expr cond_;  // undefined: always in bounds
};

// o * stride - pad + k * dilation, without the terms that are 0 or factors 1.
tir::Expr window_index(const tir::Expr& o, int64_t stride, int64_t pad, const tir::Expr& k, int64_t dilation);

// The indices of a tensor of `shape` broadcast (numpy, right-aligned) to the
// indices `target` of a tensor of higher or equal rank: size-1 dimensions read
// 0, except where `target_shape` (when given) is 1 too: those read the target's
// index, so that a same-shape operand reads at exactly its iteration variables.
std::vector<tir::Expr> broadcast_indices(const std::vector<int64_t>& shape,
                                         const std::vector<tir::Expr>& target,
                                         const std::vector<int64_t>& target_shape = {});

// A windowed op's view of its input: X itself, or X re-laid out by one or
// two stages so that the reduction reads it without a guard and, along each
// spatial dimension, with unit stride in the output position:
//  - zero padding materialised: a guard in the reduction would put a branch
//    in its innermost loops, which keeps them from being vectorized;
//  - a strided dimension split into phases, Xs[.., ph, .., q] = Xpad[.., q * s + ph],
//    so the window element o * s + k * d is Xs[.., (k * d) % s, .., o + (k * d) / s]:
//    consecutive outputs read consecutive elements (a gather otherwise).
// Each stage costs one pass over the input.
struct WindowInput {
  TensorExpr tensor;
  std::vector<int64_t> pad;  // per spatial dim: the padding the index still subtracts
  std::vector<bool> phased;  // per spatial dim: split into stride phases

  // Tap r along dim u in input elements (k * d), and split by the stride:
  // its phase, and its offset in positions of the re-laid-out input.
  static tir::Expr tap(const std::vector<tir::Expr>& r, size_t u, const graph::ops::WindowGeometry& g) {
    return g.dilations[u] == 1 ? r[1 + u] : r[1 + u] * g.dilations[u];
  }
  tir::Expr tap_phase(const std::vector<tir::Expr>& r, size_t u, const graph::ops::WindowGeometry& g) const {
    return floormod(tap(r, u, g), g.strides[u]);
  }
  tir::Expr tap_position(const std::vector<tir::Expr>& r, size_t u, const graph::ops::WindowGeometry& g) const {
    return phased[u] ? floordiv(tap(r, u, g), g.strides[u]) : tap(r, u, g);
  }

  // The re-laid-out 2-D input read at flat position f of a plane of width
  // `width`: the element f + (tap offset) of the plane, as [row, column].
  tir::Expr at_flat(const tir::Expr& n, const tir::Expr& channel, const tir::Expr& f,
                    const std::vector<tir::Expr>& r, int64_t width, const graph::ops::WindowGeometry& g) const;
  // The input of output s (its channel `channel`) at window tap r = [c, k...].
  tir::Expr at(const std::vector<tir::Expr>& s, const tir::Expr& channel, const std::vector<tir::Expr>& r,
               const graph::ops::WindowGeometry& g) const;
};

// Whether x is read as it is by a window of geometry g over output `out`:
// no padding, no tap past its end, no stride split into phases.
bool window_reads_in_place(const graph::ops::WindowGeometry& g, const std::vector<int64_t>& out, bool phases);

// The window input of op `name` (stage names name_pad, name_phases): x
// itself when it needs neither padding nor phases (and extra_rows is 0),
// else x re-laid out; pad_value fills the padding (0 for Conv, -inf for
// MaxPool). extra_rows: zero rows appended below the first spatial dim (for
// the reads of a flat convolution past its last output row).
WindowInput window_input(LowerContext& ctx, const std::string& name, const TensorExpr& x,
                         const graph::ops::WindowGeometry& g, const std::vector<int64_t>& out,
                         int64_t extra_rows, const tir::Expr& pad_value, bool phases = true,
                         const std::vector<int64_t>& storage = {});

// y + bias[channel] as `dtype`, composed into the consumer (a conv's bias:
// in[2], when present).
TensorExpr with_bias(const TensorExpr& y, const std::vector<TensorExpr>& in, DType dtype);

// A 2-D convolution over its output positions with the output channels in
// the vector lanes (ConvForm::kChannelsLast; nn_conv_channels_last.cpp).
std::vector<TensorExpr> lower_channels_last_conv(LowerContext& ctx, const graph::Node& node,
                                                 const std::vector<TensorExpr>& in,
                                                 const graph::ops::WindowGeometry& g,
                                                 const std::vector<int64_t>& out, int64_t align);

// The extents of the re-laid-out input's positions, per spatial dim (in
// phases of the stride, or not).
std::vector<int64_t> relaid_positions(const graph::ops::WindowGeometry& g, const std::vector<int64_t>& out,
                                      bool phases = true);

}  // namespace tessel::lower::nn
