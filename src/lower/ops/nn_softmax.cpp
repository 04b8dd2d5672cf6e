// Compute definitions of Softmax and LogSoftmax along one axis: a max
// reduction, e = exp(x - max) (Softmax only), a sum of e, and the output as an
// index map (e * (1 / sum), or x - max - log(sum)).
#include "ir/graph/ops/shape_helpers.h"
#include "src/lower/ops/nn_lowerings.h"

namespace tessel::lower::nn {

using namespace tir;

namespace {

// Indices of x from the indices of the reduced shape (x's without `axis`) and
// the position along the axis.
std::vector<Expr> with_axis(const std::vector<Expr>& outer, size_t axis, const Expr& at) {
  std::vector<Expr> idx = outer;
  idx.insert(idx.begin() + long(axis), at);
  return idx;
}

std::vector<Expr> without_axis(const std::vector<Expr>& idx, size_t axis) {
  std::vector<Expr> outer = idx;
  outer.erase(outer.begin() + long(axis));
  return outer;
}

std::vector<TensorExpr> lower_softmax(LowerContext& ctx, const graph::Node& node,
                                      const std::vector<TensorExpr>& in) {
  const TensorExpr& x = in[0];
  size_t axis = size_t(graph::ops::normalize_axis(node.attrs.get_int("axis"), x.rank(), node.span()));
  std::vector<int64_t> outer = x.shape;
  outer.erase(outer.begin() + long(axis));
  std::vector<int64_t> along = {x.shape[axis]};
  DType t = accum_dtype(x.dtype);
  auto element = [=](const std::vector<Expr>& idx) { return cast(t, x.at(idx)); };
  TensorExpr max = ctx.reduce(stage_name(node, "max"), outer, t, along, Combiner::kMax,
                              [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                                return element(with_axis(s, axis, r[0]));
                              });
  bool log = node.op == "LogSoftmax";
  auto shifted = [=](const std::vector<Expr>& idx) { return element(idx) - max.at(without_axis(idx, axis)); };
  // Softmax's exponentials are computed once into a block that the sum and
  // the output read; LogSoftmax needs them only inside the sum.
  TensorExpr exps;
  if (!log)
    exps = ctx.compute(stage_name(node, "exp"), x.shape, t,
                       [=](const std::vector<Expr>& idx) { return call(Intrinsic::k_exp, {shifted(idx)}); });
  TensorExpr sum = ctx.reduce(stage_name(node, "exp_sum"), outer, t, along, Combiner::kSum,
                              [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                                std::vector<Expr> idx = with_axis(s, axis, r[0]);
                                return log ? call(Intrinsic::k_exp, {shifted(idx)}) : exps.at(idx);
                              });
  TensorExpr y;
  y.shape = x.shape;
  y.dtype = x.dtype;
  y.at = [=](const std::vector<Expr>& idx) {
    std::vector<Expr> s = without_axis(idx, axis);
    if (log) return cast(x.dtype, shifted(idx) - call(Intrinsic::k_log, {sum.at(s)}));
    // times 1 / sum, not divided by it: the reciprocal is the row's, hoisted out of the loop over the row
    return cast(x.dtype, exps.at(idx) * div(const_of(t, 1.0), sum.at(s)));
  };
  return {y};
}

}  // namespace

void register_softmax_lowerings(LoweringRegistry& r) {
  r.add("Softmax", lower_softmax);
  r.add("LogSoftmax", lower_softmax);
}

}  // namespace tessel::lower::nn
