// Compute definitions of the data-movement ops that rearrange or cut whole
// ranges: Transpose, Concat, Split, Slice, Tile, DepthToSpace, SpaceToDepth.
// Each is an index map (the output index rewritten into an input index), so
// it inlines into its consumer; the family's registration is here too.
#include "ir/graph/ops/movement_geometry.h"
#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

using namespace tir;
namespace gops = graph::ops;

namespace {

std::vector<TensorExpr> lower_transpose(LowerContext&, const graph::Node& node,
                                        const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  int rank = x.rank();
  std::vector<int64_t> perm = node.attrs.get_ints("perm");
  if (perm.empty())
    for (int d = rank; d-- > 0;) perm.push_back(d);
  std::vector<int> axes;
  for (int64_t p : perm) axes.push_back(normalized_axis(node, p, rank));
  return {index_map(node, 0, [x, axes](const Index& idx) {
    Index src(idx.size());
    for (size_t d = 0; d < axes.size(); ++d) src[size_t(axes[d])] = idx[d];
    return x.at(src);
  })};
}

// idx with idx[axis] replaced by e.
Index with_axis(Index idx, int axis, Expr e) {
  idx[size_t(axis)] = std::move(e);
  return idx;
}

// A Select chain over the inputs' ranges along the axis; each branch's index
// is clamped into its input so that no branch reads outside its buffer. Its
// parts (TensorExpr::parts) are the inputs' ranges: materialised, it is a
// block per input.
std::vector<TensorExpr> lower_concat(LowerContext&, const graph::Node& node,
                                     const std::vector<TensorExpr>& in) {
  std::vector<int64_t> shape = output_shape(node);
  int axis = normalized_axis(node, node.attrs.get_int("axis"), int(shape.size()));
  std::vector<TensorExpr> parts;
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (const TensorExpr& t : in) {
    int64_t n = t.shape[size_t(axis)];
    if (n == 0) continue;  // an empty input contributes nothing
    parts.push_back(t);
    offsets.push_back(offset);
    offset += n;
  }
  DType dtype = output_dtype(node);  // an empty output still needs an element expression
  if (parts.empty()) return {index_map(node, 0, [dtype](const Index&) { return const_of(dtype, 0); })};
  TensorExpr out = index_map(node, 0, [parts, offsets, axis](const Index& idx) {
    auto branch = [&](size_t k) {
      int64_t n = parts[k].shape[size_t(axis)];
      Expr local = offsets[k] == 0 ? idx[size_t(axis)] : idx[size_t(axis)] - offsets[k];
      return parts[k].at(with_axis(idx, axis, clamp_index(local, 0, n - 1)));
    };
    Expr e = branch(parts.size() - 1);
    for (size_t k = parts.size() - 1; k-- > 0;) {
      Expr end = int_imm(offsets[k] + parts[k].shape[size_t(axis)]);
      e = select(lt(idx[size_t(axis)], end), branch(k), e);
    }
    return e;
  });
  out.parts.axis = axis;
  for (size_t k = 0; k < parts.size(); ++k)
    out.parts.ends.push_back(offsets[k] + parts[k].shape[size_t(axis)]);
  return {out};
}

std::vector<TensorExpr> lower_split(LowerContext&, const graph::Node& node,
                                    const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  int axis = normalized_axis(node, node.attrs.get_int("axis"), x.rank());
  std::vector<int64_t> sizes =
      gops::split_sizes(x.shape[size_t(axis)], optional_constant_ints(node, 1, "split"),
                        node.attrs.get_int("num_outputs"), node.outputs.size(), node.span());
  std::vector<TensorExpr> outs;
  int64_t offset = 0;
  for (size_t j = 0; j < sizes.size(); ++j) {
    outs.push_back(index_map(node, j, [x, axis, offset](const Index& idx) {
      Expr i = offset == 0 ? idx[size_t(axis)] : idx[size_t(axis)] + offset;
      return x.at(with_axis(idx, axis, i));
    }));
    offset += sizes[j];
  }
  return outs;
}

std::vector<TensorExpr> lower_slice(LowerContext&, const graph::Node& node,
                                    const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  auto requests = gops::slice_requests(
      x.rank(), constant_ints(node, 1, "starts"), constant_ints(node, 2, "ends"),
      optional_constant_ints(node, 3, "axes"), optional_constant_ints(node, 4, "steps"), node.span());
  std::vector<gops::SliceAxis> axes(size_t(x.rank()), gops::SliceAxis{0, 1, 0});
  std::vector<bool> sliced(size_t(x.rank()), false);
  for (const gops::SliceRequest& r : requests) {
    axes[size_t(r.axis)] = gops::slice_axis(x.shape[size_t(r.axis)], r);
    sliced[size_t(r.axis)] = true;
  }
  return {index_map(node, 0, [x, axes, sliced](const Index& idx) {
    Index src = idx;
    for (size_t d = 0; d < src.size(); ++d) {
      if (!sliced[d]) continue;
      Expr i = axes[d].step == 1 ? idx[d] : idx[d] * axes[d].step;
      src[d] = axes[d].start == 0 ? i : i + axes[d].start;
    }
    return x.at(src);
  })};
}

std::vector<TensorExpr> lower_tile(LowerContext&, const graph::Node& node,
                                   const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  std::vector<int64_t> out = output_shape(node);
  return {index_map(node, 0, [x, out](const Index& idx) {
    Index src;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t n = x.shape[d];
      src.push_back(n == 1 ? int_imm(0) : n == out[d] ? idx[d] : floormod(idx[d], n));
    }
    return x.at(src);
  })};
}

