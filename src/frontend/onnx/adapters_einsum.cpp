// Einsum as graph ops. Each operand first loses its repeated labels (a
// diagonal: the product with an identity mask summed over one of the two
// axes) and the labels no other operand and not the output has (summed).
// Operands are then contracted two at a time as one batched MatMul: the
// labels both share and the result keeps are its batch, the ones only one
// has its rows or columns, the shared ones it drops its reduction. What is
// left is transposed to the output's order. Ellipsis dimensions broadcast
// from the right as in numpy; an equation without "->" outputs them, then
// the labels seen once, in alphabetical order.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

constexpr int kEllipsisLabel = 1000;  // ellipsis dimension k is label kEllipsisLabel + k

struct Operand {
  Value* v;
  std::vector<int> labels;  // one per dimension
};

struct Equation {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
};

// A term's labels, its "..." standing for `ellipsis_rank - dims` ... the
// rightmost of the ellipsis labels (`dims` the dimensions it covers).
std::vector<int> term_labels(const AdaptContext& c, const std::string& term, int rank, int ellipsis_rank) {
  std::vector<int> labels;
  size_t dots = term.find("...");
  int letters = int(std::count_if(term.begin(), term.end(), [](char ch) { return std::isalpha(ch); }));
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      int covered = rank - letters;
      TESSEL_USER_CHECK(covered >= 0, c.span()) << "term '" << term << "' has more labels than rank " << rank;
      for (int k = ellipsis_rank - covered; k < ellipsis_rank; ++k) labels.push_back(kEllipsisLabel + k);
      i += 2;
    } else {
      TESSEL_USER_CHECK(std::isalpha(term[i]), c.span())
          << "equation term '" << term << "' has a character '" << term[i] << "' that is no label";
      labels.push_back(term[i]);
    }
  }
  TESSEL_USER_CHECK(int(labels.size()) == rank, c.span())
      << "term '" << term << "' has " << labels.size() << " labels for an input of rank " << rank;
  return labels;
}

Equation parse(const AdaptContext& c, const std::vector<int>& ranks) {
  std::string eq;
  for (char ch : c.string_attr("equation", ""))
    if (!std::isspace(static_cast<unsigned char>(ch))) eq += ch;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  TESSEL_USER_CHECK(terms.size() == ranks.size(), c.span())
      << "equation '" << eq << "' has " << terms.size() << " terms for " << ranks.size() << " inputs";
  int ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].find("...") == std::string::npos) continue;
    int letters =
        int(std::count_if(terms[i].begin(), terms[i].end(), [](char ch) { return std::isalpha(ch); }));
    ellipsis_rank = std::max(ellipsis_rank, ranks[i] - letters);
  }
  Equation e;
  for (size_t i = 0; i < terms.size(); ++i)
    e.inputs.push_back(term_labels(c, terms[i], ranks[i], ellipsis_rank));
  if (arrow != std::string::npos) {
    std::string out = eq.substr(arrow + 2);
    for (size_t i = 0; i < out.size(); ++i) {
      if (out.compare(i, 3, "...") == 0) {
        for (int k = 0; k < ellipsis_rank; ++k) e.output.push_back(kEllipsisLabel + k);
        i += 2;
        continue;
      }
      TESSEL_USER_CHECK(std::isalpha(out[i]), c.span())
          << "output '" << out << "' has a character that is no label";
      e.output.push_back(out[i]);
    }
    return e;
  }
  for (int k = 0; k < ellipsis_rank; ++k) e.output.push_back(kEllipsisLabel + k);
  std::map<int, int> seen;
  for (const auto& labels : e.inputs)
    for (int l : labels) ++seen[l];
  for (const auto& [label, count] : seen)
    if (count == 1 && label < kEllipsisLabel) e.output.push_back(label);
  return e;
}

int64_t dim_of(const AdaptContext& c, const Operand& o, size_t axis) {
  return c.static_dim(o.v, int64_t(axis), "Einsum input");
}

// A label that appears twice keeps only the diagonal.
void take_diagonals(AdaptContext& c, Operand& o) {
  for (size_t q = 1; q < o.labels.size(); ++q) {
    auto p = size_t(std::find(o.labels.begin(), o.labels.begin() + long(q), o.labels[q]) - o.labels.begin());
    if (p == q) continue;
    int64_t n = dim_of(c, o, p);
    TESSEL_USER_CHECK(dim_of(c, o, q) == n, c.span()) << "a repeated label spans dimensions of other sizes";
    std::vector<int64_t> shape(o.labels.size(), 1);
    shape[p] = shape[q] = n;
    Tensor eye(o.v->type.dtype, shape);  // zeros; its only non-unit dimensions are p and q
    for (int64_t i = 0; i < n; ++i) eye.set_f64(i * n + i, 1);
    Value* masked = c.emit("Mul", {o.v, c.constant(std::move(eye))})[0];
    o.v = c.emit("ReduceSum", {masked, c.i64_vector({int64_t(q)})}, one_attr("keepdims", int64_t(0)))[0];
    o.labels.erase(o.labels.begin() + long(q));
    --q;
  }
}

