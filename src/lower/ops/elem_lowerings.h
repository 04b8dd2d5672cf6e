// What the elementwise, movement and shape lowering files share: their
// registration functions, and the index and scalar helpers every injective
// compute definition is built from (numpy broadcasting of an index, output
// shapes, constant inputs, the f32 compute type of 16-bit floats).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/lower/op_lowering.h"

namespace tessel::lower {

// The parts of the families' registration; register_elementwise_lowerings
// (elementwise.cpp) and register_movement_lowerings (movement.cpp) call them.
void register_activation_lowerings(LoweringRegistry& r);           // elementwise_activation.cpp
void register_elementwise_binary_lowerings(LoweringRegistry& r);   // elementwise_binary.cpp
void register_elementwise_special_lowerings(LoweringRegistry& r);  // elementwise_special.cpp
void register_movement_index_lowerings(LoweringRegistry& r);       // movement_index.cpp
void register_movement_scatter_lowerings(LoweringRegistry& r);     // movement_scatter.cpp
void register_shape_lowerings(LoweringRegistry& r);                // shape_ops.cpp

using Index = std::vector<tir::Expr>;

// A lowering whose outputs are index maps: after it runs, any output whose
// inlined expression has grown past kMaxInlineNodes is materialised as a
// block, so that long chains of inlined ops stay linear in size.
inline constexpr int kMaxInlineNodes = 2048;
void add_injective(LoweringRegistry& r, const std::string& op, LowerFn fn);

// An elementwise or broadcast op's output keeps the flat iteration and the
// parts of an operand of its own shape (TensorExpr::flat_tail, flat_head,
// parts); data movement does not (a Concat sets its own parts).
void inherit_flat_iteration(const graph::Node& node, const std::vector<TensorExpr>& inputs, TensorExpr& out);

// Number of expression nodes of t.at at fresh index variables.
int expr_size(const TensorExpr& t);
// t itself, or t materialised in a block when an op is about to read it
// `uses` times per element and its expression is more than a few loads.
TensorExpr share(LowerContext& ctx, const graph::Node& node, const TensorExpr& t, int uses);

// t itself, or t materialised in a block when the node's output (of
// out_shape) reads it broadcast along a dimension its storage iterates
// outside one t varies along, and t calls an intrinsic (exp, sigmoid, ...):
// a squeeze-excite scale sigmoid(s[c]) read by a channels-last x[n, h, w, c]
// was evaluated per element, where no loop-invariant hoisting reaches it
// (stored as its type says, the channel loop is outside and LLVM hoists it).
TensorExpr broadcast_once(LowerContext& ctx, const graph::Node& node, const TensorExpr& t,
                          const std::vector<int64_t>& out_shape);

// The static shape and dtype of output i of the node.
std::vector<int64_t> output_shape(const graph::Node& node, size_t i = 0);
DType output_dtype(const graph::Node& node, size_t i = 0);
// A TensorExpr of the node's output i whose element is value(index).
TensorExpr index_map(const graph::Node& node, size_t i, IndexFn value);

// The index of an input of shape in_shape read at output index out (numpy
// broadcasting: trailing alignment, a dimension of extent 1 reads index 0).
Index broadcast_index(const std::vector<int64_t>& in_shape, const Index& out,
                      const std::vector<int64_t>& out_shape);
// in.at at the broadcast of out.
tir::Expr at_broadcast(const TensorExpr& in, const Index& out, const std::vector<int64_t>& out_shape);

// Input i as a list of integers: it must be a constant (axes, pads, shapes).
std::vector<int64_t> constant_ints(const graph::Node& node, size_t i, const char* what);
std::optional<std::vector<int64_t>> optional_constant_ints(const graph::Node& node, size_t i,
                                                           const char* what);
// Element 0 of a one-element input i, read through its TensorExpr or, when
// the lowering was given none, from the node's constant.
tir::Expr scalar_input(const graph::Node& node, const std::vector<TensorExpr>& inputs, size_t i);
bool has_input(const graph::Node& node, const std::vector<TensorExpr>& inputs, size_t i);

// Element `flat` (row-major) of a constant tensor as an immediate of its dtype.
tir::Expr tensor_element(const Tensor& t, int64_t flat);
// An element of a small constant tensor at a data-dependent index: a chain of
// Selects over the flat index (Shape, Size and other folded values).
tir::Expr constant_at(const Tensor& t, const Index& idx);

// min(max(e, lo), hi) on indices, so that a load in an untaken Select branch
// still reads inside its buffer.
tir::Expr clamp_index(tir::Expr e, int64_t lo, int64_t hi);
// e + extent where e < 0 (Gather's negative indices), as i64.
tir::Expr wrap_negative(tir::Expr e, int64_t extent);
// sum(idx[d] * stride[d]) over a row-major shape, and its inverse.
tir::Expr linearize(const Index& idx, const std::vector<int64_t>& shape);
Index delinearize(tir::Expr flat, const std::vector<int64_t>& shape);

// The dtype 16-bit floats compute in (f32); every other dtype computes in itself.
DType compute_dtype(DType t);
// fn applied to args converted to their compute dtype, the result converted
// back to `result` (f16/bf16 math happens in f32, rounded once at the end).
tir::Expr in_compute_type(DType result, const std::vector<tir::Expr>& args,
                          const std::function<tir::Expr(const std::vector<tir::Expr>&)>& fn);
// A float constant of dtype t.
tir::Expr fconst(DType t, double v);
// std::min / std::max as C++ evaluates them: a NaN operand picks the first one.
tir::Expr std_min(tir::Expr a, tir::Expr b);
tir::Expr std_max(tir::Expr a, tir::Expr b);

// A one-input, one-output op: y = fn(x, ct, attrs) with x converted to its
// compute dtype ct and the result converted to the output's dtype. `uses` is
// how often fn reads x (see share()).
using ScalarFn = std::function<tir::Expr(const tir::Expr& x, DType ct, const graph::Attrs& attrs)>;
void add_unary(LoweringRegistry& r, const std::string& op, int uses, ScalarFn fn);

// A float value converted to integer dtype `to` as the reference does: through
// int64, truncating; NaN, infinities and values outside int64 give INT64_MIN,
// which then wraps to `to`.
tir::Expr float_to_int(const tir::Expr& value, DType to);

// Checks of data that decides an address or would trap (data_checks.cpp): a
// constant input is checked now (a user error naming the node), any other
// gets a check block that runs before the blocks reading it.
// Every element of input `input`, read as `indices`, lies in [-extent,
// extent); with component >= 0 only those whose last index is `component`
// (GatherND's tuples). `what` names the axis indexed ("data axis 1").
void require_indices_in_range(LowerContext& ctx, const graph::Node& node, size_t input,
                              const TensorExpr& indices, int64_t extent, const std::string& what,
                              int64_t component = -1);
// No element of input `input` (the divisor B, when integer) is zero.
void require_nonzero(LowerContext& ctx, const graph::Node& node, size_t input, const TensorExpr& divisor);

// Normalised axis (negative counts from the back); a user error naming the node otherwise.
int normalized_axis(const graph::Node& node, int64_t axis, int rank);

}  // namespace tessel::lower
