// Schemas and shape functions of the shape ops: Reshape, Flatten, Squeeze,
// Unsqueeze, Expand change only a tensor's shape (Expand also repeats);
// Shape, Size and ConstantOfShape live in shape_query.cpp. None counts FLOPs.
#include "ir/graph/op_registry.h"
#include "ir/graph/ops/register.h"
#include "ir/graph/ops/shape_helpers.h"
#include "ir/graph/ops/shape_ops.h"

namespace tessel::graph::ops {

namespace {

// a * b for element counts; an overflow is a UserError, not undefined behaviour.
int64_t count_mul(int64_t a, int64_t b, const Span& span) {
  int64_t r = 0;
  TESSEL_USER_CHECK(!__builtin_mul_overflow(a, b, &r), span)
      << "element count overflows int64: " << a << " * " << b;
  return r;
}

// Entries >= -1, at most one -1, and with allowzero no 0 beside a -1 (ONNX
// calls that model invalid).
void check_reshape_target(const std::vector<int64_t>& target, bool allowzero, const Span& span) {
  int minus_ones = 0;
  bool zero = false;
  for (int64_t v : target) {
    TESSEL_USER_CHECK(v >= -1, span) << "shape " << dims_str(target) << " has the negative entry " << v;
    minus_ones += v == -1;
    zero = zero || v == 0;
  }
  TESSEL_USER_CHECK(minus_ones <= 1, span) << "shape " << dims_str(target) << " has more than one -1";
  TESSEL_USER_CHECK(!(allowzero && zero && minus_ones), span)
      << "shape " << dims_str(target) << " has both 0 and -1, which allowzero=1 forbids";
}

// The -1 entry (or the element-count check) from the input's element count.
// Unknown input dims that a 0 copied cancel out; any other makes it unknown.
void resolve_reshape_count(const TensorType& in, const std::vector<bool>& copied, int64_t known_out,
                           int infer_at, TensorType& out, const Span& span) {
  int64_t known_in = 1;
  for (int d = 0; d < in.rank(); ++d) {
    if (copied[size_t(d)]) continue;
    if (!in.dims[size_t(d)].is_known()) return;
    known_in = count_mul(known_in, in.dims[size_t(d)].value, span);
  }
  if (infer_at < 0) {
    TESSEL_USER_CHECK(known_in == known_out, span)
        << "cannot reshape " << in.str() << " to " << out.str() << ": the element counts differ";
    return;
  }
  TESSEL_USER_CHECK(known_out != 0, span)
      << "cannot infer the -1 of the target shape for " << in.str() << ": another entry is 0";
  TESSEL_USER_CHECK(known_in % known_out == 0, span)
      << "cannot reshape " << in.str() << " to " << out.str() << ": " << known_in
      << " elements do not divide into groups of " << known_out;
  out.dims[size_t(infer_at)] = Dim::known(known_in / known_out);
}

TensorType reshape_type(const TensorType& in, const std::vector<int64_t>& target, bool allowzero,
                        const Span& span) {
  check_reshape_target(target, allowzero, span);
  TensorType out;
  out.dtype = in.dtype;
  std::vector<bool> copied(size_t(in.rank()), false);  // unknown input dims a 0 copied
  int64_t known_out = 1;                               // product of the known entries other than -1
  int infer_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t v = target[i];
    if (v == -1) {
      infer_at = int(i);
      out.dims.push_back(Dim::unknown());
    } else if (v == 0 && !allowzero && !in.rank_known) {
      out.dims.push_back(Dim::unknown());
    } else if (v == 0 && !allowzero) {
      TESSEL_USER_CHECK(int(i) < in.rank(), span) << "entry " << i << " of shape " << dims_str(target)
                                                  << " is 0 (keep the input's dimension), but the input "
                                                  << in.str() << " has only " << in.rank() << " dimensions";
      const Dim& d = in.dims[i];
      out.dims.push_back(d);
      if (d.is_known())
        known_out = count_mul(known_out, d.value, span);
      else
        copied[i] = true;
    } else {
      out.dims.push_back(Dim::known(v));
      known_out = count_mul(known_out, v, span);
    }
  }
  if (in.rank_known) resolve_reshape_count(in, copied, known_out, infer_at, out, span);
  return out;
}

// The length of a 1-D int64 operand (shape, axes), or -1 when not known.
int64_t vector_length(const InferContext& ctx, size_t i, const char* what) {
  const TensorType& t = ctx.input(i);
  TESSEL_USER_CHECK(t.dtype == DType::kI64, ctx.span())
      << "'" << what << "' must be an int64 tensor, got " << dtype_name(t.dtype);
  if (!t.rank_known) return -1;
  TESSEL_USER_CHECK(t.rank() == 1, ctx.span()) << "'" << what << "' must be 1-D, got " << t.str();
  return t.dims[0].value;
}

void infer_reshape(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  int64_t n = vector_length(ctx, 1, "shape");
  std::optional<std::vector<int64_t>> target = ctx.int_values(1);
  if (!target)
    return ctx.set_output(0,
                          n < 0 ? TensorType::unknown_rank(in.dtype) : TensorType::of_rank(in.dtype, int(n)));
  ctx.set_output(0, reshape_type(in, *target, ctx.attrs().get_int("allowzero") != 0, ctx.span()));
}

// The product of dims[begin, end): known, the single unknown dim itself, or unknown.
// A product past int64 is a user error (count_mul).
Dim product_dim(const std::vector<Dim>& dims, int begin, int end, const Span& span) {
  int64_t p = 1;
  const Dim* unknown = nullptr;
  int unknowns = 0;
  for (int i = begin; i < end; ++i) {
    const Dim& d = dims[size_t(i)];
    if (d.is_known())
      p = count_mul(p, d.value, span);
    else
      unknown = &d, ++unknowns;
  }
  if (unknowns == 0) return Dim::known(p);
  if (unknowns == 1 && p == 1) return *unknown;
  return Dim::unknown();
}

void infer_flatten(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  int64_t axis = ctx.attrs().get_int("axis");
  if (!in.rank_known) return ctx.set_output(0, TensorType::of_rank(in.dtype, 2));
  int rank = in.rank();
  TESSEL_USER_CHECK(axis >= -rank && axis <= rank, ctx.span())
      << "axis " << axis << " is out of range [" << -rank << ", " << rank << "] for " << in.str();
  int a = int(axis < 0 ? axis + rank : axis);
  TensorType out;
  out.dtype = in.dtype;
  out.dims = {product_dim(in.dims, 0, a, ctx.span()), product_dim(in.dims, a, rank, ctx.span())};
  ctx.set_output(0, out);
}

// Squeeze without axes drops every dimension of size 1.
void infer_squeeze(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_input(1)) {
    vector_length(ctx, 1, "axes");
    axes = ctx.int_values(1);
    if (!axes) return ctx.set_output(0, TensorType::unknown_rank(in.dtype));
  }
  if (!in.rank_known) return ctx.set_output(0, TensorType::unknown_rank(in.dtype));
  std::vector<bool> drop(size_t(in.rank()), false);
  if (!axes || axes->empty()) {
    for (int d = 0; d < in.rank(); ++d) {
      if (!in.dims[size_t(d)].is_known()) return ctx.set_output(0, TensorType::unknown_rank(in.dtype));
      drop[size_t(d)] = in.dims[size_t(d)].value == 1;
    }
  } else {
    for (int a : normalize_axes(*axes, in.rank(), ctx.span())) {
      const Dim& d = in.dims[size_t(a)];
      TESSEL_USER_CHECK(!d.is_known() || d.value == 1, ctx.span())
          << "cannot squeeze axis " << a << " of " << in.str() << ": its size is not 1";
      drop[size_t(a)] = true;
    }
  }
  TensorType out;
  out.dtype = in.dtype;
  for (int d = 0; d < in.rank(); ++d)
    if (!drop[size_t(d)]) out.dims.push_back(in.dims[size_t(d)]);
  ctx.set_output(0, out);
}