// NCHW -> N, C/bs^2, H*bs, W*bs. Output (n, c, y, x) reads channel
// (y % bs, x % bs, c) of the (bs, bs, C') split for DCR, (c, y % bs, x % bs)
// of the (C', bs, bs) split for CRD, at (y / bs, x / bs).
std::vector<TensorExpr> lower_depth_to_space(LowerContext&, const graph::Node& node,
                                             const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  int64_t bs = node.attrs.get_int("blocksize"), c = x.shape[1] / (bs * bs);
  bool dcr = node.attrs.get_string("mode") == "DCR";
  return {index_map(node, 0, [x, bs, c, dcr](const Index& idx) {
    Expr b1 = floormod(idx[2], bs), b2 = floormod(idx[3], bs);
    Expr channel = dcr ? b1 * (bs * c) + b2 * c + idx[1] : idx[1] * (bs * bs) + b1 * bs + b2;
    return x.at({idx[0], channel, floordiv(idx[2], bs), floordiv(idx[3], bs)});
  })};
}

// NCHW -> N, C*bs^2, H/bs, W/bs with the channel ordered (bs_h, bs_w, C).
std::vector<TensorExpr> lower_space_to_depth(LowerContext&, const graph::Node& node,
                                             const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  int64_t bs = node.attrs.get_int("blocksize"), c = x.shape[1];
  return {index_map(node, 0, [x, bs, c](const Index& idx) {
    Expr b1 = floordiv(idx[1], bs * c), b2 = floormod(floordiv(idx[1], c), bs);
    Expr channel = floormod(idx[1], c);
    return x.at({idx[0], channel, idx[2] * bs + b1, idx[3] * bs + b2});
  })};
}

}  // namespace

void register_movement_lowerings(LoweringRegistry& r) {
  add_injective(r, "Transpose", lower_transpose);
  add_injective(r, "Concat", lower_concat);
  add_injective(r, "Split", lower_split);
  add_injective(r, "Slice", lower_slice);
  add_injective(r, "Tile", lower_tile);
  add_injective(r, "DepthToSpace", lower_depth_to_space);
  add_injective(r, "SpaceToDepth", lower_space_to_depth);
  register_movement_index_lowerings(r);
  register_movement_scatter_lowerings(r);
  register_shape_lowerings(r);
}

}  // namespace tessel::lower
