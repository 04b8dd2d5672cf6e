// Schemas and shape functions of the normalisations (BatchNormalization in its
// inference form, LayerNormalization, InstanceNormalization,
// GroupNormalization) and of Softmax and LogSoftmax.
#include "ir/graph/op_registry.h"
#include "ir/graph/ops/nn_register.h"
#include "ir/graph/ops/shape_helpers.h"

namespace tessel::graph::ops {

namespace {

void check_float_input(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return;
  DType t = ctx.input(i).dtype;
  TESSEL_USER_CHECK(is_float(t), ctx.span())
      << "input " << i << " must be a float tensor, got " << dtype_name(t);
}

// Input i must be 1-D with `channels` entries (where both are known).
void check_per_channel(const InferContext& ctx, size_t i, const Dim& channels, const char* what) {
  if (!ctx.has_input(i)) return;
  const TensorType& t = ctx.input(i);
  if (!t.rank_known) return;
  TESSEL_USER_CHECK(t.rank() == 1, ctx.span()) << what << " must be 1-D, got " << t.str();
  TESSEL_USER_CHECK(!t.dims[0].is_known() || !channels.is_known() || t.dims[0].value == channels.value,
                    ctx.span())
      << what << " has " << t.dims[0].value << " entries, but the input has " << channels.value
      << " channels";
}

Dim channels_of(const TensorType& x) {
  return x.rank_known && x.rank() >= 2 ? x.dims[1] : Dim::unknown();
}

void check_min_rank(const InferContext& ctx, int min_rank) {
  const TensorType& x = ctx.input(0);
  TESSEL_USER_CHECK(!x.rank_known || x.rank() >= min_rank, ctx.span())
      << "the input must be N x C" << (min_rank > 2 ? " x D1 x ..." : " x ...") << " (rank at least "
      << min_rank << "), got " << x.str();
}

// Inference form: Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel.
void infer_batch_norm(InferContext& ctx) {
  TESSEL_USER_CHECK(ctx.attrs().get_int("training_mode") == 0, ctx.span())
      << "training_mode=1 is not supported: Tessel runs BatchNormalization in inference form only";
  TESSEL_USER_CHECK(ctx.num_outputs() == 1, ctx.span())
      << "has " << ctx.num_outputs() << " outputs, but the running mean and variance outputs exist only in "
      << "training mode, which is not supported";
  for (size_t i = 0; i < 5; ++i) check_float_input(ctx, i);
  check_same_dtype(ctx, {1, 2});
  check_same_dtype(ctx, {3, 4});
  check_min_rank(ctx, 2);
  Dim c = channels_of(ctx.input(0));
  const char* names[] = {"", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) check_per_channel(ctx, i, c, names[i]);
  ctx.set_output(0, ctx.input(0));
}

// After folding the statistics into one scale and one shift per channel.
int64_t batch_norm_flops(const Node& n) {
  return 2 * output_elements(n);
}

DType stash_dtype(const InferContext& ctx) {
  int64_t s = ctx.attrs().get_int("stash_type");
  TESSEL_USER_CHECK(s == 1 || s == 11, ctx.span())
      << "stash_type must be 1 (float) or 11 (double), got " << s;
  return s == 1 ? DType::kF32 : DType::kF64;
}

// Input i must broadcast (numpy, one-directional) to x.dims[axis:]; leading
// size-1 dimensions beyond that rank (Scale [1, 1, 768]) are allowed.
void check_broadcasts_to_tail(const InferContext& ctx, size_t i, const TensorType& x, int axis,
                              const char* what) {
  if (!ctx.has_input(i) || !ctx.input(i).rank_known) return;
  const TensorType& t = ctx.input(i);
  int extra = t.rank() - (x.rank() - axis);
  for (int j = 0; j < t.rank(); ++j) {
    const Dim& d = t.dims[size_t(j)];
    bool ok = d.value == 1 || !d.is_known();
    if (j >= extra) {
      const Dim& want = x.dims[size_t(axis + j - extra)];
      ok = ok || !want.is_known() || d.value == want.value;
    }
    TESSEL_USER_CHECK(ok, ctx.span())
        << what << " " << t.str() << " does not broadcast to the normalised shape of " << x.str() << " (axis "
        << axis << ")";
  }
}

// Normalises over axes [axis, rank); Mean and InvStdDev keep the leading dims.
void infer_layer_norm(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) check_float_input(ctx, i);
  check_same_dtype(ctx, {0, 1, 2});
  DType stash = stash_dtype(ctx);
  const TensorType& x = ctx.input(0);
  ctx.set_output(0, x);
  if (!x.rank_known) {
    for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.set_output(i, TensorType::unknown_rank(stash));
    return;
  }
  int axis = normalize_axis(ctx.attrs().get_int("axis"), x.rank(), ctx.span());
  check_broadcasts_to_tail(ctx, 1, x, axis, "Scale");
  check_broadcasts_to_tail(ctx, 2, x, axis, "B");
  TensorType stats = x;
  stats.dtype = stash;
  for (int i = axis; i < x.rank(); ++i) stats.dims[size_t(i)] = Dim::known(1);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.set_output(i, stats);
}

// Per element: mean, variance (2), normalise (2), scale and shift (2), about 8.
int64_t norm_flops(const Node& n) {
  return 8 * output_elements(n);
}

void infer_instance_norm(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) check_float_input(ctx, i);
  check_same_dtype(ctx, {0, 1, 2});
  check_min_rank(ctx, 3);
  Dim c = channels_of(ctx.input(0));
  check_per_channel(ctx, 1, c, "scale");
  check_per_channel(ctx, 2, c, "B");
  ctx.set_output(0, ctx.input(0));
}

