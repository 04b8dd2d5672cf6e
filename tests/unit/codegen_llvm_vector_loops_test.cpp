// The LLVM backend's vector loops: a masked tail (a row that is not whole
// vectors) masks only its last vector; a register tile's rows of several
// vectors come out as straight vector code, their input loaded once per step
// of the reduction and not rebuilt by shuffles.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/unit/codegen_llvm_util.h"

namespace tessel {
namespace {

using namespace codegen_test;
using codegen::CpuTarget;

// y = sigmoid(x) over n elements, its vectorized loop annotated with a
// masked tail, and the check of its every element.
tir::PrimFunc masked_tail_sigmoid(int64_t n) {
  tir::PrimFunc f = unary_func(tir::Intrinsic::k_sigmoid, DType::kF32, n);
  const auto& loop = static_cast<const tir::ForNode&>(*f->body);
  return tir::make_prim_func("unary", f->inputs, f->outputs,
                             tir::make_for(loop.var, loop.min, loop.extent, loop.for_kind, loop.body, "",
                                           {{tir::kMaskedTail, 1}}));
}

void expect_sigmoid(const Tensor& x, const Tensor& y) {
  for (int64_t k = 0; k < x.numel(); ++k) {
    float v = x.data<float>()[k];
    EXPECT_NEAR(y.data<float>()[k], 1 / (1 + std::exp(-v)), 1e-6) << k;
  }
}

// A vectorized loop annotated with a masked tail (a row of 14 with 16 lanes,
// 6 with 8) runs as masked full-width vectors, not narrower vectors and a
// scalar tail; every element is right.
TEST(CodegenLlvm, AMaskedTailIsMaskedVectors) {
  for (const CpuTarget& target : host_feature_sets()) {
    int lanes = codegen::vector_register_bits(target) / 32;
    int64_t n = lanes - 2;
    SCOPED_TRACE(std::to_string(lanes) + " lanes, a loop of " + std::to_string(n));
    std::string ir;
    Tensor x(DType::kF32, {n});
    for (int64_t k = 0; k < n; ++k) x.data<float>()[k] = float(k) / 4 - 1;
    Tensor y = run_compiled(masked_tail_sigmoid(n), {x}, &ir, target)[0];
    EXPECT_NE(ir.find("@llvm.masked.store.v" + std::to_string(lanes) + "f32"), std::string::npos)
        << ir.substr(0, 6000);
    expect_sigmoid(x, y);
  }
}

// A masked-tail loop longer than a vector (a row of 111): its whole vectors
// run unmasked, and only the last, partial vector is masked, once (masked
// stores are slow on x86); every element is right.
TEST(CodegenLlvm, AMaskedTailMasksOnlyTheLastVector) {
  for (const CpuTarget& target : host_feature_sets()) {
    int lanes = codegen::vector_register_bits(target) / 32;
    int64_t n = 3 * lanes + 5;
    SCOPED_TRACE(std::to_string(lanes) + " lanes, a loop of " + std::to_string(n));
    Tensor x(DType::kF32, {n});
    for (int64_t k = 0; k < n; ++k) x.data<float>()[k] = float(k) / 8 - 3;
    std::string ir;
    Tensor y = run_compiled(masked_tail_sigmoid(n), {x}, &ir, target)[0];
    std::string vector = "<" + std::to_string(lanes) + " x float>";
    size_t masked_stores = 0;
    for (size_t at = ir.find("call void @llvm.masked.store"); at != std::string::npos;
         at = ir.find("call void @llvm.masked.store", at + 1))
      ++masked_stores;
    EXPECT_EQ(masked_stores, 1u) << ir.substr(0, 8000);
    EXPECT_NE(ir.find("store " + vector), std::string::npos) << ir.substr(0, 8000);
    expect_sigmoid(x, y);
  }
}

// Y[m, n] = sum_k W[m, k] * X[k, n] as a tile of 6 unrolled rows of two
// vectors each, accumulated in Y (no local tile): every output is right, and
// the optimised IR splats W but never assembles a vector of X from others
// (a row of two vectors vectorized as one loop and then unrolled by LLVM
// reloaded X per row and rebuilt it with shuffles).
TEST(CodegenLlvm, ATileOfTwoVectorRowsIsStraightVectorCode) {
  for (const CpuTarget& target : host_feature_sets()) {
    int64_t lanes = codegen::vector_register_bits(target) / 32, rows = 6, cols = 2 * lanes, depth = 16;
    SCOPED_TRACE(std::to_string(lanes) + " lanes");
    tir::Buffer w = tir::make_buffer("W", DType::kF32, {rows, depth});
    tir::Buffer x = tir::make_buffer("X", DType::kF32, {depth, cols});
    tir::Buffer y = tir::make_buffer("Y", DType::kF32, {rows, cols});
    tir::Var m = tir::var("m"), n = tir::var("n"), k = tir::var("k"), m0 = tir::var("m0"),
             n0 = tir::var("n0");
    auto loop = [](tir::Var v, int64_t extent, tir::ForKind kind, tir::Stmt body) {
      return tir::make_for(v, tir::int_imm(0), tir::int_imm(extent), kind, std::move(body));
    };
    tir::Stmt init =
        loop(m0, rows, tir::ForKind::kSerial,
             loop(n0, cols, tir::ForKind::kVectorized, tir::make_store(y, tir::float_imm(0.0), {m0, n0})));
    tir::Expr update = tir::load(y, {m, n}) + tir::load(w, {m, k}) * tir::load(x, {k, n});
    tir::Stmt body = loop(k, depth, tir::ForKind::kSerial,
                          loop(m, rows, tir::ForKind::kUnrolled,
                               loop(n, cols, tir::ForKind::kVectorized, tir::make_store(y, update, {m, n}))));
    tir::PrimFunc f = tir::make_prim_func("tile", {w, x}, {y}, tir::make_seq({init, body}));
    Tensor wt(DType::kF32, {rows, depth}), xt(DType::kF32, {depth, cols});
    for (int64_t i = 0; i < wt.numel(); ++i) wt.data<float>()[i] = float(i % 7) - 3;
    for (int64_t i = 0; i < xt.numel(); ++i) xt.data<float>()[i] = float(i % 5) / 2 - 1;
    std::string ir;
    Tensor out = run_compiled(f, {wt, xt}, &ir, target)[0];
    for (size_t at = ir.find("shufflevector"); at != std::string::npos;
         at = ir.find("shufflevector", at + 1)) {
      size_t end = ir.find('\n', at);
      EXPECT_NE(ir.substr(at, end - at).find("zeroinitializer"), std::string::npos)
          << ir.substr(at, end - at);
    }
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        float sum = 0;
        for (int64_t d = 0; d < depth; ++d)
          sum += wt.data<float>()[i * depth + d] * xt.data<float>()[d * cols + j];
        EXPECT_FLOAT_EQ(out.data<float>()[i * cols + j], sum) << i << ", " << j;
      }
  }
}

}  // namespace
}  // namespace tessel
