// Schemas and shape functions of the data-movement ops that compute a source
// index per element: Pad, Gather, GatherElements, Tile, DepthToSpace,
// SpaceToDepth. All are injective and count no FLOPs.
#include <algorithm>

#include "ir/graph/op_registry.h"
#include "ir/graph/ops/movement_geometry.h"
#include "ir/graph/ops/shape_helpers.h"

namespace tessel::graph::ops {

namespace {

void check_index_dtype(const InferContext& ctx, size_t i, const char* what) {
  DType t = ctx.input(i).dtype;
  TESSEL_USER_CHECK(t == DType::kI32 || t == DType::kI64, ctx.span())
      << "'" << what << "' must be int32 or int64, got " << dtype_name(t);
}

void check_pad_inputs(const InferContext& ctx) {
  const std::string& mode = ctx.attrs().get_string("mode");
  TESSEL_USER_CHECK(mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap", ctx.span())
      << "mode must be constant, reflect, edge or wrap, got \"" << mode << "\"";
  check_index_dtype(ctx, 1, "pads");
  if (ctx.has_input(2)) {
    check_same_dtype(ctx, {0, 2});
    const TensorType& v = ctx.input(2);
    TESSEL_USER_CHECK(!v.numel() || *v.numel() == 1, ctx.span())
        << "'constant_value' must hold one element, got " << v.str();
  }
  if (ctx.has_input(3)) check_index_dtype(ctx, 3, "axes");
}

void infer_pad(InferContext& ctx) {
  check_pad_inputs(ctx);
  const TensorType& in = ctx.input(0);
  auto pads = ctx.int_values(1);
  auto axes = ctx.int_values(3);
  if (!in.rank_known) return ctx.set_output(0, TensorType::unknown_rank(in.dtype));
  if (ctx.has_input(3) && !axes) return ctx.set_output(0, TensorType::of_rank(in.dtype, in.rank()));
  if (!pads) {
    // Only the padded axes change; without axes, any of them may.
    TensorType out = axes ? in : TensorType::of_rank(in.dtype, in.rank());
    if (axes)
      for (int a : normalize_axes(*axes, in.rank(), ctx.span())) out.dims[size_t(a)] = Dim::unknown();
    return ctx.set_output(0, out);
  }
  PadAmounts p = pad_amounts(in.rank(), *pads, axes, ctx.span());
  bool wraps = ctx.attrs().get_string("mode") != "constant";
  TensorType out = in;
  for (size_t d = 0; d < out.dims.size(); ++d) {
    Dim& dim = out.dims[d];
    if (p.begin[d] == 0 && p.end[d] == 0) continue;
    if (!dim.is_known()) {
      dim = Dim::unknown();
      continue;
    }
    int64_t size = padded_dim(dim.value, p.begin[d], p.end[d], ctx.span());
    int64_t kept = dim.value + std::min<int64_t>(p.begin[d], 0) + std::min<int64_t>(p.end[d], 0);
    bool grows = p.begin[d] > 0 || p.end[d] > 0;
    TESSEL_USER_CHECK(!wraps || !grows || kept > 0, ctx.span())
        << "mode " << ctx.attrs().get_string("mode") << " cannot pad axis " << d
        << ", which is empty after cropping";
    dim = Dim::known(size);
  }
  ctx.set_output(0, out);
}

void infer_gather(InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  check_index_dtype(ctx, 1, "indices");
  if (!data.rank_known || !idx.rank_known) return ctx.set_output(0, TensorType::unknown_rank(data.dtype));
  TESSEL_USER_CHECK(data.rank() > 0, ctx.span()) << "cannot gather from a scalar";
  int axis = normalize_axis(ctx.attrs().get_int("axis"), data.rank(), ctx.span());
  TensorType out(data.dtype, {});
  out.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  out.dims.insert(out.dims.end(), idx.dims.begin(), idx.dims.end());
  out.dims.insert(out.dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  ctx.set_output(0, out);
}

void infer_gather_elements(InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  check_index_dtype(ctx, 1, "indices");
  TensorType out = idx;  // the output has the indices' shape
  out.dtype = data.dtype;
  if (!data.rank_known || !idx.rank_known) return ctx.set_output(0, out);
  TESSEL_USER_CHECK(data.rank() == idx.rank() && data.rank() > 0, ctx.span())
      << "data " << data.str() << " and indices " << idx.str() << " must have the same non-zero rank";
  int axis = normalize_axis(ctx.attrs().get_int("axis"), data.rank(), ctx.span());
  for (int d = 0; d < data.rank(); ++d) {
    const Dim &a = data.dims[size_t(d)], &b = idx.dims[size_t(d)];
    TESSEL_USER_CHECK(d == axis || !a.is_known() || !b.is_known() || b.value <= a.value, ctx.span())
        << "indices " << idx.str() << " are larger than data " << data.str() << " outside axis " << axis;
  }
  ctx.set_output(0, out);
}

void infer_tile(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  TESSEL_USER_CHECK(ctx.input(1).dtype == DType::kI64, ctx.span())
      << "'repeats' must be int64, got " << dtype_name(ctx.input(1).dtype);
  auto repeats = ctx.int_values(1);
  if (!in.rank_known) return ctx.set_output(0, TensorType::unknown_rank(in.dtype));
  if (!repeats) return ctx.set_output(0, TensorType::of_rank(in.dtype, in.rank()));
  TESSEL_USER_CHECK(int(repeats->size()) == in.rank(), ctx.span())
      << "'repeats' has " << repeats->size() << " entries but the input has rank " << in.rank();
  TensorType out = in;
  for (size_t d = 0; d < out.dims.size(); ++d) {
    int64_t r = (*repeats)[d];
    TESSEL_USER_CHECK(r >= 0, ctx.span()) << "'repeats' must be non-negative, got " << r;
    Dim& dim = out.dims[d];
    if (r == 1) continue;
    int64_t tiled = 0;
    TESSEL_USER_CHECK(!dim.is_known() || !__builtin_mul_overflow(dim.value, r, &tiled), ctx.span())
        << "dimension " << d << " repeated " << r << " times has more than 2^63 elements";
    dim = r == 0 ? Dim::known(0) : dim.is_known() ? Dim::known(tiled) : Dim::unknown();
  }
  ctx.set_output(0, out);
}

// DepthToSpace (to_space) and SpaceToDepth on NCHW.
void infer_depth_space(InferContext& ctx, bool to_space) {
  const TensorType& in = ctx.input(0);
  int64_t bs = ctx.attrs().get_int("blocksize");
  TESSEL_USER_CHECK(bs > 0, ctx.span()) << "blocksize must be positive, got " << bs;
  if (to_space) {
    const std::string& mode = ctx.attrs().get_string("mode");
    TESSEL_USER_CHECK(mode == "DCR" || mode == "CRD", ctx.span())
        << "mode must be DCR or CRD, got \"" << mode << "\"";
  }
  if (!in.rank_known) return ctx.set_output(0, TensorType::of_rank(in.dtype, 4));
  TESSEL_USER_CHECK(in.rank() == 4, ctx.span()) << "the input must be 4-D (NCHW), got " << in.str();
  TensorType out = in;
  auto scale = [&](size_t d, bool up) {
    const Dim& dim = in.dims[d];
    if (!dim.is_known()) return;
    int64_t f = 0, scaled = 0;
    TESSEL_USER_CHECK(!__builtin_mul_overflow(bs, d == 1 ? bs : 1, &f), ctx.span())
        << "blocksize " << bs << " is too large";
    TESSEL_USER_CHECK(up || dim.value % f == 0, ctx.span())
        << "dimension " << d << " of " << in.str() << " is not divisible by " << f;
    TESSEL_USER_CHECK(!up || !__builtin_mul_overflow(dim.value, f, &scaled), ctx.span())
        << "dimension " << d << " of " << in.str() << " times " << f << " has more than 2^63 elements";
    out.dims[d] = Dim::known(up ? scaled : dim.value / f);
  };
  scale(1, !to_space);
  scale(2, to_space);
  scale(3, to_space);
  ctx.set_output(0, out);
}

}  // namespace

void register_movement_index_ops(OpRegistry& r) {
  r.def("Pad", OpPattern::kInjective)
      .inputs(2, 4)
      .outputs(1)
      .attr("mode", AttrType::kString, std::string("constant"))
      .infer(infer_pad);
  r.def("Gather", OpPattern::kInjective)
      .inputs(2)
      .outputs(1)
      .attr("axis", AttrType::kInt, int64_t(0))
      .infer(infer_gather);
  r.def("GatherElements", OpPattern::kInjective)
      .inputs(2)
      .outputs(1)
      .attr("axis", AttrType::kInt, int64_t(0))
      .infer(infer_gather_elements);
  r.def("Tile", OpPattern::kInjective).inputs(2).outputs(1).infer(infer_tile);
  r.def("DepthToSpace", OpPattern::kInjective)
      .inputs(1)
      .outputs(1)
      .attr("blocksize", AttrType::kInt)
      .attr("mode", AttrType::kString, std::string("DCR"))
      .infer([](InferContext& ctx) { infer_depth_space(ctx, true); });
  r.def("SpaceToDepth", OpPattern::kInjective)
      .inputs(1)
      .outputs(1)
      .attr("blocksize", AttrType::kInt)
      .infer([](InferContext& ctx) { infer_depth_space(ctx, false); });
}

}  // namespace tessel::graph::ops
