// Internal to the nn and reduce lowerings: the registration function of each
// nn file, and the helpers they share (stage names, shapes, window indices,
// in-bounds guards), in namespace lower::nn so that they cannot collide with the
// other families' helpers. register_nn_lowerings (nn.cpp) calls the register functions.
#pragma once

#include <string>
#include <vector>

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

}  // namespace tessel::lower::nn