// Axes index the output: each names a new dimension of size 1.
void infer_unsqueeze(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  int64_t n = vector_length(ctx, 1, "axes");
  std::optional<std::vector<int64_t>> axes = ctx.int_values(1);
  if (!in.rank_known || (!axes && n < 0)) return ctx.set_output(0, TensorType::unknown_rank(in.dtype));
  int rank = in.rank() + int(axes ? axes->size() : size_t(n));
  if (!axes) return ctx.set_output(0, TensorType::of_rank(in.dtype, rank));
  std::vector<bool> is_new(size_t(rank), false);
  for (int a : normalize_axes(*axes, rank, ctx.span())) is_new[size_t(a)] = true;
  TensorType out;
  out.dtype = in.dtype;
  size_t next = 0;
  for (int d = 0; d < rank; ++d) out.dims.push_back(is_new[size_t(d)] ? Dim::known(1) : in.dims[next++]);
  ctx.set_output(0, out);
}

// Bidirectional numpy broadcast of the input against the target shape.
void infer_expand(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  int64_t n = vector_length(ctx, 1, "shape");
  std::optional<std::vector<int64_t>> shape = ctx.int_values(1);
  if (!in.rank_known || (!shape && n < 0)) return ctx.set_output(0, TensorType::unknown_rank(in.dtype));
  if (!shape) {
    // Only the input's known dims other than 1 are certain to survive.
    int rank = std::max(in.rank(), int(n));
    TensorType out = TensorType::of_rank(in.dtype, rank);
    for (int d = 0; d < in.rank(); ++d) {
      const Dim& dim = in.dims[size_t(d)];
      if (dim.is_known() && dim.value != 1) out.dims[size_t(rank - in.rank() + d)] = dim;
    }
    return ctx.set_output(0, out);
  }
  for (int64_t v : *shape)
    TESSEL_USER_CHECK(v >= 0, ctx.span()) << "shape " << dims_str(*shape) << " has a negative entry";
  TensorType target(in.dtype, *shape);
  TensorType out;
  out.dtype = in.dtype;
  out.dims = broadcast_dims({&in, &target}, ctx.span());
  ctx.set_output(0, out);
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  r.def("Reshape", OpPattern::kInjective)
      .inputs(2)
      .outputs(1)
      .attr("allowzero", AttrType::kInt, int64_t(0))
      .infer(infer_reshape);
  r.def("Flatten", OpPattern::kInjective)
      .inputs(1)
      .outputs(1)
      .attr("axis", AttrType::kInt, int64_t(1))
      .infer(infer_flatten);
  r.def("Squeeze", OpPattern::kInjective).inputs(1, 2).outputs(1).infer(infer_squeeze);
  r.def("Unsqueeze", OpPattern::kInjective).inputs(2).outputs(1).infer(infer_unsqueeze);
  r.def("Expand", OpPattern::kBroadcast).inputs(2).outputs(1).infer(infer_expand);
  register_shape_query_ops(r);
}

}  // namespace tessel::graph::ops
