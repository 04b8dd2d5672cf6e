// Compute definitions of the reduce ops: one reduction block writing the
// output's shape (a kept axis is a spatial variable of extent 1), a finishing
// index map where the op has one (mean, sqrt, log); ReduceLogSumExp and
// ArgMax / ArgMin reduce twice (the maximum first).

#include "ir/graph/ops/reduce_axes.h"
#include "ir/graph/ops/shape_helpers.h"
#include "src/lower/ops/nn_lowerings.h"

namespace tessel::lower {

using namespace tir;
using nn::output_shape;
using nn::stage_name;

namespace {

enum class Fold { kSum, kMean, kProd, kMax, kMin, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// Which axes of x fold into each output element, and how output and reduction
// indices make up an index of x.
struct ReducePlan {
  std::vector<bool> reduced;
  bool keepdims = true;
  std::vector<int64_t> out_shape, extents;
  int64_t count = 1;  // elements per output

  std::vector<Expr> x_index(const std::vector<Expr>& s, const std::vector<Expr>& r) const {
    std::vector<Expr> idx;
    size_t next_s = 0, next_r = 0;
    for (size_t d = 0; d < reduced.size(); ++d) {
      if (reduced[d]) {
        idx.push_back(r[next_r++]);
        if (keepdims) ++next_s;
        continue;
      }
      idx.push_back(s[next_s++]);
    }
    return idx;
  }
};

ReducePlan plan_of(const graph::Node& node, const TensorExpr& x, std::vector<bool> reduced, bool keepdims) {
  ReducePlan p;
  p.reduced = std::move(reduced);
  p.keepdims = keepdims;
  p.out_shape = output_shape(node);
  for (size_t d = 0; d < p.reduced.size(); ++d)
    if (p.reduced[d]) {
      p.extents.push_back(x.shape[d]);
      p.count *= x.shape[d];
    }
  return p;
}

// The axes input must be a constant: which axes fold decides the loop nest.
std::vector<int64_t> axes_of(const graph::Node& node) {
  if (!node.has_input(1)) return {};
  TESSEL_USER_CHECK(node.inputs[1]->is_constant(), node.span())
      << "lowering needs the 'axes' input as a constant (which axes fold decides the loop nest)";
  return node.inputs[1]->constant->to_i64_vector();
}

TensorExpr mapped(const ReducePlan& p, DType dtype, IndexFn at) {
  TensorExpr t;
  t.shape = p.out_shape;
  t.dtype = dtype;
  t.at = std::move(at);
  return t;
}

Expr absolute(const Expr& v) {
  if (is_float(v->dtype)) return call(Intrinsic::k_fabs, {v});
  return select(lt(v, const_of(v->dtype, 0)), const_of(v->dtype, 0) - v, v);
}

// The folds that need real arithmetic (sqrt, log, exp) run integers through f64;
// an integer mean sums in i64 (the reference's accumulator) and truncates.
DType compute_dtype(Fold f, DType t) {
  if (is_float(t)) return nn::accum_dtype(t);
  if (f == Fold::kL2 || f == Fold::kLogSum || f == Fold::kLogSumExp) return DType::kF64;
  if (f == Fold::kMean) return DType::kI64;
  return t;
}

// log(sum(exp(x - m))) + m with m the maximum; an infinite m is the answer.
TensorExpr log_sum_exp(LowerContext& ctx, const graph::Node& node, const ReducePlan& p, const TensorExpr& x,
                       DType t) {
  auto element = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    return cast(t, x.at(p.x_index(s, r)));
  };
  TensorExpr m = ctx.reduce(stage_name(node, "max"), p.out_shape, t, p.extents, Combiner::kMax, element);
  TensorExpr sum = ctx.reduce(stage_name(node), p.out_shape, t, p.extents, Combiner::kSum,
                              [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                                return call(Intrinsic::k_exp, {element(s, r) - m.at(s)});
                              });
  return mapped(p, x.dtype, [=](const std::vector<Expr>& idx) {
    Expr mi = m.at(idx);
    return cast(x.dtype,
                select(call(Intrinsic::k_isinf, {mi}), mi, call(Intrinsic::k_log, {sum.at(idx)}) + mi));
  });
}

TensorExpr fold(LowerContext& ctx, const graph::Node& node, Fold f, const ReducePlan& p,
                const TensorExpr& x) {
  DType t = compute_dtype(f, x.dtype);
  if (f == Fold::kLogSumExp) return log_sum_exp(ctx, node, p, x, t);
  Combiner c = f == Fold::kProd  ? Combiner::kProd
               : f == Fold::kMax ? Combiner::kMax
               : f == Fold::kMin ? Combiner::kMin
                                 : Combiner::kSum;
  TensorExpr acc = ctx.reduce(stage_name(node), p.out_shape, t, p.extents, c,
                              [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                                Expr v = cast(t, x.at(p.x_index(s, r)));
                                if (f == Fold::kL1) return absolute(v);
                                if (f == Fold::kL2 || f == Fold::kSumSquare) return v * v;
                                return v;
                              });
  if (f == Fold::kMean) {
    int64_t count = p.count;
    return mapped(p, x.dtype, [=](const std::vector<Expr>& idx) {
      if (is_float(t)) return cast(x.dtype, div(acc.at(idx), const_of(t, double(count))));
      return cast(x.dtype, count == 0 ? int_imm(0) : div(acc.at(idx), int_imm(count)));
    });
  }
  if (f == Fold::kL2 || f == Fold::kLogSum) {
    Intrinsic op = f == Fold::kL2 ? Intrinsic::k_sqrt : Intrinsic::k_log;
    return mapped(p, x.dtype,
                  [=](const std::vector<Expr>& idx) { return cast(x.dtype, call(op, {acc.at(idx)})); });
  }
  return nn::cast_expr(acc, x.dtype);
}

std::vector<TensorExpr> lower_reduce(Fold f, LowerContext& ctx, const graph::Node& node,
                                     const std::vector<TensorExpr>& in) {
  const TensorExpr& x = in[0];
  bool noop = node.attrs.get_int("noop_with_empty_axes") != 0;
  std::vector<bool> reduced = graph::ops::reduced_axes(axes_of(node), x.rank(), noop, node.span());
  bool any = false;
  for (bool r : reduced) any = any || r;
  if (!any) return {x};  // noop_with_empty_axes: the input itself
  return {fold(ctx, node, f, plan_of(node, x, reduced, node.attrs.get_int("keepdims") != 0), x)};
}

// The first (or, with select_last_index, the last) position along the axis
// holding the extreme: a max/min reduction, then a min/max reduction over the
// positions whose element equals it.
std::vector<TensorExpr> lower_arg_reduce(LowerContext& ctx, const graph::Node& node,
                                         const std::vector<TensorExpr>& in) {
  const TensorExpr& x = in[0];
  bool is_max = node.op == "ArgMax", last = node.attrs.get_int("select_last_index") != 0;
  std::vector<bool> reduced(size_t(x.rank()), false);
  reduced[size_t(graph::ops::normalize_axis(node.attrs.get_int("axis"), x.rank(), node.span()))] = true;
  ReducePlan p = plan_of(node, x, reduced, node.attrs.get_int("keepdims") != 0);
  TensorExpr extreme = ctx.reduce(
      stage_name(node, is_max ? "max" : "min"), p.out_shape, x.dtype, p.extents,
      is_max ? Combiner::kMax : Combiner::kMin,
      [=](const std::vector<Expr>& s, const std::vector<Expr>& r) { return x.at(p.x_index(s, r)); });
  Combiner pick = last ? Combiner::kMax : Combiner::kMin;
  Expr none = combiner_identity(pick, DType::kI64);
  return {ctx.reduce(stage_name(node), p.out_shape, DType::kI64, p.extents, pick,
                     [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                       Expr v = x.at(p.x_index(s, r));
                       // A NaN is the extreme (max and min propagate it), though it equals nothing.
                       Expr hit = eq(v, extreme.at(s));
                       if (is_float(x.dtype)) hit = logical_or(hit, call(Intrinsic::k_isnan, {v}));
                       return select(hit, r[0], none);
                     })};
}

}  // namespace

void register_reduce_lowerings(LoweringRegistry& r) {
  const std::pair<const char*, Fold> ops[] = {
      {"ReduceSum", Fold::kSum},       {"ReduceMean", Fold::kMean},
      {"ReduceProd", Fold::kProd},     {"ReduceMax", Fold::kMax},
      {"ReduceMin", Fold::kMin},       {"ReduceL1", Fold::kL1},
      {"ReduceL2", Fold::kL2},         {"ReduceSumSquare", Fold::kSumSquare},
      {"ReduceLogSum", Fold::kLogSum}, {"ReduceLogSumExp", Fold::kLogSumExp}};
  for (const auto& [op, f] : ops)
    r.add(op, [f = f](LowerContext& ctx, const graph::Node& node, const std::vector<TensorExpr>& in) {
      return lower_reduce(f, ctx, node, in);
    });
  r.add("ArgMax", lower_arg_reduce);
  r.add("ArgMin", lower_arg_reduce);
}

}  // namespace tessel::lower
