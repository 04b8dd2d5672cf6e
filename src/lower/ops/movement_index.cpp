// Compute definitions of the data-movement ops that compute a source index
// per element: Pad (constant, reflect, edge, wrap), Gather, GatherElements,
// GatherND (indices read through a load, negative ones wrapped, checked to
// be in range first), Trilu and Range. All are index maps.
#include <algorithm>

#include "ir/graph/ops/movement_geometry.h"
#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

using namespace tir;

namespace {

// One axis of a Pad: negative pads crop first (`crop` elements at the front,
// `kept` remain), then `lead` output positions come before the first kept one.
struct PadAxis {
  int64_t crop = 0, kept = 0, lead = 0;
  bool grows = false;
};

// The input index along a padded axis for output index o, per mode; for
// constant mode the position clamped into the kept range (the caller selects
// the constant outside it).
Expr pad_source(const PadAxis& p, const std::string& mode, const Expr& o) {
  if (!p.grows) return p.crop == 0 ? o : o + p.crop;
  Expr i = p.lead == 0 ? o : o - p.lead;
  Expr local;
  if (mode == "constant" || mode == "edge") {
    local = clamp_index(i, 0, p.kept - 1);
  } else if (mode == "wrap") {
    local = floormod(i, p.kept);
  } else if (p.kept == 1) {
    local = int_imm(0);  // reflect of one element repeats it
  } else {
    int64_t period = 2 * (p.kept - 1);  // numpy: pads longer than the axis keep reflecting
    Expr m = floormod(i, period);
    local = select(ge(m, int_imm(p.kept)), int_imm(period) - m, m);
  }
  return p.crop == 0 ? local : local + p.crop;
}

std::vector<TensorExpr> lower_pad(LowerContext&, const graph::Node& node, const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  graph::ops::PadAmounts amounts = graph::ops::pad_amounts(
      x.rank(), constant_ints(node, 1, "pads"), optional_constant_ints(node, 3, "axes"), node.span());
  std::string mode = node.attrs.get_string("mode");
  std::vector<PadAxis> axes;
  bool empty_source = false;
  for (size_t d = 0; d < size_t(x.rank()); ++d) {
    int64_t b = amounts.begin[d], e = amounts.end[d];
    PadAxis p{std::max<int64_t>(-b, 0), 0, std::max<int64_t>(b, 0), b > 0 || e > 0};
    p.kept = x.shape[d] - p.crop - std::max<int64_t>(-e, 0);
    empty_source = empty_source || p.kept <= 0;
    axes.push_back(p);
  }
  DType dtype = output_dtype(node);
  bool given = has_input(node, in, 2) && node.inputs[2]->type.numel() == std::optional<int64_t>(1);
  Expr fill = given ? scalar_input(node, in, 2) : const_of(dtype, 0);
  // Nothing of the input is left: the output (if any) is all fill.
  if (empty_source) return {index_map(node, 0, [fill](const Index&) { return fill; })};
  return {index_map(node, 0, [x, axes, mode, fill](const Index& idx) {
    Index src;
    Expr inside;
    for (size_t d = 0; d < idx.size(); ++d) {
      src.push_back(pad_source(axes[d], mode, idx[d]));
      if (mode != "constant" || !axes[d].grows) continue;
      Expr lo = int_imm(axes[d].lead), hi = int_imm(axes[d].lead + axes[d].kept);
      Expr in_d = ge(idx[d], lo) && lt(idx[d], hi);
      inside = inside.defined() ? inside && in_d : in_d;
    }
    return inside.defined() ? select(inside, x.at(src), fill) : x.at(src);
  })};
}

// "data axis 1", for messages.
std::string data_axis(int64_t axis) {
  return "data axis " + std::to_string(axis);
}

std::vector<TensorExpr> lower_gather(LowerContext& ctx, const graph::Node& node,
                                     const std::vector<TensorExpr>& in) {
  TensorExpr data = in[0], indices = in[1];
  int axis = normalized_axis(node, node.attrs.get_int("axis"), data.rank());
  require_indices_in_range(ctx, node, 1, indices, data.shape[size_t(axis)], data_axis(axis));
  return {index_map(node, 0, [data, indices, axis](const Index& idx) {
    size_t a = size_t(axis), q = size_t(indices.rank());
    Index pick(idx.begin() + long(a), idx.begin() + long(a + q));
    Index src(idx.begin(), idx.begin() + long(a));
    src.push_back(wrap_negative(indices.at(pick), data.shape[a]));
    src.insert(src.end(), idx.begin() + long(a + q), idx.end());
    return data.at(src);
  })};
}

std::vector<TensorExpr> lower_gather_elements(LowerContext& ctx, const graph::Node& node,
                                              const std::vector<TensorExpr>& in) {
  TensorExpr data = in[0], indices = in[1];
  int axis = normalized_axis(node, node.attrs.get_int("axis"), data.rank());
  require_indices_in_range(ctx, node, 1, indices, data.shape[size_t(axis)], data_axis(axis));
  return {index_map(node, 0, [data, indices, axis](const Index& idx) {
    Index src = idx;
    src[size_t(axis)] = wrap_negative(indices.at(idx), data.shape[size_t(axis)]);
    return data.at(src);
  })};
}

// Output (m..., t...) with m over indices[:-1] reads data at the batch
// indices m[:b], then the k-tuple indices[m..., :], then t.
std::vector<TensorExpr> lower_gather_nd(LowerContext& ctx, const graph::Node& node,
                                        const std::vector<TensorExpr>& in) {
  TensorExpr data = in[0], indices = in[1];
  size_t b = size_t(node.attrs.get_int("batch_dims")), q = size_t(indices.rank());
  size_t k = size_t(indices.shape.back());
  for (size_t j = 0; j < k; ++j)
    require_indices_in_range(ctx, node, 1, indices, data.shape[b + j], data_axis(int64_t(b + j)), int64_t(j));
  return {index_map(node, 0, [data, indices, b, q, k](const Index& idx) {
    Index m(idx.begin(), idx.begin() + long(q - 1));
    Index src(idx.begin(), idx.begin() + long(b));
    for (size_t j = 0; j < k; ++j) {
      Index at = m;
      at.push_back(int_imm(int64_t(j)));
      src.push_back(wrap_negative(indices.at(at), data.shape[b + j]));
    }
    src.insert(src.end(), idx.begin() + long(q - 1), idx.end());
    return data.at(src);
  })};
}

// Element (i, j) of each trailing matrix is kept when j - i >= k (upper) or
// j - i <= k (lower); the rest is zero.
std::vector<TensorExpr> lower_trilu(LowerContext&, const graph::Node& node,
                                    const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  bool upper = node.attrs.get_int("upper") != 0;
  Expr k = has_input(node, in, 1) ? cast(kIndexType, scalar_input(node, in, 1)) : int_imm(0);
  return {index_map(node, 0, [x, upper, k](const Index& idx) {
    size_t r = idx.size();
    Expr diag = idx[r - 1] - idx[r - 2];
    Expr keep = upper ? ge(diag, k) : le(diag, k);
    return select(keep, x.at(idx), const_of(x.dtype, 0));
  })};
}

// Element i is start + i * delta in the compute dtype (integers wrap).
std::vector<TensorExpr> lower_range(LowerContext&, const graph::Node& node,
                                    const std::vector<TensorExpr>& in) {
  DType out = output_dtype(node), ct = compute_dtype(out);
  Expr start = cast(ct, scalar_input(node, in, 0)), delta = cast(ct, scalar_input(node, in, 2));
  return {index_map(node, 0, [out, ct, start, delta](const Index& idx) {
    return cast(out, start + cast(ct, idx[0]) * delta);
  })};
}

}  // namespace

void register_movement_index_lowerings(LoweringRegistry& r) {
  add_injective(r, "Pad", lower_pad);
  add_injective(r, "Gather", lower_gather);
  add_injective(r, "GatherElements", lower_gather_elements);
  add_injective(r, "GatherND", lower_gather_nd);
  add_injective(r, "Trilu", lower_trilu);
  add_injective(r, "Range", lower_range);
}

}  // namespace tessel::lower
