// TfIdfVectorizer over integer tokens as comparisons and sums: for each n
// from min_gram_length to max_gram_length and each skip (0 to
// max_skip_count; unigrams once), the row's tokens at i, i + s + 1, ...
// compared with every pool n-gram of that length, the matches summed over
// the positions; the counts of all lengths and skips moved to their
// ngram_indexes by a MatMul with a constant 0/1 matrix, then weighted as the
// mode says (TF: counts, IDF: the weight where an n-gram occurs, TFIDF: both).
// A pool of strings (pool_strings) is refused: Tessel has no string tensors.
#include <algorithm>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// The most entries the 0/1 matrix that moves counts to their output slots
// may have, summed over the n-gram lengths.
constexpr int64_t kMaxScatterEntries = int64_t(1) << 26;

struct Pool {
  std::vector<int64_t> tokens, starts, indexes;  // starts[n - 1]: the first token of the n-grams
  std::vector<double> weights;
  int64_t outputs = 0;  // max(indexes) + 1
  // The n-grams of length n: [first, first + count) in n-gram numbering.
  std::pair<int64_t, int64_t> of_length(int64_t n) const {
    int64_t begin = starts[size_t(n - 1)];
    int64_t end = size_t(n) < starts.size() ? starts[size_t(n)] : int64_t(tokens.size());
    int64_t first = 0;
    for (int64_t k = 1; k < n; ++k) {
      int64_t b = starts[size_t(k - 1)], e = starts[size_t(k)];
      first += (e - b) / k;
    }
    return {first, (end - begin) / n};
  }
};

Pool read_pool(AdaptContext& c) {
  TESSEL_USER_CHECK(c.attrs.find("pool_strings") == nullptr, c.span())
      << "pool_strings is not supported: Tessel has no string tensors (pool_int64s is)";
  Pool p;
  p.tokens = c.ints_attr("pool_int64s", {});
  p.starts = c.ints_attr("ngram_counts", {});
  p.indexes = c.ints_attr("ngram_indexes", {});
  int64_t max_gram = c.int_attr("max_gram_length", 0);
  TESSEL_USER_CHECK(max_gram >= 1 && int64_t(p.starts.size()) >= max_gram, c.span())
      << "ngram_counts needs an entry per n-gram length up to max_gram_length " << max_gram;
  int64_t ngrams = 0;
  for (int64_t n = 1; n <= int64_t(p.starts.size()); ++n) {
    int64_t begin = p.starts[size_t(n - 1)];
    int64_t end = size_t(n) < p.starts.size() ? p.starts[size_t(n)] : int64_t(p.tokens.size());
    TESSEL_USER_CHECK(begin >= 0 && begin <= end && end <= int64_t(p.tokens.size()) && (end - begin) % n == 0,
                      c.span())
        << "ngram_counts entry " << n - 1 << " does not start whole " << n << "-grams of the pool";
    ngrams += (end - begin) / n;
  }
  TESSEL_USER_CHECK(int64_t(p.indexes.size()) == ngrams, c.span())
      << "ngram_indexes has " << p.indexes.size() << " entries for " << ngrams << " n-grams in the pool";
  for (int64_t i : p.indexes) {
    TESSEL_USER_CHECK(i >= 0 && i < (int64_t(1) << 24), c.span()) << "an ngram_indexes entry of " << i;
    p.outputs = std::max(p.outputs, i + 1);
  }
  TESSEL_USER_CHECK(ngrams == 0 || p.outputs <= kMaxScatterEntries / ngrams, c.span())
      << ngrams << " n-grams into " << p.outputs << " output slots: more than " << kMaxScatterEntries
      << " entries to move them";
  // Weights go by output slot (adapt_tfidf), so given ones must cover every slot.
  if (!c.attrs.find("weights")) {
    p.weights.assign(size_t(p.outputs), 1.0);
    return p;
  }
  p.weights = c.attrs.get_floats("weights");
  TESSEL_USER_CHECK(int64_t(p.weights.size()) == ngrams && ngrams >= p.outputs, c.span())
      << "weights has " << p.weights.size() << " entries for " << ngrams << " n-grams and " << p.outputs
      << " output slots";
  return p;
}

