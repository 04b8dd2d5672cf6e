// Compute definitions of the normalisations. BatchNormalization (inference)
// is one injective stage; Layer/Instance/GroupNormalization reduce twice per
// group (sum, then squared deviation from the mean: the reference's two-pass
// statistics) and normalise in an injective stage composed into the consumer.
#include <functional>

#include "ir/graph/ops/shape_helpers.h"
#include "src/lower/ops/elem_lowerings.h"
#include "src/lower/ops/nn_lowerings.h"

namespace tessel::lower::nn {

using namespace tir;

namespace {

// A TensorExpr of a new index function (not a buffer).
TensorExpr mapped(std::vector<int64_t> shape, DType dtype, IndexFn at) {
  TensorExpr t;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.at = std::move(at);
  return t;
}

// (X - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c], c = axis 1.
std::vector<TensorExpr> lower_batch_norm(LowerContext&, const graph::Node& node,
                                         const std::vector<TensorExpr>& in) {
  const TensorExpr &x = in[0], &scale = in[1], &bias = in[2], &mean = in[3], &var = in[4];
  double eps = node.attrs.get_float("epsilon");
  TensorExpr y = mapped(x.shape, x.dtype, [=](const std::vector<Expr>& idx) {
    DType t = accum_dtype(x.dtype);
    std::vector<Expr> c = {idx[1]};
    Expr inv_std = div(const_of(t, 1), call(Intrinsic::k_sqrt, {cast(t, var.at(c)) + const_of(t, eps)}));
    Expr y =
        (cast(t, x.at(idx)) - cast(t, mean.at(c))) * inv_std * cast(t, scale.at(c)) + cast(t, bias.at(c));
    return cast(x.dtype, y);
  });
  inherit_flat_iteration(node, in, y);  // a broadcast op: materialised, it iterates as x would
  return {y};
}

// How a normalisation groups the elements of x: statistics per index g of
// `groups`, over the elements x[element(g, r)] for r in `members`; group_of
// maps an index of x to its g.
struct Grouping {
  std::vector<int64_t> groups, members;
  std::function<std::vector<Expr>(const std::vector<Expr>& g, const std::vector<Expr>& r)> element;
  std::function<std::vector<Expr>(const std::vector<Expr>& x_idx)> group_of;
};

struct GroupStats {
  TensorExpr mean, inv_std;  // shape `groups`, in the statistics dtype
};

// Two reduction blocks: <base>_sum (of x) and <base>_var_sum (of the squared
// deviation from sum / n); mean and 1 / sqrt(var + eps) are index maps of them.
GroupStats group_stats(LowerContext& ctx, const graph::Node& node, const TensorExpr& x,
                       const Grouping& grouping, DType dtype) {
  double eps = node.attrs.get_float("epsilon");
  int64_t count = 1;
  for (int64_t e : grouping.members) count *= e;
  Expr n = const_of(dtype, double(count));
  auto element = [=](const std::vector<Expr>& g, const std::vector<Expr>& r) {
    return cast(dtype, x.at(grouping.element(g, r)));
  };
  TensorExpr sum =
      ctx.reduce(stage_name(node, "sum"), grouping.groups, dtype, grouping.members, Combiner::kSum, element);
  TensorExpr mean =
      mapped(grouping.groups, dtype, [=](const std::vector<Expr>& g) { return div(sum.at(g), n); });
  TensorExpr sq = ctx.reduce(stage_name(node, "var_sum"), grouping.groups, dtype, grouping.members,
                             Combiner::kSum, [=](const std::vector<Expr>& g, const std::vector<Expr>& r) {
                               Expr dev = element(g, r) - mean.at(g);
                               return dev * dev;
                             });
  TensorExpr inv_std = mapped(grouping.groups, dtype, [=](const std::vector<Expr>& g) {
    return div(const_of(dtype, 1), call(Intrinsic::k_sqrt, {div(sq.at(g), n) + const_of(dtype, eps)}));
  });
  return {mean, inv_std};
}

// (x - mean) * inv_std * scale + shift (shift may be absent), in the
// statistics dtype; scale and shift are read at an index of x.
TensorExpr normalise(const TensorExpr& x, const Grouping& grouping, const GroupStats& st,
                     const std::function<Expr(const std::vector<Expr>&)>& scale,
                     const std::function<Expr(const std::vector<Expr>&)>& shift) {
  DType t = st.mean.dtype;
  return mapped(x.shape, x.dtype, [=](const std::vector<Expr>& idx) {
    std::vector<Expr> g = grouping.group_of(idx);
    Expr v = (cast(t, x.at(idx)) - st.mean.at(g)) * st.inv_std.at(g) * cast(t, scale(idx));
    if (shift) v = v + cast(t, shift(idx));
    return cast(x.dtype, v);
  });
}

DType stash_dtype(const graph::Node& node) {
  return node.attrs.get_int("stash_type") == 11 ? DType::kF64 : DType::kF32;
}

// Statistics over axes [axis, rank); Scale and B broadcast to that tail.
// Mean and InvStdDev (outputs 1, 2) keep the leading axes and 1 elsewhere.
std::vector<TensorExpr> lower_layer_norm(LowerContext& ctx, const graph::Node& node,
                                         const std::vector<TensorExpr>& in) {
  const TensorExpr& x = in[0];
  size_t axis = size_t(graph::ops::normalize_axis(node.attrs.get_int("axis"), x.rank(), node.span()));
  Grouping grouping;
  grouping.groups.assign(x.shape.begin(), x.shape.begin() + long(axis));
  grouping.members.assign(x.shape.begin() + long(axis), x.shape.end());
  grouping.element = [](const std::vector<Expr>& g, const std::vector<Expr>& r) {
    std::vector<Expr> idx = g;
    idx.insert(idx.end(), r.begin(), r.end());
    return idx;
  };
  grouping.group_of = [axis](const std::vector<Expr>& idx) {
    return std::vector<Expr>(idx.begin(), idx.begin() + long(axis));
  };
  GroupStats st = group_stats(ctx, node, x, grouping, stash_dtype(node));
  // A Scale of higher rank than the tail has leading 1s: read from the tail only.
  auto tail_param = [axis](const TensorExpr& p) {
    return [p, axis](const std::vector<Expr>& idx) {
      std::vector<Expr> tail(idx.begin() + long(axis), idx.end());
      std::vector<int64_t> shape = p.shape;
      size_t extra = shape.size() > tail.size() ? shape.size() - tail.size() : 0;
      std::vector<Expr> at(extra, int_imm(0));
      std::vector<Expr> rest =
          broadcast_indices(std::vector<int64_t>(shape.begin() + long(extra), shape.end()), tail);
      at.insert(at.end(), rest.begin(), rest.end());
      return p.at(at);
    };
  };
  std::function<Expr(const std::vector<Expr>&)> shift;
  if (has_expr(in, 2)) shift = tail_param(in[2]);
  std::vector<TensorExpr> outs = {normalise(x, grouping, st, tail_param(in[1]), shift)};
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    TensorExpr stat = i == 1 ? st.mean : st.inv_std;
    outs.push_back(mapped(output_shape(node, i), stat.dtype, [stat, axis](const std::vector<Expr>& idx) {
      return stat.at(std::vector<Expr>(idx.begin(), idx.begin() + long(axis)));
    }));
  }
  return outs;
}

// A per-channel scale or bias: p at the channel (axis 1) of an index of x.
std::function<Expr(const std::vector<Expr>&)> per_channel(const TensorExpr& p) {
  return [p](const std::vector<Expr>& idx) { return p.at({idx[1]}); };
}

// Statistics per (n, c) over the spatial axes.
std::vector<TensorExpr> lower_instance_norm(LowerContext& ctx, const graph::Node& node,
                                            const std::vector<TensorExpr>& in) {
  const TensorExpr& x = in[0];
  Grouping grouping;
  grouping.groups = {x.shape[0], x.shape[1]};
  grouping.members.assign(x.shape.begin() + 2, x.shape.end());
  grouping.element = [](const std::vector<Expr>& g, const std::vector<Expr>& r) {
    std::vector<Expr> idx = g;
    idx.insert(idx.end(), r.begin(), r.end());
    return idx;
  };
  grouping.group_of = [](const std::vector<Expr>& idx) { return std::vector<Expr>{idx[0], idx[1]}; };
  GroupStats st = group_stats(ctx, node, x, grouping, accum_dtype(x.dtype));
  return {normalise(x, grouping, st, per_channel(in[1]), per_channel(in[2]))};
}

// Statistics per (n, group of C / num_groups channels) over those channels'
// spatial elements; scale and bias per channel.
std::vector<TensorExpr> lower_group_norm(LowerContext& ctx, const graph::Node& node,
                                         const std::vector<TensorExpr>& in) {
  const TensorExpr& x = in[0];
  int64_t groups = node.attrs.get_int("num_groups"), per_group = x.shape[1] / groups;
  Grouping grouping;
  grouping.groups = {x.shape[0], groups};
  grouping.members = {per_group};
  grouping.members.insert(grouping.members.end(), x.shape.begin() + 2, x.shape.end());
  grouping.element = [per_group](const std::vector<Expr>& g, const std::vector<Expr>& r) {
    std::vector<Expr> idx = {g[0], per_group == 1 ? g[1] : g[1] * per_group + r[0]};
    idx.insert(idx.end(), r.begin() + 1, r.end());
    return idx;
  };
  grouping.group_of = [per_group](const std::vector<Expr>& idx) {
    return std::vector<Expr>{idx[0], per_group == 1 ? idx[1] : floordiv(idx[1], per_group)};
  };
  GroupStats st = group_stats(ctx, node, x, grouping, stash_dtype(node));
  return {normalise(x, grouping, st, per_channel(in[1]), per_channel(in[2]))};
}

}  // namespace

void register_norm_lowerings(LoweringRegistry& r) {
  r.add("BatchNormalization", lower_batch_norm);
  r.add("LayerNormalization", lower_layer_norm);
  r.add("InstanceNormalization", lower_instance_norm);
  r.add("GroupNormalization", lower_group_norm);
}

}  // namespace tessel::lower::nn
