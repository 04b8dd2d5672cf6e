// Compute definitions of Softmax and LogSoftmax along one axis, in three
// stages: a max reduction, a sum of exp(x - max), and the output as an index
// map of both (exp(x - max) / sum, or x - max - log(sum)).
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
  TensorExpr sum =
      ctx.reduce(stage_name(node, "exp_sum"), outer, t, along, Combiner::kSum,
                 [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                   return call(Intrinsic::k_exp, {element(with_axis(s, axis, r[0])) - max.at(s)});
                 });
  bool log = node.op == "LogSoftmax";
  TensorExpr y;
  y.shape = x.shape;
  y.dtype = x.dtype;
  y.at = [=](const std::vector<Expr>& idx) {
    std::vector<Expr> s = without_axis(idx, axis);
    Expr shifted = element(idx) - max.at(s);
    if (log) return cast(x.dtype, shifted - call(Intrinsic::k_log, {sum.at(s)}));
    return cast(x.dtype, div(call(Intrinsic::k_exp, {shifted}), sum.at(s)));
  };
  return {y};
}

}  // namespace

void register_softmax_lowerings(LoweringRegistry& r) {
  r.add("Softmax", lower_softmax);
  r.add("LogSoftmax", lower_softmax);
}

}  // namespace tessel::lower::nn
