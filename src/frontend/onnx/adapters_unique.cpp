// Unique as a composition: the input's n slices along `axis` (or its n
// elements) compared pairwise, which gives each slice's first occurrence and,
// by lexicographic order or by first occurrence, the rank of its unique value;
// the first occurrences moved to their ranks by a permutation give the unique
// values (their extent the number of them), their indices and counts; the
// ranks are the inverse indices. The comparisons make it quadratic in n.
#include "src/frontend/onnx/adapters_data_dependent.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// The largest [n, n, slice] comparison Unique builds.
constexpr int64_t kMaxUniqueComparisons = int64_t(1) << 26;

struct Slices {
  Value* rows;  // [n, m]: slice i flattened
  int64_t n, m, axis;
};

Slices slices_of(AdaptContext& c, Value* x) {
  TESSEL_USER_CHECK(x->type.rank_known && x->type.is_static(), c.span())
      << "X needs a static shape (the outputs' bound), got " << x->type.str();
  int64_t numel = *x->type.numel();
  if (!c.attrs.has("axis")) return {c.emit("Reshape", {x, c.i64_vector({numel, 1})})[0], numel, 1, -1};
  int64_t rank = x->type.rank(), axis = c.normalized_axis(c.attrs.get_int("axis"), rank);
  std::vector<int64_t> perm{axis};
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) perm.push_back(d);
  int64_t n = c.static_dim(x, axis, "X"), m = n ? numel / n : 0;
  return {c.emit("Reshape", {c.transpose(x, perm), c.i64_vector({n, m})})[0], n, m, axis};
}

Value* any_along_last(AdaptContext& c, Value* v) {
  Value* most =
      c.emit("ReduceMax", {c.cast(v, DType::kI32), c.i64_vector({-1})}, one_attr("keepdims", int64_t(0)))[0];
  return c.emit("Greater", {most, c.scalar(DType::kI32, 0)})[0];
}

void adapt_unique(AdaptContext& c) {
  Value* x = c.required_input(0, "X");
  Slices s = slices_of(c, x);
  int64_t width = std::max<int64_t>(s.m, 1);
  TESSEL_USER_CHECK(s.n <= kMaxUniqueComparisons / std::max<int64_t>(s.n, 1) / width, c.span())
      << "Unique compares every pair of its " << s.n << " slices of " << s.m << " elements: more than "
      << kMaxUniqueComparisons << " comparisons";
  TESSEL_USER_CHECK(s.n > 0 && s.m > 0, c.span()) << "X has no slices to compare: " << x->type.str();
  Value* mine = c.emit("Unsqueeze", {s.rows, c.i64_vector({1})})[0];   // [i, 1, m]
  Value* other = c.emit("Unsqueeze", {s.rows, c.i64_vector({0})})[0];  // [1, j, m]
  Value* equal = c.emit("Equal", {mine, other})[0];
  Value* same = c.emit("Not", {any_along_last(c, c.emit("Not", {equal})[0])})[0];  // [i, j]
  Value* earlier = earlier_positions(c, s.n, DType::kBool);
  Value* first = c.emit("Not", {any_along_last(c, c.emit("And", {same, earlier})[0])})[0];  // [n]
  Value* first_i64 = c.cast(first, DType::kI64);
  Value* firsts_before = exclusive_prefix_sum(c, first_i64);
  Value* rank;  // of each slice's unique value
  if (c.int_attr("sorted", 1)) {
    // j sorts before i: at the first position where they differ, j's element is less.
    Value* differs_before =
        exclusive_prefix_along_last(c, c.cast(c.emit("Not", {equal})[0], DType::kI64), s.m);
    Value* leading = c.emit("Equal", {differs_before, c.scalar(DType::kI64, 0)})[0];
    Value* less_there = c.emit("And", {c.emit("Less", {other, mine})[0], leading})[0];
    Value* below =
        c.emit("And", {any_along_last(c, less_there), c.emit("Unsqueeze", {first, c.i64_vector({0})})[0]})[0];
    rank = c.emit("ReduceSum", {c.cast(below, DType::kI64), c.i64_vector({1})},
                  one_attr("keepdims", int64_t(0)))[0];
  } else {
    graph::Attrs along = one_attr("axis", int64_t(1));
    along.set("keepdims", int64_t(0));
    Value* first_of = c.emit("ArgMax", {c.cast(same, DType::kI32)}, along)[0];  // the earliest equal slice
    rank = c.emit("Gather", {firsts_before, first_of}, one_attr("axis", int64_t(0)))[0];
  }
  Value* count = c.emit("ReduceSum", {first_i64, c.i64_vector({0})}, one_attr("keepdims", int64_t(0)))[0];
  Value* positions = c.positions_along(1, 0, s.n);
  Value* others_before = c.emit("Sub", {positions, firsts_before})[0];
  Value* target = c.emit("Where", {first, rank, c.emit("Add", {count, others_before})[0]})[0];
  Value* zeros = c.constant(Tensor(DType::kI64, {s.n}));
  Value* order = c.emit("ScatterElements", {zeros, target, positions}, one_attr("axis", int64_t(0)))[0];
  Value* values = s.axis < 0 ? c.emit("Gather", {c.emit("Reshape", {x, c.i64_vector({s.n})})[0], order})[0]
                             : c.emit("Gather", {x, order}, one_attr("axis", s.axis))[0];
  Value* occurrences = c.emit("ReduceSum", {c.cast(same, DType::kI64), c.i64_vector({1})},
                              one_attr("keepdims", int64_t(0)))[0];
  Value* counts = c.emit("Gather", {occurrences, order}, one_attr("axis", int64_t(0)))[0];
  std::vector<Value*> results{c.data_dependent(values, std::max<int64_t>(s.axis, 0), count),
                              c.data_dependent(order, 0, count), rank, c.data_dependent(counts, 0, count)};
  results.resize(std::min(results.size(), c.output_names.size()));
  c.results = results;
}

}  // namespace

void register_unique_adapter(AdapterTable& t) {
  t["Unique"] = adapt_unique;
}

}  // namespace tessel::onnx_frontend