// Occurrences of the pool's n-grams of length n in each row of x ([N, C]):
// [N, count] floats, every skip distance counted.
Value* count_ngrams(AdaptContext& c, Value* x, const Pool& p, int64_t n, int64_t max_skip) {
  auto [first, count] = p.of_length(n);
  int64_t length = c.static_dim(x, 1, "the input");
  int64_t begin = p.starts[size_t(n - 1)];
  Value* total = nullptr;
  for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip) {
    int64_t positions = length - (n - 1) * (skip + 1);
    if (positions <= 0) break;
    Value* match = nullptr;
    for (int64_t t = 0; t < n; ++t) {
      int64_t from = t * (skip + 1);
      Value* window =
          c.emit("Slice", {x, c.i64_vector({from}), c.i64_vector({from + positions}), c.i64_vector({1})})[0];
      window = c.emit("Unsqueeze", {window, c.i64_vector({1})})[0];  // [N, 1, positions]
      Tensor tokens(x->type.dtype, {1, count, 1});
      for (int64_t j = 0; j < count; ++j) tokens.set_i64(j, p.tokens[size_t(begin + j * n + t)]);
      Value* equal = c.emit("Equal", {window, c.constant(std::move(tokens))})[0];
      match = match ? c.emit("And", {match, equal})[0] : equal;
    }
    graph::Attrs attrs;
    attrs.set("keepdims", int64_t(0));
    Value* found = c.emit("ReduceSum", {c.cast(match, DType::kF32), c.i64_vector({2})}, attrs)[0];
    total = total ? c.emit("Add", {total, found})[0] : found;
  }
  return total ? total : c.constant(Tensor(DType::kF32, {c.static_dim(x, 0, "the input"), count}));
}

void adapt_tfidf(AdaptContext& c) {
  Value* x = c.required_input(0, "X");
  DType t = x->type.dtype;
  TESSEL_USER_CHECK(t == DType::kI32 || t == DType::kI64, c.span())
      << "X must hold int32 or int64 tokens, got " << x->type.str();
  TESSEL_USER_CHECK(x->type.rank() == 1 || x->type.rank() == 2, c.span()) << "X must be [C] or [N, C]";
  Pool p = read_pool(c);
  std::string mode = c.string_attr("mode", "TF");
  TESSEL_USER_CHECK(mode == "TF" || mode == "IDF" || mode == "TFIDF", c.span())
      << "mode must be TF, IDF or TFIDF, got '" << mode << "'";
  int64_t min_gram = c.int_attr("min_gram_length", 0), max_gram = c.int_attr("max_gram_length", 0);
  int64_t max_skip = c.int_attr("max_skip_count", 0);
  TESSEL_USER_CHECK(min_gram >= 1 && min_gram <= max_gram && max_skip >= 0, c.span())
      << "needs 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0";
  bool vector = x->type.rank() == 1;
  Value* rows = vector ? c.emit("Unsqueeze", {x, c.i64_vector({0})})[0] : x;
  int64_t batch = c.static_dim(rows, 0, "X");
  Value* out = c.constant(Tensor(DType::kF32, {batch, p.outputs}));
  for (int64_t n = min_gram; n <= max_gram; ++n) {
    auto [first, count] = p.of_length(n);
    if (count == 0) continue;
    Value* counts = count_ngrams(c, rows, p, n, max_skip);  // [N, count]
    Tensor scatter(DType::kF32, {count, p.outputs});
    for (int64_t j = 0; j < count; ++j) scatter.set_f64(j * p.outputs + p.indexes[size_t(first + j)], 1.0);
    out = c.emit("Add", {out, c.emit("MatMul", {counts, c.constant(std::move(scatter))})[0]})[0];
  }
  // The weights go by output slot, as ONNX Runtime and ONNX's reference apply them.
  Tensor weights(DType::kF32, {1, p.outputs});
  for (int64_t k = 0; k < p.outputs; ++k) weights.set_f64(k, p.weights[size_t(k)]);
  if (mode == "IDF") out = c.cast(c.emit("Greater", {out, c.scalar(DType::kF32, 0)})[0], DType::kF32);
  if (mode != "TF") out = c.emit("Mul", {out, c.constant(std::move(weights))})[0];
  c.results = {vector ? c.emit("Squeeze", {out, c.i64_vector({0})})[0] : out};
}

}  // namespace

void register_tfidf_adapter(AdapterTable& t) {
  t["TfIdfVectorizer"] = adapt_tfidf;
}

}  // namespace tessel::onnx_frontend
