// Compute definitions of the nn ops: the family's entry point, the stage
// names they share, and the linear algebra ops (MatMul, Gemm), each one
// reduction block over k followed, for Gemm, by an injective alpha/beta stage.
#include <algorithm>
#include <cctype>
#include <optional>

#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"
#include "src/lower/ops/nn_lowerings.h"

namespace tessel::lower::nn {

using namespace tir;

std::string stage_name(const graph::Node& node, const std::string& suffix) {
  std::string base;
  for (char c : node.name) base += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  size_t first = base.find_first_not_of('_');
  base = first == std::string::npos ? "" : base.substr(first);
  if (base.empty())
    for (char c : node.op) base += char(std::tolower(static_cast<unsigned char>(c)));
  return suffix.empty() ? base : base + "_" + suffix;
}

std::vector<int64_t> output_shape(const graph::Node& node, size_t i) {
  return static_shape(node.outputs.at(i)->type, node.span());
}

namespace {

// Whether consecutive elements along t's last dimension are mostly
// consecutive in memory: probed at the first columns of row 0, each load's
// address (row-major in its buffer) steps by one for at least three steps in
// four (a load whose address does not move with the column is no claim). A
// slice or a packed panel (n // W, k, n % W) passes; a transpose, whose
// columns are a row apart, does not.
bool contiguous_in_last(const TensorExpr& t) {
  if (t.buffer.defined() && !t.storage.empty()) return t.storage.back() == t.rank() - 1;
  if (t.buffer.defined() || t.rank() < 2) return true;
  std::vector<Expr> idx;
  for (int d = 0; d < t.rank(); ++d) idx.push_back(var("c" + std::to_string(d)));
  int64_t probes = std::min<int64_t>(t.shape.back(), 64);
  if (probes < 2) return true;
  bool contiguous = true;
  walk_exprs(t.at(idx), [&](const Expr& e) {
    const auto* load = e.as<LoadNode>();
    if (!load || load->indices.empty() || !contiguous) return;
    auto address = [&](int64_t column) -> std::optional<int64_t> {
      VarMap at;
      for (int d = 0; d < t.rank(); ++d)
        at[idx[size_t(d)].as<VarNode>()] = int_imm(d + 1 == t.rank() ? column : 0);
      return constant_offset(load->buffer, load->indices, at);  // none: data-dependent (a gather), no claim
    };
    int64_t unit_steps = 0, still = 0;
    std::optional<int64_t> previous = address(0);
    for (int64_t c = 1; c < probes && previous; ++c) {
      std::optional<int64_t> next = address(c);
      if (next && *next == *previous + 1) ++unit_steps;
      if (next && *next == *previous) ++still;
      previous = next;
    }
    bool along_columns = still < probes - 1;  // a value per row (a scale) reads no columns
    contiguous = previous.has_value() && along_columns ? 4 * unit_steps >= 3 * (probes - 1) : true;
  });
  return contiguous;
}

// B computed into a block first when its columns are not contiguous (a
// transposed operand, K^T in attention): read in place, every vector of a
// tile's row would be a gather of elements a row apart.
TensorExpr contiguous_operand(LowerContext& ctx, const graph::Node& node, const TensorExpr& b) {
  if (contiguous_in_last(b)) return b;
  return ctx.compute(stage_name(node, "b"), b.shape, b.dtype, b.at);
}

// numpy matmul: a 1-D A is a row [1, K] and a 1-D B a column [K, 1], the
// promoted dimension absent from the output; batch dimensions broadcast.
//   for b..., m, n, k: C[b..., m, n] += A[b'..., m, k] * B[b''..., k, n]
std::vector<TensorExpr> lower_matmul(LowerContext& ctx, const graph::Node& node,
                                     const std::vector<TensorExpr>& in) {
  const TensorExpr& a = in[0];
  TensorExpr b = contiguous_operand(ctx, node, in[1]);
  std::vector<int64_t> out = output_shape(node);
  int64_t k_extent = a.shape.back();
  size_t a_matrix = a.rank() >= 2 ? 1 : 0, b_matrix = b.rank() >= 2 ? 1 : 0;
  size_t batch_rank = out.size() - a_matrix - b_matrix;
  DType t = accum_dtype(a.dtype);
  auto value = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    std::vector<Expr> batch(s.begin(), s.begin() + long(batch_rank));
    std::vector<int64_t> batch_shape(out.begin(), out.begin() + long(batch_rank));
    std::vector<Expr> ai, bi;
    if (a_matrix) {
      ai = broadcast_indices(std::vector<int64_t>(a.shape.begin(), a.shape.end() - 2), batch, batch_shape);
      ai.push_back(s[batch_rank]);
    }
    ai.push_back(r[0]);
    if (b_matrix) {
      bi = broadcast_indices(std::vector<int64_t>(b.shape.begin(), b.shape.end() - 2), batch, batch_shape);
      bi.push_back(r[0]);
      bi.push_back(s.back());
    } else {
      bi.push_back(r[0]);
    }
    return cast(t, a.at(ai)) * cast(t, b.at(bi));
  };
  return {cast_expr(ctx.reduce(stage_name(node), out, t, {k_extent}, Combiner::kSum, value), a.dtype)};
}

// A scalar attribute as a constant of dtype: exact for integer dtypes when
// the value is whole (the reference's rule), else through f64.
bool is_whole(double v) {
  return v == double(int64_t(v));
}

Expr scaled(Expr x, double factor) {
  if (factor == 1.0) return x;
  DType t = x->dtype;
  if (is_float(t) || is_whole(factor)) return const_of(t, factor) * x;
  return cast(t, float_imm(factor, DType::kF64) * cast(DType::kF64, x));
}

// Y = alpha * op(A) op(B) + beta * C: one reduction block for the product,
// then alpha, beta and the broadcast C as an index map composed into the consumer.
std::vector<TensorExpr> lower_gemm(LowerContext& ctx, const graph::Node& node,
                                   const std::vector<TensorExpr>& in) {
  const TensorExpr& a = in[0];
  bool ta = node.attrs.get_int("transA") != 0, tb = node.attrs.get_int("transB") != 0;
  TensorExpr b = in[1];
  if (tb) {  // op(B)[k, n] = B[n, k], computed once (a constant B was transposed ahead of time)
    TensorExpr bt = b;
    bt.shape = {b.shape[1], b.shape[0]};
    bt.at = [b](const std::vector<Expr>& i) { return b.at({i[1], i[0]}); };
    b = ctx.compute(stage_name(node, "b"), bt.shape, bt.dtype, bt.at);
    tb = false;
  }
  double alpha = node.attrs.get_float("alpha"), beta = node.attrs.get_float("beta");
  std::vector<int64_t> out = output_shape(node);
  int64_t k_extent = a.shape[ta ? 0 : 1];
  DType t = accum_dtype(a.dtype);
  auto product = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    Expr av = ta ? a.at({r[0], s[0]}) : a.at({s[0], r[0]});
    Expr bv = tb ? b.at({s[1], r[0]}) : b.at({r[0], s[1]});
    return cast(t, av) * cast(t, bv);
  };
  TensorExpr acc = ctx.reduce(stage_name(node), out, t, {k_extent}, Combiner::kSum, product);
  bool with_c = has_expr(in, 2) && beta != 0.0;
  if (alpha == 1.0 && !with_c) return {cast_expr(acc, a.dtype)};
  TensorExpr y = acc;
  TensorExpr c = with_c ? in[2] : TensorExpr{};
  y.buffer = {};
  y.dtype = a.dtype;
  y.at = [=](const std::vector<Expr>& idx) {
    Expr v = scaled(acc.at(idx), alpha);
    if (with_c) v = v + scaled(cast(t, c.at(broadcast_indices(c.shape, idx, out))), beta);
    return cast(a.dtype, v);
  };
  return {y};
}

}  // namespace

void register_linear_lowerings(LoweringRegistry& r) {
  r.add("MatMul", lower_matmul);
  r.add("Gemm", lower_gemm);
}

}  // namespace tessel::lower::nn

namespace tessel::lower {

void register_nn_lowerings(LoweringRegistry& r) {
  nn::register_linear_lowerings(r);
  nn::register_conv_lowerings(r);
  nn::register_pool_lowerings(r);
  nn::register_norm_lowerings(r);
  nn::register_softmax_lowerings(r);
}

}  // namespace tessel::lower
