// Exact int32 products of 8-bit operands, in f32 chunks where exact (see
// integer_products.h).
#include "src/frontend/onnx/integer_products.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace tessel::onnx_frontend {

namespace {

constexpr double kLargestExactF32Integer = 16777216.0;  // 2^24

std::pair<double, double> dtype_range(DType t) {
  switch (t) {
    case DType::kI8: return {-128, 127};
    case DType::kU8: return {0, 255};
    default:
      return {double(std::numeric_limits<int32_t>::min()), double(std::numeric_limits<int32_t>::max())};
  }
}

// The values v takes: those of a constant, else its dtype's; {0, 0} for none.
std::pair<double, double> value_range(const graph::Value* v) {
  if (!v) return {0, 0};
  if (!v->constant || v->constant->numel() == 0) return dtype_range(v->type.dtype);
  double lo = v->constant->get_f64(0), hi = lo;
  for (int64_t i = 1; i < v->constant->numel(); ++i) {
    lo = std::min(lo, v->constant->get_f64(i));
    hi = std::max(hi, v->constant->get_f64(i));
  }
  return {lo, hi};
}

// The largest |v - zero| over the values both may take.
double centred_bound(const graph::Value* v, const graph::Value* zero) {
  auto [v_lo, v_hi] = value_range(v);
  auto [z_lo, z_hi] = value_range(zero);
  return std::max(std::fabs(v_hi - z_lo), std::fabs(z_hi - v_lo));
}

// Whether sums of `terms` products of operands bounded by a and b are exact in f32.
bool exact_sum(int64_t terms, double a, double b) {
  return double(terms) * a * b <= kLargestExactF32Integer;
}

// Whether, with the reduction split in chunks of `step` along axis 1 of a
// constant operand w ([M, K, inner...], each output m reading row m; K along
// axis 0 of [K, M] when transposed), every partial sum is exact: |partial|
// <= other_bound * the chunk's sum of |w|, for every output and chunk.
bool exact_chunks_of_constant(const Tensor& w, bool transposed, int64_t step, double other_bound) {
  int64_t m = transposed ? w.shape()[1] : w.shape()[0];
  int64_t k = transposed ? w.shape()[0] : w.shape()[1];
  int64_t inner = transposed ? 1 : w.numel() / std::max<int64_t>(1, m * k);
  for (int64_t row = 0; row < m; ++row)
    for (int64_t start = 0; start < k; start += step) {
      double l1 = 0;
      for (int64_t i = start; i < std::min(k, start + step); ++i)
        for (int64_t j = 0; j < inner; ++j)
          l1 += std::fabs(transposed ? w.get_f64(i * m + row) : w.get_f64((row * k + i) * inner + j));
      if (l1 * other_bound > kLargestExactF32Integer) return false;
    }
  return true;
}

// The longest chunk of [0, extent) that `exact` accepts, from chunks of
// near-equal length (0 when not even one term per chunk is).
int64_t exact_chunk_length(int64_t extent, const std::function<bool(int64_t)>& exact) {
  int64_t tried = 0;
  for (int64_t chunks = 1; chunks <= extent; ++chunks) {
    int64_t step = (extent + chunks - 1) / chunks;
    if (step == tried) continue;
    if (exact(step)) return step;
    tried = step;
  }
  return 0;
}

graph::Value* slice(AdaptContext& c, graph::Value* v, int64_t axis, int64_t start, int64_t end) {
  return c.emit("Slice", {v, c.i64_vector({start}), c.i64_vector({end}), c.i64_vector({axis})})[0];
}

// The sum over chunks [start, start + step) of [0, extent) of product(start,
// end), each an exact f32 sum: the one chunk as it is, or the chunks added in
// f64, where every partial sum below 2^53 is exact (a chunk is below 2^24).
// Neither goes through int32, whose conversion from a float the lowering
// must guard for values out of its range.
graph::Value* chunked_sum(AdaptContext& c, int64_t extent, int64_t step,
                          const std::function<graph::Value*(int64_t, int64_t)>& product) {
  if (step >= extent) return product(0, extent);
  graph::Value* sum = nullptr;
  for (int64_t start = 0; start < extent; start += step) {
    graph::Value* part = c.cast(product(start, std::min(extent, start + step)), DType::kF64);
    sum = sum ? c.emit("Add", {sum, part})[0] : part;
  }
  return sum;
}

void check_8bit(AdaptContext& c, const graph::Value* v) {
  TESSEL_USER_CHECK(v->type.dtype == DType::kI8 || v->type.dtype == DType::kU8, c.span())
      << "the operands must be int8 or uint8, got " << v->type.str();
}

}  // namespace

