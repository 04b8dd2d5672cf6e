// The prefetch statement: how it prints, what the verifier requires of it,
// that structural equality sees its buffer, offset and lines, that the
// interpreter runs through it, and that compiled code asks for each line
// (llvm.prefetch, one call per line) and computes the same, even where the
// hint points past the buffer's end.
#include <gtest/gtest.h>

#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "ir/tensor/structural.h"
#include "ir/tensor/verifier.h"
#include "src/codegen/llvm/llvm_module.h"
#include "src/runtime/runtime_symbols.h"

namespace tessel::tir {
namespace {

extern "C" void serial_prefetch_chunks(int64_t n, void (*body)(int64_t, int64_t, void*), void* closure) {
  body(0, n, closure);
}

// out[i] = w[i, 0] + w[i, 15] over w f32[4, 16] (one line per row), each row
// asking for the row after it (past the end for the last one).
PrimFunc rows_with_prefetch(int64_t lines = 1, int64_t ahead = 1) {
  Buffer w = make_buffer("w", DType::kF32, {4, 16}), out = make_buffer("out", DType::kF32, {4});
  Var i = var("i");
  Stmt body = make_seq({make_prefetch(w, (Expr(i) + int_imm(ahead)) * int_imm(16), lines),
                        make_store(out, load(w, {i, int_imm(0)}) + load(w, {i, int_imm(15)}), {i})});
  return make_prim_func("rows", {w}, {out}, make_for(i, int_imm(0), int_imm(4), ForKind::kSerial, body));
}

Tensor weights() {
  Tensor t(DType::kF32, {4, 16});
  for (int64_t e = 0; e < 64; ++e) t.set_f64(e, double(e));
  return t;
}

TEST(TirPrefetch, PrintsItsBufferOffsetAndLines) {
  EXPECT_EQ(to_string(rows_with_prefetch(2)),
            "func rows(w: f32[4, 16]) -> (out: f32[4]) {\n"
            "  for i in 0..4:\n"
            "    prefetch(w, (i + 1) * 16, 2 lines)\n"
            "    out[i] = w[i, 0] + w[i, 15]\n"
            "}\n");
  EXPECT_EQ(to_string(make_prefetch(make_buffer("b", DType::kF32, {8}), int_imm(3), 1)),
            "prefetch(b, 3, 1 line)\n");
}

TEST(TirPrefetch, VerifierWantsABufferInScopeAndAnIndexOffset) {
  EXPECT_EQ(verify_problems(rows_with_prefetch()), std::vector<std::string>{});
  Buffer stray = make_buffer("stray", DType::kF32, {8}), out = make_buffer("out", DType::kF32, {1});
  PrimFunc f = make_prim_func(
      "f", {}, {out},
      make_seq({make_prefetch(stray, int_imm(0), 1), make_store(out, float_imm(1), {int_imm(0)})}));
  std::vector<std::string> problems = verify_problems(f);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("stray"), std::string::npos) << problems[0];
}

TEST(TirPrefetch, StructuralEqualityComparesOffsetAndLines) {
  EXPECT_TRUE(structural_equal(rows_with_prefetch(), rows_with_prefetch()));
  EXPECT_FALSE(structural_equal(rows_with_prefetch(1), rows_with_prefetch(2)));
  EXPECT_FALSE(structural_equal(rows_with_prefetch(1, 1), rows_with_prefetch(1, 2)));
  EXPECT_NE(structural_hash(rows_with_prefetch(1)), structural_hash(rows_with_prefetch(2)));
}

TEST(TirPrefetch, TheInterpreterAndCompiledCodeComputeAsWithout) {
  Tensor want(DType::kF32, {4});
  for (int64_t r = 0; r < 4; ++r) want.set_f64(r, double(32 * r + 15));
  EXPECT_EQ(interpret(rows_with_prefetch(), {weights()})[0].get_f64(3), want.get_f64(3));
  // Two lines a row ahead by up to 40 rows: addresses far past the buffer.
  for (int64_t ahead : {1, 40}) {
    codegen::LlvmModule m = codegen::LlvmModule::build({{"kernel", rows_with_prefetch(2, ahead)}}, {});
    std::string ir = m.ir_text();
    size_t first = ir.find("call void @llvm.prefetch");
    ASSERT_NE(first, std::string::npos) << ir;
    EXPECT_NE(ir.find("call void @llvm.prefetch", first + 1), std::string::npos) << "one call per line\n"
                                                                                 << ir;
    auto jit = codegen::JitModule::create(
        std::move(m), codegen::runtime_symbols(rt::kernel_runtime_symbols(&serial_prefetch_chunks)));
    Tensor w = weights(), out(DType::kF32, {4});
    void* args[] = {w.raw(), out.raw()};
    ASSERT_EQ(jit->lookup("kernel")(args), 0);
    for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(out.get_f64(r), want.get_f64(r)) << "row " << r;
  }
}

}  // namespace
}  // namespace tessel::tir
