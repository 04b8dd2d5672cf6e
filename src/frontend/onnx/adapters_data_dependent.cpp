// Ops whose output extent the data decides (NonZero, Compress), as
// compositions that compute the output at its upper bound with the data first
// (AdaptContext::data_dependent): the selected entries are found in order by
// a binary search over the running count of selected entries, a prefix sum
// built from blocks; the padding after them repeats entry 0.
#include "src/frontend/onnx/adapters_data_dependent.h"

#include <algorithm>

namespace tessel::onnx_frontend {

namespace {

// The entries of a prefix sum done at once: each block of this many sums its
// predecessors in a [block, block] product.
constexpr int64_t kPrefixBlock = 32;

}  // namespace

graph::Value* earlier_positions(AdaptContext& c, int64_t n, DType t) {
  Tensor before(t, {n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) before.set_i64(i * n + j, j < i);
  return c.constant(std::move(before));
}

// A product with the strictly lower triangle: y = Sum_j x[.., j] * (j < i).
graph::Value* exclusive_prefix_along_last(AdaptContext& c, graph::Value* rows, int64_t block) {
  graph::Value* spread = c.emit("Unsqueeze", {rows, c.i64_vector({-2})})[0];  // [.., 1, block (j)]
  graph::Value* products = c.emit("Mul", {spread, earlier_positions(c, block, DType::kI64)})[0];
  return c.emit("ReduceSum", {products, c.i64_vector({-1})}, one_attr("keepdims", int64_t(0)))[0];
}

graph::Value* exclusive_prefix_sum(AdaptContext& c, graph::Value* x) {
  int64_t n = c.static_dim(x, 0, "a prefix sum's input");
  if (n <= kPrefixBlock) {
    graph::Value* row = c.emit("Unsqueeze", {x, c.i64_vector({0})})[0];
    graph::Value* y = exclusive_prefix_along_last(c, row, n);
    return c.emit("Reshape", {y, c.i64_vector({n})})[0];
  }
  int64_t blocks = (n + kPrefixBlock - 1) / kPrefixBlock, padded = blocks * kPrefixBlock;
  graph::Value* whole = x;
  if (padded > n)
    whole =
        c.emit("Concat", {x, c.constant(Tensor(DType::kI64, {padded - n}))}, one_attr("axis", int64_t(0)))[0];
  graph::Value* rows = c.emit("Reshape", {whole, c.i64_vector({blocks, kPrefixBlock})})[0];
  graph::Value* within = exclusive_prefix_along_last(c, rows, kPrefixBlock);
  graph::Value* totals = c.emit("ReduceSum", {rows, c.i64_vector({1})}, one_attr("keepdims", int64_t(0)))[0];
  graph::Value* offsets = c.emit("Unsqueeze", {exclusive_prefix_sum(c, totals), c.i64_vector({1})})[0];
  graph::Value* sums = c.emit("Reshape", {c.emit("Add", {within, offsets})[0], c.i64_vector({padded})})[0];
  return padded > n ? c.emit("Slice", {sums, c.i64_vector({0}), c.i64_vector({n})})[0] : sums;
}

// The selected entries found by position: the r-th selected entry is the
// first whose inclusive count of selected entries reaches r + 1, found in every
// lane at once by a binary search over the (non-decreasing) counts, one
// halving of the step per graph op group: n log n work, where a scatter of the
// entries to their places is quadratic in the graph's ScatterElements.
SelectedFirst selected_first(AdaptContext& c, graph::Value* mask) {
  int64_t n = c.static_dim(mask, 0, "a selection");
  if (n == 0)
    return SelectedFirst{c.constant(Tensor(DType::kI64, {0})), c.constant(Tensor::from_i64({0}, {}))};
  graph::Value* ones = c.cast(mask, DType::kI64);
  graph::Value* counts = c.emit("Add", {exclusive_prefix_sum(c, ones), ones})[0];  // inclusive
  graph::Value* count = c.emit("ReduceSum", {ones, c.i64_vector({0})}, one_attr("keepdims", int64_t(0)))[0];
  // Range and Expand, not constants: folding makes them constants within its
  // budget, so that a huge declared shape costs no memory while importing.
  graph::Value* rank = c.emit(
      "Range", {c.scalar(DType::kI64, 0), c.scalar(DType::kI64, double(n)), c.scalar(DType::kI64, 1)})[0];
  graph::Value* wanted = c.emit("Add", {rank, c.scalar(DType::kI64, 1)})[0];
  // Entries whose count is below `wanted`, 0 to start with.
  graph::Value* found = c.emit("Expand", {c.scalar(DType::kI64, 0), c.i64_vector({n})})[0];
  int64_t step = 1;
  while (step * 2 <= n) step *= 2;
  for (; step >= 1; step /= 2) {
    graph::Value* probe = c.emit("Add", {found, c.scalar(DType::kI64, double(step - 1))})[0];
    graph::Value* inside = c.emit("Less", {probe, c.scalar(DType::kI64, double(n))})[0];
    graph::Value* clamped = c.emit("Min", {probe, c.scalar(DType::kI64, double(n - 1))})[0];
    graph::Value* below = c.emit("Less", {c.emit("Gather", {counts, clamped})[0], wanted})[0];
    graph::Value* advance = c.emit("And", {inside, below})[0];
    graph::Value* by =
        c.emit("Where", {advance, c.scalar(DType::kI64, double(step)), c.scalar(DType::kI64, 0)})[0];
    found = c.emit("Add", {found, by})[0];
  }
  // Past the count the search finds n; the padding takes entry 0 instead, a valid index.
  graph::Value* selected = c.emit("Less", {rank, count})[0];
  graph::Value* order = c.emit("Where", {selected, found, c.scalar(DType::kI64, 0)})[0];
  return SelectedFirst{order, count};
}

namespace {

// NonZero: the flat positions of the nonzero entries (NaN is nonzero), first
// by a selection, then split into coordinates: [rank, count].
void adapt_non_zero(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "X");
  TESSEL_USER_CHECK(x->type.rank_known && x->type.is_static(), c.span())
      << "X needs a static shape (the output's bound), got " << x->type.str();
  Dims dims = x->type.static_dims();
  if (dims.empty()) dims = {1};  // as numpy: a scalar is a vector of one
  int64_t rank = int64_t(dims.size()), n = *x->type.numel();
  graph::Value* flat = c.emit("Reshape", {x, c.i64_vector({n})})[0];
  graph::Value* mask = flat->type.dtype == DType::kBool
                           ? flat
                           : c.emit("Not", {c.emit("Equal", {flat, c.scalar(flat->type.dtype, 0)})[0]})[0];
  SelectedFirst picked = selected_first(c, mask);
  std::vector<int64_t> strides(size_t(rank), 1);
  for (int64_t d = rank - 2; d >= 0; --d) strides[size_t(d)] = strides[size_t(d + 1)] * dims[size_t(d + 1)];
  graph::Value* flat_row = c.emit("Unsqueeze", {picked.order, c.i64_vector({0})})[0];  // [1, n]
  graph::Value* quotient = c.emit("Div", {flat_row, c.constant(Tensor::from_i64(strides, {rank, 1}))})[0];
  graph::Value* coords = c.emit("Mod", {quotient, c.constant(Tensor::from_i64(dims, {rank, 1}))})[0];
  c.results = std::vector<graph::Value*>{c.data_dependent(coords, 1, picked.count)};
}

// Compress: the slices along `axis` (of the flattened input without one)
// whose condition holds; a condition shorter than the axis drops the rest.
void adapt_compress(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "input");
  graph::Value* condition = c.required_input(1, "condition");
  TESSEL_USER_CHECK(condition->type.rank_known && condition->type.rank() == 1, c.span())
      << "condition must be a vector, got " << condition->type.str();
  int64_t length = c.static_dim(condition, 0, "condition");
  int64_t axis = 0;
  if (c.attrs.has("axis")) {
    axis = c.normalized_axis(c.attrs.get_int("axis"), x->type.rank());
  } else {
    TESSEL_USER_CHECK(x->type.rank_known && x->type.is_static(), c.span())
        << "input needs a static shape to be flattened, got " << x->type.str();
    x = c.emit("Reshape", {x, c.i64_vector({*x->type.numel()})})[0];
  }
  int64_t extent = c.static_dim(x, axis, "input");
  TESSEL_USER_CHECK(length <= extent, c.span())
      << "condition has " << length << " entries, more than the " << extent << " along axis " << axis;
  SelectedFirst picked = selected_first(c, c.cast(condition, DType::kBool));
  graph::Value* slices = c.emit("Gather", {x, picked.order}, one_attr("axis", axis))[0];
  c.results = std::vector<graph::Value*>{c.data_dependent(slices, axis, picked.count)};
}

}  // namespace

void register_data_dependent_adapters(AdapterTable& t) {
  t["NonZero"] = adapt_non_zero;
  t["Compress"] = adapt_compress;
  register_non_max_suppression_adapter(t);
  register_unique_adapter(t);
}

}  // namespace tessel::onnx_frontend