graph::Value* centred(AdaptContext& c, graph::Value* v, graph::Value* zero_point, bool per_row) {
  graph::Value* wide = c.cast(v, DType::kI32);
  if (!zero_point) return wide;
  graph::Value* z = c.cast(zero_point, DType::kI32);
  bool vector = z->type.rank_known && z->type.rank() == 1 &&
                !(z->type.dims[0].is_known() && z->type.dims[0].value == 1);
  if (per_row && vector) z = c.emit("Unsqueeze", {z, c.i64_vector({-1})})[0];
  return c.emit("Sub", {wide, z})[0];
}

graph::Value* integer_matmul(AdaptContext& c, graph::Value* a, graph::Value* a_zero, graph::Value* b,
                             graph::Value* b_zero) {
  check_8bit(c, a);
  check_8bit(c, b);
  graph::Value* a_int = centred(c, a, a_zero, true);
  graph::Value* b_int = centred(c, b, b_zero, false);
  bool k_known = a->type.rank_known && a->type.rank() >= 1 && a->type.dims.back().is_known() &&
                 b->type.rank_known && b->type.rank() >= 1;
  if (!k_known) return c.emit("MatMul", {a_int, b_int})[0];
  int64_t k = a->type.dims.back().value;
  double a_bound = centred_bound(a, a_zero), b_bound = centred_bound(b, b_zero);
  std::function<bool(int64_t)> exact = [&](int64_t step) { return exact_sum(step, a_bound, b_bound); };
  if (b_int->constant && b_int->constant->rank() == 2)  // weights: bound each column's sum by its values
    exact = [&](int64_t step) { return exact_chunks_of_constant(*b_int->constant, true, step, a_bound); };
  int64_t step = exact_chunk_length(k, exact);
  if (step == 0) return c.emit("MatMul", {a_int, b_int})[0];
  graph::Value* af = c.cast(a_int, DType::kF32);
  graph::Value* bf = c.cast(b_int, DType::kF32);
  int64_t b_axis = b->type.rank() == 1 ? -1 : -2;
  return chunked_sum(c, k, step, [&](int64_t start, int64_t end) {
    if (start == 0 && end == k) return c.emit("MatMul", {af, bf})[0];
    return c.emit("MatMul", {slice(c, af, -1, start, end), slice(c, bf, b_axis, start, end)})[0];
  });
}

graph::Value* per_channel(AdaptContext& c, graph::Value* v, int64_t axis, int64_t rank) {
  if (!v || !v->type.rank_known || v->type.rank() == 0 ||
      (v->type.dims[0].is_known() && v->type.dims[0].value == 1))
    return v;
  std::vector<int64_t> shape(size_t(rank), 1);
  shape[size_t(axis)] = -1;
  return c.emit("Reshape", {v, c.i64_vector(shape)})[0];
}

graph::Value* integer_conv(AdaptContext& c, graph::Value* x, graph::Value* x_zero, graph::Value* w,
                           graph::Value* w_zero) {
  check_8bit(c, x);
  check_8bit(c, w);
  TESSEL_USER_CHECK(w->type.rank_known, c.span()) << "the weight needs a known rank";
  graph::Value* xs = c.cast(x, DType::kI32);
  if (x_zero) xs = c.emit("Sub", {xs, c.cast(x_zero, DType::kI32)})[0];
  graph::Value* ws = c.cast(w, DType::kI32);
  if (w_zero) ws = c.emit("Sub", {ws, per_channel(c, c.cast(w_zero, DType::kI32), 0, w->type.rank())})[0];
  // Per output value the Conv sums (C / group) x taps products: the weight's dims after the first.
  int64_t channels = 0, taps = 1;
  for (size_t d = 1; d < w->type.dims.size(); ++d) {
    if (!w->type.dims[d].is_known()) return c.emit("Conv", {xs, ws}, c.attrs)[0];
    if (d == 1)
      channels = w->type.dims[d].value;
    else
      taps *= w->type.dims[d].value;
  }
  double x_bound = centred_bound(x, x_zero), w_bound = centred_bound(w, w_zero);
  std::function<bool(int64_t)> exact = [&](int64_t step) { return exact_sum(step * taps, x_bound, w_bound); };
  if (ws->constant)  // weights: bound each output channel's sum by its values
    exact = [&](int64_t step) { return exact_chunks_of_constant(*ws->constant, false, step, x_bound); };
  // A grouped Conv's input channels are not split (each chunk would cut across groups).
  int64_t step =
      c.int_attr("group", 1) == 1 ? exact_chunk_length(channels, exact) : (exact(channels) ? channels : 0);
  if (step == 0) return c.emit("Conv", {xs, ws}, c.attrs)[0];
  graph::Value* xf = c.cast(xs, DType::kF32);
  graph::Value* wf = c.cast(ws, DType::kF32);
  return chunked_sum(c, channels, step, [&](int64_t start, int64_t end) {
    if (start == 0 && end == channels) return c.emit("Conv", {xf, wf}, c.attrs)[0];
    return c.emit("Conv", {slice(c, xf, 1, start, end), slice(c, wf, 1, start, end)}, c.attrs)[0];
  });
}

}  // namespace tessel::onnx_frontend
