// Schemas and shape functions of the nn ops: the family's entry point and the
// linear algebra ops (MatMul, Gemm). Conv/pooling and the normalisations live
// in nn_conv_pool.cpp and nn_norm.cpp.
#include "ir/graph/op_registry.h"
#include "ir/graph/ops/nn_register.h"
#include "ir/graph/ops/register.h"
#include "ir/graph/ops/shape_helpers.h"

namespace tessel::graph::ops {

namespace {

bool is_matmul_dtype(DType t) {
  return is_float(t) || t == DType::kI32 || t == DType::kI64;
}

// numpy matmul: 1-D operands are promoted (A to [1, K], B to [K, 1]) and the
// promoted dimension is dropped again; batch dimensions broadcast.
void infer_matmul(InferContext& ctx) {
  check_same_dtype(ctx, {0, 1});
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  TESSEL_USER_CHECK(is_matmul_dtype(a.dtype), ctx.span())
      << "MatMul does not support dtype " << dtype_name(a.dtype);
  if (!a.rank_known || !b.rank_known) return ctx.set_output(0, TensorType::unknown_rank(a.dtype));
  TESSEL_USER_CHECK(a.rank() >= 1 && b.rank() >= 1, ctx.span()) << "MatMul operands must not be scalars";
  const Dim& ka = a.dims.back();
  const Dim& kb = b.rank() == 1 ? b.dims[0] : b.dims[size_t(b.rank() - 2)];
  TESSEL_USER_CHECK(!ka.is_known() || !kb.is_known() || ka.value == kb.value, ctx.span())
      << "MatMul inner dimensions differ: A is " << a.str() << ", B is " << b.str();
  TensorType batch_a, batch_b;
  batch_a.dims.assign(a.dims.begin(), a.dims.end() - std::min(a.rank(), 2));
  batch_b.dims.assign(b.dims.begin(), b.dims.end() - std::min(b.rank(), 2));
  TensorType out;
  out.dtype = a.dtype;
  out.dims = broadcast_dims({&batch_a, &batch_b}, ctx.span());
  if (a.rank() >= 2) out.dims.push_back(a.dims[size_t(a.rank() - 2)]);
  if (b.rank() >= 2) out.dims.push_back(b.dims.back());
  ctx.set_output(0, out);
}

// 2 FLOPs (multiply, add) per output element and step of the inner dimension.
int64_t matmul_flops(const Node& n) {
  const TensorType& a = n.inputs[0]->type;
  if (!a.rank_known || a.rank() == 0 || !a.dims.back().is_known()) return 0;
  return 2 * output_elements(n) * a.dims.back().value;
}

Dim gemm_dim(const TensorType& t, bool trans, int which) {
  return t.dims[size_t(trans ? 1 - which : which)];
}

void check_gemm_bias(const InferContext& ctx, const Dim& m, const Dim& n) {
  const TensorType& c = ctx.input(2);
  if (!c.rank_known) return;
  TESSEL_USER_CHECK(c.rank() <= 2, ctx.span()) << "Gemm's C must have rank at most 2, got " << c.str();
  const Dim* target[2] = {&m, &n};
  for (int i = 0; i < c.rank(); ++i) {
    const Dim& d = c.dims[size_t(i)];
    const Dim& t = *target[2 - c.rank() + i];
    TESSEL_USER_CHECK(!d.is_known() || d.value == 1 || !t.is_known() || d.value == t.value, ctx.span())
        << "Gemm's C " << c.str() << " cannot be broadcast to [M, N] = [" << m.value << ", " << n.value
        << "]";
  }
}

// Y = alpha * op(A) * op(B) + beta * C, op() transposing where transA/transB say.
void infer_gemm(InferContext& ctx) {
  check_same_dtype(ctx, {0, 1, 2});
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  TESSEL_USER_CHECK(is_matmul_dtype(a.dtype), ctx.span())
      << "Gemm does not support dtype " << dtype_name(a.dtype);
  TESSEL_USER_CHECK(!a.rank_known || a.rank() == 2, ctx.span()) << "Gemm's A must be 2-D, got " << a.str();
  TESSEL_USER_CHECK(!b.rank_known || b.rank() == 2, ctx.span()) << "Gemm's B must be 2-D, got " << b.str();
  bool ta = ctx.attrs().get_int("transA") != 0, tb = ctx.attrs().get_int("transB") != 0;
  Dim m = a.rank_known ? gemm_dim(a, ta, 0) : Dim::unknown();
  Dim ka = a.rank_known ? gemm_dim(a, ta, 1) : Dim::unknown();
  Dim kb = b.rank_known ? gemm_dim(b, tb, 0) : Dim::unknown();
  Dim n = b.rank_known ? gemm_dim(b, tb, 1) : Dim::unknown();
  TESSEL_USER_CHECK(!ka.is_known() || !kb.is_known() || ka.value == kb.value, ctx.span())
      << "Gemm inner dimensions differ: K is " << ka.value << " for A and " << kb.value << " for B";
  if (ctx.has_input(2)) check_gemm_bias(ctx, m, n);
  TensorType out;
  out.dtype = a.dtype;
  out.dims = {m, n};
  ctx.set_output(0, out);
}

// 2 FLOPs per multiply-add of the product, plus 2 per output for beta * C + (.).
int64_t gemm_flops(const Node& n) {
  const TensorType& a = n.inputs[0]->type;
  if (!a.is_static()) return 0;
  int64_t k = a.dims[n.attrs.get_int("transA") ? 0 : 1].value;
  int64_t out = output_elements(n);
  return 2 * out * k + (n.has_input(2) ? 2 * out : 0);
}

}  // namespace

void register_linear_ops(OpRegistry& r) {
  r.def("MatMul", OpPattern::kOutElemwiseFusable)
      .inputs(2)
      .outputs(1)
      .infer(infer_matmul)
      .flops(matmul_flops);
  r.def("Gemm", OpPattern::kOutElemwiseFusable)
      .inputs(2, 3)
      .outputs(1)
      .attr("alpha", AttrType::kFloat, 1.0)
      .attr("beta", AttrType::kFloat, 1.0)
      .attr("transA", AttrType::kInt, int64_t(0))
      .attr("transB", AttrType::kInt, int64_t(0))
      .infer(infer_gemm)
      .flops(gemm_flops);
}

void register_nn_ops(OpRegistry& r) {
  register_linear_ops(r);
  register_conv_pool_ops(r);
  register_norm_ops(r);
}

}  // namespace tessel::graph::ops
