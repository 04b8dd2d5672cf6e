// Schemas and shape functions of the data-movement ops that rearrange or cut
// whole ranges: Transpose, Concat, Split, Slice. All are injective and count
// no FLOPs. The indexing ops live in movement_index.cpp.
#include <climits>
#include <numeric>

#include "ir/graph/op_registry.h"
#include "ir/graph/ops/movement_geometry.h"
#include "ir/graph/ops/register.h"
#include "ir/graph/ops/shape_helpers.h"

namespace tessel::graph::ops {

namespace {

// An integer-typed optional input's constant value; nullopt when absent or unknown.
std::optional<std::vector<int64_t>> int_input(const InferContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return std::nullopt;
  TESSEL_USER_CHECK(is_integer(ctx.input(i).dtype), ctx.span())
      << "'" << what << "' must be an integer tensor, got " << dtype_name(ctx.input(i).dtype);
  return ctx.int_values(i);
}

void infer_transpose(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  std::vector<int64_t> perm = ctx.attrs().get_ints("perm");
  if (!in.rank_known) {
    ctx.set_output(0, perm.empty() ? TensorType::unknown_rank(in.dtype)
                                   : TensorType::of_rank(in.dtype, int(perm.size())));
    return;
  }
  int rank = in.rank();
  if (perm.empty()) {
    perm.resize(size_t(rank));
    for (int i = 0; i < rank; ++i) perm[size_t(i)] = rank - 1 - i;
  }
  TESSEL_USER_CHECK(int(perm.size()) == rank, ctx.span())
      << "'perm' has " << perm.size() << " entries but the input has rank " << rank;
  std::vector<int> axes = normalize_axes(perm, rank, ctx.span());
  TensorType out = in;
  for (int i = 0; i < rank; ++i) out.dims[size_t(i)] = in.dims[size_t(axes[size_t(i)])];
  ctx.set_output(0, out);
}

void infer_concat(InferContext& ctx) {
  std::vector<size_t> all(ctx.num_inputs());
  std::iota(all.begin(), all.end(), 0);
  check_same_dtype(ctx, all);
  const TensorType* first = nullptr;
  for (size_t i : all)
    if (ctx.input(i).rank_known) first = first ? first : &ctx.input(i);
  DType dtype = ctx.input(0).dtype;
  if (first == nullptr) return ctx.set_output(0, TensorType::unknown_rank(dtype));
  int rank = first->rank();
  TESSEL_USER_CHECK(rank > 0, ctx.span()) << "cannot concatenate scalars";
  int axis = normalize_axis(ctx.attrs().get_int("axis"), rank, ctx.span());
  TensorType out = TensorType::of_rank(dtype, rank);
  int64_t axis_sum = 0;
  for (size_t i : all) {
    const TensorType& t = ctx.input(i);
    if (!t.rank_known) {
      axis_sum = -1;
      continue;
    }
    TESSEL_USER_CHECK(t.rank() == rank, ctx.span())
        << "input " << i << " has rank " << t.rank() << ", input 0 has rank " << rank;
    for (int d = 0; d < rank; ++d) {
      const Dim& dim = t.dims[size_t(d)];
      Dim& o = out.dims[size_t(d)];
      if (d == axis) {
        axis_sum = (axis_sum < 0 || !dim.is_known()) ? -1 : axis_sum + dim.value;
        continue;
      }
      TESSEL_USER_CHECK(!dim.is_known() || !o.is_known() || dim.value == o.value, ctx.span())
          << "input " << i << " has shape " << t.str() << ", which differs from the others"
          << " outside axis " << axis;
      if (!o.is_known()) o = dim;
    }
  }
  out.dims[size_t(axis)] = axis_sum < 0 ? Dim::unknown() : Dim::known(axis_sum);
  ctx.set_output(0, out);
}

void infer_split(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  size_t n = ctx.num_outputs();
  int64_t num_outputs = ctx.attrs().get_int("num_outputs");
  TESSEL_USER_CHECK(num_outputs >= 0, ctx.span()) << "num_outputs must be positive, got " << num_outputs;
  std::optional<std::vector<int64_t>> split = int_input(ctx, 1, "split");
  bool split_known = !ctx.has_input(1) || split.has_value();
  if (!in.rank_known) {
    for (size_t i = 0; i < n; ++i) ctx.set_output(i, TensorType::unknown_rank(in.dtype));
    return;
  }
  TESSEL_USER_CHECK(in.rank() > 0, ctx.span()) << "cannot split a scalar";
  int axis = normalize_axis(ctx.attrs().get_int("axis"), in.rank(), ctx.span());
  const Dim& dim = in.dims[size_t(axis)];
  std::vector<int64_t> sizes(n, -1);
  if (dim.is_known() && split_known)
    sizes = split_sizes(dim.value, split, num_outputs, n, ctx.span());
  else if (split && split->size() == n)
    sizes = *split;  // known even when the axis is not
  for (size_t i = 0; i < n; ++i) {
    TensorType out = in;
    out.dims[size_t(axis)] = sizes[i] < 0 ? Dim::unknown() : Dim::known(sizes[i]);
    ctx.set_output(i, out);
  }
}

// The size of a sliced axis whose input size is unknown: known only when the
// slice takes the whole axis forward.
Dim unknown_sliced_dim(const Dim& dim, const SliceRequest& r) {
  bool whole = r.step == 1 && (r.start == 0 || r.start <= -(int64_t(1) << 62)) && r.end >= (int64_t(1) << 62);
  return whole ? dim : Dim::unknown();
}

void infer_slice(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  auto starts = int_input(ctx, 1, "starts");
  auto ends = int_input(ctx, 2, "ends");
  auto axes = int_input(ctx, 3, "axes");
  auto steps = int_input(ctx, 4, "steps");
  if (!in.rank_known) return ctx.set_output(0, TensorType::unknown_rank(in.dtype));
  bool known = starts && ends && (axes || !ctx.has_input(3)) && (steps || !ctx.has_input(4));
  if (!known) {
    // Only the sliced axes change; without constant axes, any of them may.
    TensorType out = TensorType::of_rank(in.dtype, in.rank());
    if (axes) {
      out = in;
      for (int a : normalize_axes(*axes, in.rank(), ctx.span())) out.dims[size_t(a)] = Dim::unknown();
    }
    return ctx.set_output(0, out);
  }
  TensorType out = in;
  for (const SliceRequest& r : slice_requests(in.rank(), *starts, *ends, axes, steps, ctx.span())) {
    Dim& d = out.dims[size_t(r.axis)];
    d = d.is_known() ? Dim::known(slice_axis(d.value, r).count) : unknown_sliced_dim(d, r);
  }
  ctx.set_output(0, out);
}

}  // namespace

void register_movement_ops(OpRegistry& r) {
  r.def("Transpose", OpPattern::kInjective)
      .inputs(1)
      .outputs(1)
      .attr("perm", AttrType::kInts, std::vector<int64_t>{})
      .infer(infer_transpose);
  r.def("Concat", OpPattern::kInjective)
      .inputs(1, INT_MAX)
      .outputs(1)
      .attr("axis", AttrType::kInt)
      .infer(infer_concat);
  // num_outputs 0: not given (Split-18's attribute has no default).
  r.def("Split", OpPattern::kInjective)
      .inputs(1, 2)
      .outputs(1, INT_MAX)
      .attr("axis", AttrType::kInt, int64_t(0))
      .attr("num_outputs", AttrType::kInt, int64_t(0))
      .infer(infer_split);
  r.def("Slice", OpPattern::kInjective).inputs(3, 5).outputs(1).infer(infer_slice);
  register_movement_index_ops(r);
  register_movement_scatter_ops(r);
  register_movement_trilu_range_ops(r);
}

}  // namespace tessel::graph::ops
