// Schemas and shape functions of the index-tuple and scatter ops: GatherND,
// ScatterND, ScatterElements. GatherND is injective; the scatters are opaque
// (an output element's source depends on index values, not on its position,
// so nothing can be fused into them elementwise). No FLOPs counted.
#include <algorithm>

#include "ir/graph/op_registry.h"
#include "ir/graph/ops/movement_geometry.h"
#include "ir/graph/ops/shape_helpers.h"

namespace tessel::graph::ops {

namespace {

void check_indices(const InferContext& ctx) {
  DType t = ctx.input(1).dtype;
  TESSEL_USER_CHECK(t == DType::kI32 || t == DType::kI64, ctx.span())
      << "'indices' must be int32 or int64, got " << dtype_name(t);
}

// Requires the known dimensions of a and b to agree over [a0, a0 + n) and [b0, b0 + n).
void check_dims_match(const InferContext& ctx, const TensorType& a, int a0, const TensorType& b, int b0,
                      int n, const char* what) {
  for (int i = 0; i < n; ++i) {
    const Dim &x = a.dims[size_t(a0 + i)], &y = b.dims[size_t(b0 + i)];
    TESSEL_USER_CHECK(!x.is_known() || !y.is_known() || x.value == y.value, ctx.span())
        << what << ": " << a.str() << " and " << b.str() << " disagree";
  }
}

void infer_gather_nd(InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  check_indices(ctx);
  int64_t b = ctx.attrs().get_int("batch_dims");
  if (!data.rank_known || !idx.rank_known || idx.rank() == 0 || !idx.dims.back().is_known())
    return ctx.set_output(0, TensorType::unknown_rank(data.dtype));
  int r = data.rank(), q = idx.rank();
  int64_t k = idx.dims.back().value;
  TESSEL_USER_CHECK(b >= 0 && b < std::min(r, q), ctx.span())
      << "batch_dims " << b << " must be below the ranks of data (" << r << ") and indices (" << q << ")";
  TESSEL_USER_CHECK(k >= 1 && k <= r - b, ctx.span())
      << "the last dimension of indices (" << k << ") must be in [1, " << r - b << "]";
  check_dims_match(ctx, data, 0, idx, 0, int(b), "the batch dimensions of data and indices");
  TensorType out = TensorType::of_rank(data.dtype, 0);
  out.dims.assign(idx.dims.begin(), idx.dims.end() - 1);
  out.dims.insert(out.dims.end(), data.dims.begin() + b + k, data.dims.end());
  ctx.set_output(0, out);
}

void check_reduction(const InferContext& ctx) {
  const std::string& red = ctx.attrs().get_string("reduction");
  TESSEL_USER_CHECK(red == "none" || red == "add" || red == "mul" || red == "max" || red == "min", ctx.span())
      << "reduction must be none, add, mul, max or min, got \"" << red << "\"";
  TESSEL_USER_CHECK(red == "none" || ctx.input(0).dtype != DType::kBool, ctx.span())
      << "reduction " << red << " is not supported on bool tensors";
}

void infer_scatter_nd(InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  const TensorType& upd = ctx.input(2);
  check_indices(ctx);
  check_same_dtype(ctx, {0, 2});
  check_reduction(ctx);
  ctx.set_output(0, data);
  if (!data.rank_known || !idx.rank_known || !upd.rank_known) return;
  TESSEL_USER_CHECK(idx.rank() >= 1, ctx.span()) << "indices must have rank 1 or more";
  if (!idx.dims.back().is_known()) return;
  int64_t k = idx.dims.back().value;
  int r = data.rank(), q = idx.rank();
  TESSEL_USER_CHECK(k <= r, ctx.span())
      << "the last dimension of indices (" << k << ") exceeds the data rank " << r;
  TESSEL_USER_CHECK(upd.rank() == q - 1 + r - int(k), ctx.span())
      << "updates " << upd.str() << " must have shape indices[:-1] + data[" << k << ":]";
  check_dims_match(ctx, upd, 0, idx, 0, q - 1, "updates and indices[:-1]");
  check_dims_match(ctx, upd, q - 1, data, int(k), r - int(k), "updates and data");
}

void infer_scatter_elements(InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  const TensorType& upd = ctx.input(2);
  check_indices(ctx);
  check_same_dtype(ctx, {0, 2});
  check_reduction(ctx);
  ctx.set_output(0, data);
  if (!data.rank_known || !idx.rank_known || !upd.rank_known) return;
  TESSEL_USER_CHECK(data.rank() > 0 && idx.rank() == data.rank() && upd.rank() == data.rank(), ctx.span())
      << "data " << data.str() << ", indices " << idx.str() << " and updates " << upd.str()
      << " must have the same non-zero rank";
  int axis = normalize_axis(ctx.attrs().get_int("axis"), data.rank(), ctx.span());
  check_dims_match(ctx, idx, 0, upd, 0, idx.rank(), "indices and updates");
  for (int d = 0; d < data.rank(); ++d) {
    const Dim &a = data.dims[size_t(d)], &b = idx.dims[size_t(d)];
    TESSEL_USER_CHECK(d == axis || !a.is_known() || !b.is_known() || b.value <= a.value, ctx.span())
        << "indices " << idx.str() << " are larger than data " << data.str() << " outside axis " << axis;
  }
}

}  // namespace

void register_movement_scatter_ops(OpRegistry& r) {
  r.def("GatherND", OpPattern::kInjective)
      .inputs(2)
      .outputs(1)
      .attr("batch_dims", AttrType::kInt, int64_t(0))
      .infer(infer_gather_nd);
  r.def("ScatterND", OpPattern::kOpaque)
      .inputs(3)
      .outputs(1)
      .attr("reduction", AttrType::kString, std::string("none"))
      .infer(infer_scatter_nd);
  r.def("ScatterElements", OpPattern::kOpaque)
      .inputs(3)
      .outputs(1)
      .attr("axis", AttrType::kInt, int64_t(0))
      .attr("reduction", AttrType::kString, std::string("none"))
      .infer(infer_scatter_elements);
}

}  // namespace tessel::graph::ops