// Sums the dimensions whose labels are not in `keep`.
void sum_others(AdaptContext& c, Operand& o, const std::set<int>& keep) {
  std::vector<int64_t> axes;
  std::vector<int> left;
  for (size_t a = 0; a < o.labels.size(); ++a) {
    if (keep.count(o.labels[a]))
      left.push_back(o.labels[a]);
    else
      axes.push_back(int64_t(a));
  }
  if (axes.empty()) return;
  o.v = c.emit("ReduceSum", {o.v, c.i64_vector(axes)}, one_attr("keepdims", int64_t(0)))[0];
  o.labels = left;
}

void permute(AdaptContext& c, Operand& o, const std::vector<int>& order) {
  if (order == o.labels) return;
  std::vector<int64_t> perm;
  for (int l : order) perm.push_back(std::find(o.labels.begin(), o.labels.end(), l) - o.labels.begin());
  o.v = c.transpose(o.v, perm);
  o.labels = order;
}

// a and b contracted over their shared labels that `keep` lacks, as one MatMul.
Operand contract(AdaptContext& c, Operand a, Operand b, const std::set<int>& keep) {
  std::vector<int> batch, rows, columns, reduced;
  for (int l : a.labels) {
    bool shared = std::count(b.labels.begin(), b.labels.end(), l) > 0;
    (shared ? (keep.count(l) ? batch : reduced) : rows).push_back(l);
  }
  for (int l : b.labels)
    if (!std::count(a.labels.begin(), a.labels.end(), l)) columns.push_back(l);
  auto concat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  permute(c, a, concat(batch, rows, reduced));
  permute(c, b, concat(batch, reduced, columns));
  auto extent = [&](const Operand& o, size_t from, size_t count) {
    int64_t n = 1;
    for (size_t i = from; i < from + count; ++i) n *= dim_of(c, o, i);
    return n;
  };
  std::vector<int64_t> a_shape, b_shape, result_shape;
  for (size_t i = 0; i < batch.size(); ++i) {
    a_shape.push_back(dim_of(c, a, i));
    b_shape.push_back(dim_of(c, b, i));
    result_shape.push_back(std::max(a_shape.back(), b_shape.back()));
  }
  int64_t k = extent(a, batch.size() + rows.size(), reduced.size());
  TESSEL_USER_CHECK(k == extent(b, batch.size(), reduced.size()), c.span())
      << "a label summed over has other sizes in two inputs";
  a_shape.insert(a_shape.end(), {extent(a, batch.size(), rows.size()), k});
  b_shape.insert(b_shape.end(), {k, extent(b, batch.size() + reduced.size(), columns.size())});
  for (size_t i = 0; i < rows.size(); ++i) result_shape.push_back(dim_of(c, a, batch.size() + i));
  for (size_t i = 0; i < columns.size(); ++i)
    result_shape.push_back(dim_of(c, b, batch.size() + reduced.size() + i));
  Value* product = c.emit("MatMul", {c.emit("Reshape", {a.v, c.i64_vector(a_shape)})[0],
                                     c.emit("Reshape", {b.v, c.i64_vector(b_shape)})[0]})[0];
  return {c.emit("Reshape", {product, c.i64_vector(result_shape)})[0], concat(batch, rows, columns)};
}

void adapt_einsum(AdaptContext& c) {
  std::vector<Operand> operands;
  std::vector<int> ranks;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    operands.push_back({c.required_input(i, "Inputs"), {}});
    ranks.push_back(operands.back().v->type.rank());
  }
  TESSEL_USER_CHECK(!operands.empty(), c.span()) << "Einsum needs at least one input";
  Equation e = parse(c, ranks);
  std::set<int> out(e.output.begin(), e.output.end());
  TESSEL_USER_CHECK(out.size() == e.output.size(), c.span()) << "the output repeats a label";
  // Labels still needed after operand i: the output's and those of the operands after it.
  auto needed_after = [&](size_t i) {
    std::set<int> keep = out;
    for (size_t j = i + 1; j < operands.size(); ++j) keep.insert(e.inputs[j].begin(), e.inputs[j].end());
    return keep;
  };
  for (size_t i = 0; i < operands.size(); ++i) {
    operands[i].labels = e.inputs[i];
    take_diagonals(c, operands[i]);
    std::set<int> keep = needed_after(i);
    for (size_t j = 0; j < i; ++j) keep.insert(e.inputs[j].begin(), e.inputs[j].end());
    sum_others(c, operands[i], keep);
  }
  Operand result = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) result = contract(c, result, operands[i], needed_after(i));
  sum_others(c, result, out);
  for (int l : e.output)
    TESSEL_USER_CHECK(std::count(result.labels.begin(), result.labels.end(), l), c.span())
        << "the output has a label no input has";
  permute(c, result, e.output);
  c.results = std::vector<Value*>{result.v == c.inputs[0] ? c.emit("Identity", {result.v})[0] : result.v};
}

}  // namespace

void register_einsum_adapter(AdapterTable& t) {
  t["Einsum"] = adapt_einsum;
}

}  // namespace tessel::onnx_frontend