// GroupNormalization-21: scale and bias per channel, statistics per group.
void infer_group_norm(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) check_float_input(ctx, i);
  check_same_dtype(ctx, {0, 1, 2});
  stash_dtype(ctx);
  check_min_rank(ctx, 2);
  int64_t groups = ctx.attrs().get_int("num_groups");
  TESSEL_USER_CHECK(groups >= 1, ctx.span()) << "num_groups must be positive, got " << groups;
  Dim c = channels_of(ctx.input(0));
  TESSEL_USER_CHECK(!c.is_known() || c.value % groups == 0, ctx.span())
      << "the input's " << c.value << " channels are not divisible by num_groups " << groups;
  check_per_channel(ctx, 1, c, "scale");
  check_per_channel(ctx, 2, c, "bias");
  ctx.set_output(0, ctx.input(0));
}

void infer_softmax(InferContext& ctx) {
  check_float_input(ctx, 0);
  const TensorType& x = ctx.input(0);
  if (x.rank_known) normalize_axis(ctx.attrs().get_int("axis"), x.rank(), ctx.span());
  ctx.set_output(0, x);
}

// Per element: max, subtract, exp, sum and divide (or log), about 5.
int64_t softmax_flops(const Node& n) {
  return 5 * output_elements(n);
}

}  // namespace

void register_norm_ops(OpRegistry& r) {
  // Inference BatchNormalization is a per-channel scale and shift: each output
  // element reads one input element and broadcast per-channel values.
  r.def("BatchNormalization", OpPattern::kBroadcast)
      .inputs(5)
      .outputs(1, 3)
      .attr("epsilon", AttrType::kFloat, 1e-5)
      .attr("momentum", AttrType::kFloat, 0.9)
      .attr("training_mode", AttrType::kInt, int64_t(0))
      .infer(infer_batch_norm)
      .flops(batch_norm_flops);
  // The rest reduce and then map over the same elements again: opaque.
  r.def("LayerNormalization", OpPattern::kOpaque)
      .inputs(2, 3)
      .outputs(1, 3)
      .attr("axis", AttrType::kInt, int64_t(-1))
      .attr("epsilon", AttrType::kFloat, 1e-5)
      .attr("stash_type", AttrType::kInt, int64_t(1))
      .infer(infer_layer_norm)
      .flops(norm_flops);
  r.def("InstanceNormalization", OpPattern::kOpaque)
      .inputs(3)
      .outputs(1)
      .attr("epsilon", AttrType::kFloat, 1e-5)
      .infer(infer_instance_norm)
      .flops(norm_flops);
  r.def("GroupNormalization", OpPattern::kOpaque)
      .inputs(3)
      .outputs(1)
      .attr("epsilon", AttrType::kFloat, 1e-5)
      .attr("num_groups", AttrType::kInt)
      .attr("stash_type", AttrType::kInt, int64_t(1))
      .infer(infer_group_norm)
      .flops(norm_flops);
  for (const char* op : {"Softmax", "LogSoftmax"})
    r.def(op, OpPattern::kOpaque)
        .inputs(1)
        .outputs(1)
        .attr("axis", AttrType::kInt, int64_t(-1))
        .infer(infer_softmax)
        .flops(softmax_flops);
}

}  // namespace tessel::graph::ops
