// Compute definitions of ScatterND and ScatterElements as gathers over the
// updates: for each output element, a reduction block over the updates that
// could land on it. With reduction "none" it finds the last matching update
// (the reference applies updates in index order, so the last one wins); with
// add/mul/max/min it combines the matching updates, then the data element.
// Indices out of range would match nothing (an update silently dropped):
// a check block rejects them first.
#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

using namespace tir;

namespace {

struct Reduction {
  bool last_wins = true;  // reduction "none"
  Combiner combiner = Combiner::kSum;
};

Reduction reduction_of(const graph::Node& node) {
  const std::string& r = node.attrs.get_string("reduction");
  if (r == "add") return {false, Combiner::kSum};
  if (r == "mul") return {false, Combiner::kProd};
  if (r == "max") return {false, Combiner::kMax};
  if (r == "min") return {false, Combiner::kMin};
  return {};
}

// The one shape both scatter ops share once the matching rule is known:
// `match(p, m)` says whether update m lands on output p, `update(p, m)` is
// its value, `position(m)` numbers m in index order and `unposition` inverts it.
struct Scatter {
  std::vector<int64_t> update_extents;  // the reduction domain m
  std::function<Expr(const Index&p, const Index&m)> match, update;
  std::function<Expr(const Index& m)> position;
  std::function<Index(const Expr& position)> unposition;
};

TensorExpr lower_scatter(LowerContext& ctx, const graph::Node& node, const TensorExpr& data,
                         const Scatter& s) {
  int64_t num_updates = 1;
  for (int64_t e : s.update_extents) num_updates *= e;
  if (num_updates == 0) return data;  // nothing lands anywhere
  Reduction red = reduction_of(node);
  std::string name = node.name.empty() ? node.op : node.name;
  TensorExpr out;
  out.shape = data.shape;
  out.dtype = data.dtype;
  if (red.last_wins) {
    TensorExpr last = ctx.reduce(
        name + "_last", data.shape, DType::kI64, s.update_extents, Combiner::kMax,
        [&](const Index& p, const Index& m) { return select(s.match(p, m), s.position(m), int_imm(-1)); });
    out.at = [data, last, s](const Index& p) {
      Expr l = last.at(p);
      return select(ge(l, int_imm(0)), s.update(p, s.unposition(max(l, int_imm(0)))), data.at(p));
    };
    return out;
  }
  DType ct = compute_dtype(data.dtype);
  Expr identity = combiner_identity(red.combiner, ct);
  TensorExpr acc = ctx.reduce(name + "_acc", data.shape, ct, s.update_extents, red.combiner,
                              [&](const Index& p, const Index& m) {
                                return select(s.match(p, m), cast(ct, s.update(p, m)), identity);
                              });
  Combiner c = red.combiner;
  out.at = [data, acc, c](const Index& p) {
    DType t = compute_dtype(data.dtype);
    return cast(data.dtype, combine(c, cast(t, data.at(p)), acc.at(p)));
  };
  return out;
}

// Update m (an index of `indices`) lands on p where indices[m] (wrapped) is
// p[axis] and m agrees with p on every other axis.
std::vector<TensorExpr> lower_scatter_elements(LowerContext& ctx, const graph::Node& node,
                                               const std::vector<TensorExpr>& in) {
  TensorExpr data = in[0], indices = in[1], updates = in[2];
  int axis = normalized_axis(node, node.attrs.get_int("axis"), data.rank());
  size_t a = size_t(axis);
  require_indices_in_range(ctx, node, 1, indices, data.shape[a], "data axis " + std::to_string(axis));
  std::vector<int64_t> is = indices.shape;
  // The update at p with the axis index r (the other axes clamped into the indices).
  auto update_index = [is, a](const Index& p, const Expr& r) {
    Index m;
    for (size_t d = 0; d < p.size(); ++d) m.push_back(d == a ? r : clamp_index(p[d], 0, is[d] - 1));
    return m;
  };
  Scatter s;
  s.update_extents = {is[a]};
  s.match = [=](const Index& p, const Index& r) {
    Expr hit = eq(wrap_negative(indices.at(update_index(p, r[0])), data.shape[a]), p[a]);
    for (size_t d = 0; d < p.size(); ++d)
      if (d != a && is[d] < data.shape[d]) hit = hit && lt(p[d], int_imm(is[d]));
    return hit;
  };
  s.update = [=](const Index& p, const Index& r) { return updates.at(update_index(p, r[0])); };
  s.position = [](const Index& r) { return r[0]; };
  s.unposition = [](const Expr& pos) { return Index{pos}; };
  return {lower_scatter(ctx, node, data, s)};
}

// Update m (an index of indices[:-1]) lands on every p whose first k indices
// are the tuple indices[m, :]; it carries the slice updates[m, p[k:]].
std::vector<TensorExpr> lower_scatter_nd(LowerContext& ctx, const graph::Node& node,
                                         const std::vector<TensorExpr>& in) {
  TensorExpr data = in[0], indices = in[1], updates = in[2];
  std::vector<int64_t> batch(indices.shape.begin(), indices.shape.end() - 1);
  size_t k = size_t(indices.shape.back());
  for (size_t j = 0; j < k; ++j)
    require_indices_in_range(ctx, node, 1, indices, data.shape[j], "data axis " + std::to_string(j),
                             int64_t(j));
  Scatter s;
  s.update_extents = batch;
  s.match = [=](const Index& p, const Index& m) {
    Expr hit = bool_imm(true);
    for (size_t j = 0; j < k; ++j) {
      Index at = m;
      at.push_back(int_imm(int64_t(j)));
      Expr e = eq(wrap_negative(indices.at(at), data.shape[j]), p[j]);
      hit = j == 0 ? e : hit && e;
    }
    return hit;
  };
  s.update = [=](const Index& p, const Index& m) {
    Index u = m;
    u.insert(u.end(), p.begin() + long(k), p.end());
    return updates.at(u);
  };
  s.position = [batch](const Index& m) { return linearize(m, batch); };
  s.unposition = [batch](const Expr& pos) { return delinearize(pos, batch); };
  return {lower_scatter(ctx, node, data, s)};
}

}  // namespace

void register_movement_scatter_lowerings(LoweringRegistry& r) {
  r.add("ScatterElements", lower_scatter_elements);
  r.add("ScatterND", lower_scatter_nd);
}

}  // namespace tessel::lower
