// The assert statement: how it prints, what the verifier requires of it, and
// that the interpreter (a user error) and compiled code (status 1 and the
// message through tessel_rt_kernel_error, from a serial or a parallel loop)
// stop on a failed one and run through a passing one.
#include <gtest/gtest.h>

#include "ir/core/diagnostics.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "ir/tensor/structural.h"
#include "ir/tensor/verifier.h"
#include "src/codegen/llvm/llvm_module.h"
#include "src/runtime/kernel_abi.h"
#include "src/runtime/kernel_error.h"
#include "src/runtime/runtime_symbols.h"
#include "src/runtime/scratch_pool.h"

namespace tessel::tir {
namespace {

extern "C" void serial_chunks(int64_t n, void (*body)(int64_t, int64_t, void*), void* closure) {
  int64_t chunk = (n + 2) / 3;
  for (int64_t begin = 0; begin < n; begin += chunk) body(begin, std::min(n, begin + chunk), closure);
}

// out[i, j] = data[idx[i], j] over data f32[5, 8], idx i64[3], after a loop
// (of kind check_kind) that asserts every idx[i] lies in [-5, 5).
PrimFunc checked_gather(ForKind check_kind = ForKind::kSerial,
                        std::string message = "idx[{}] = {} is out of range [-5, 5)") {
  Buffer data = make_buffer("data", DType::kF32, {5, 8}), idx = make_buffer("idx", DType::kI64, {3});
  Buffer out = make_buffer("out", DType::kF32, {3, 8});
  Var i = var("i"), c = var("c"), j = var("j");
  Expr k = load(idx, {c});
  Stmt check = make_for(c, int_imm(0), int_imm(3), check_kind,
                        make_assert(ge(k, int_imm(-5)) && lt(k, int_imm(5)), std::move(message), {c, k}));
  Expr row = select(lt(load(idx, {i}), int_imm(0)), load(idx, {i}) + 5, load(idx, {i}));
  Stmt copy = make_for(i, int_imm(0), int_imm(3), ForKind::kSerial,
                       make_for(j, int_imm(0), int_imm(8), ForKind::kVectorized,
                                make_store(out, load(data, {row, j}), {i, j})));
  return make_prim_func("gather", {data, idx}, {out}, make_seq({check, copy}));
}

Tensor data_5x8() {
  Tensor t(DType::kF32, {5, 8});
  for (int64_t e = 0; e < 40; ++e) t.set_f64(e, double(e));
  return t;
}

Tensor indices(const std::vector<int64_t>& values) {
  Tensor t(DType::kI64, {int64_t(values.size())});
  for (size_t e = 0; e < values.size(); ++e) t.set_i64(int64_t(e), values[e]);
  return t;
}

TEST(TirAssert, PrintsLikeACall) {
  EXPECT_EQ(to_string(checked_gather()),
            "func gather(data: f32[5, 8], idx: i64[3]) -> (out: f32[3, 8]) {\n"
            "  for c in 0..3:\n"
            "    assert(idx[c] >= -5 && idx[c] < 5, \"idx[{}] = {} is out of range [-5, 5)\", c, idx[c])\n"
            "  for i in 0..3:\n"
            "    for j in 0..8 vectorized:\n"
            "      out[i, j] = data[select(idx[i] < 0, idx[i] + 5, idx[i]), j]\n"
            "}\n");
}

TEST(TirAssert, MessageQuotesAreEscaped) {
  Stmt s = make_assert(bool_imm(false), "node \"g\" \\ failed");
  EXPECT_EQ(to_string(s), "assert(false, \"node \\\"g\\\" \\\\ failed\")\n");
}

TEST(TirAssert, VerifierWantsOneValuePerHole) {
  EXPECT_EQ(verify_problems(checked_gather()), std::vector<std::string>{});
  std::vector<std::string> problems = verify_problems(checked_gather(ForKind::kSerial, "idx[{}] is bad"));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("has 1 {} for 2 values"), std::string::npos) << problems[0];
}

TEST(TirAssert, StructuralEqualityComparesTheMessage) {
  EXPECT_TRUE(structural_equal(checked_gather(), checked_gather()));
  EXPECT_FALSE(structural_equal(checked_gather(), checked_gather(ForKind::kSerial, "idx[{}] = {} is bad")));
  EXPECT_FALSE(structural_equal(checked_gather(), checked_gather(ForKind::kParallel)));
}

TEST(TirAssert, InterpreterRunsThroughWhenEveryIndexIsInRange) {
  Tensor out = interpret(checked_gather(), {data_5x8(), indices({4, -5, 1})})[0];
  EXPECT_EQ(out.get_f64(0), 32);   // row 4
  EXPECT_EQ(out.get_f64(8), 0);    // row -5 = 0
  EXPECT_EQ(out.get_f64(23), 15);  // row 1, column 7
}

TEST(TirAssert, InterpreterReportsAFailedAssertAsAUserError) {
  for (auto [values, message] :
       {std::pair{std::vector<int64_t>{0, 5, 1}, "idx[1] = 5 is out of range [-5, 5)"},
        std::pair{std::vector<int64_t>{0, 1, -6}, "idx[2] = -6 is out of range [-5, 5)"}}) {
    try {
      interpret(checked_gather(), {data_5x8(), indices(values)});
      ADD_FAILURE() << "no error for " << message;
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  }
}

struct Compiled {
  std::unique_ptr<codegen::JitModule> jit;
  codegen::KernelFn kernel;
};

Compiled compile(const PrimFunc& func, const codegen::CodegenOptions& options = {}) {
  codegen::LlvmModule m = codegen::LlvmModule::build({{"kernel", func}}, options);
  Compiled c;
  c.jit = codegen::JitModule::create(std::move(m),
                                     codegen::runtime_symbols(rt::kernel_runtime_symbols(&serial_chunks)));
  c.kernel = c.jit->lookup("kernel");
  return c;
}

int32_t run(const Compiled& c, const Tensor& data, const Tensor& idx, Tensor& out) {
  void* args[] = {const_cast<void*>(data.raw()), const_cast<void*>(idx.raw()), out.raw()};
  return c.kernel(args);
}

TEST(TirAssert, CompiledKernelFailsWithTheMessageFromASerialOrParallelLoop) {
  for (ForKind kind : {ForKind::kSerial, ForKind::kParallel}) {
    Compiled c = compile(checked_gather(kind));
    Tensor out(DType::kF32, {3, 8});
    EXPECT_EQ(run(c, data_5x8(), indices({4, -5, 1}), out), 0);
    EXPECT_EQ(out.get_f64(0), 32);
    EXPECT_EQ(rt::take_kernel_error(), "");
    EXPECT_EQ(run(c, data_5x8(), indices({0, 1, 1000000000}), out), 1);
    EXPECT_EQ(rt::take_kernel_error(), "idx[2] = 1000000000 is out of range [-5, 5)");
    EXPECT_EQ(run(c, data_5x8(), indices({-6, 0, 0}), out), 1);
    EXPECT_EQ(rt::take_kernel_error(), "idx[0] = -6 is out of range [-5, 5)");
  }
}

// The gather through a staging buffer the kernel allocates for itself.
PrimFunc staged_gather() {
  PrimFunc direct = checked_gather();
  Buffer out = direct->outputs[0];
  Buffer staged = make_buffer("staged", DType::kF32, {3, 8});
  Var i = var("i"), j = var("j");
  Stmt body = substitute_buffers(direct->body, {{out.get(), staged}});
  Stmt copy_out = make_for(
      i, int_imm(0), int_imm(3), ForKind::kSerial,
      make_for(j, int_imm(0), int_imm(8), ForKind::kSerial, make_store(out, load(staged, {i, j}), {i, j})));
  return make_prim_func("gather", direct->inputs, {out}, make_allocate(staged, make_seq({body, copy_out})));
}

// A buffer beyond the stack limit comes from the thread's scratch pool and goes
// back to it when the kernel returns, also when an assert fails in between:
// later runs take it again instead of asking the heap.
TEST(TirAssert, ScratchBuffersReturnToThePoolOnEveryExit) {
  codegen::CodegenOptions options;
  options.max_stack_bytes = 0;
  Compiled c = compile(staged_gather(), options);
  rt::ScratchPool& pool = rt::ScratchPool::for_this_thread();
  pool.clear();
  Tensor out(DType::kF32, {3, 8});
  EXPECT_EQ(run(c, data_5x8(), indices({4, -5, 1}), out), 0);
  EXPECT_EQ(out.get_f64(0), 32);
  EXPECT_EQ(pool.cached_blocks(), 1u);
  uint64_t taken = pool.heap_allocations();
  EXPECT_EQ(run(c, data_5x8(), indices({0, 7, 0}), out), 1);
  EXPECT_EQ(rt::take_kernel_error(), "idx[1] = 7 is out of range [-5, 5)");
  EXPECT_EQ(pool.cached_blocks(), 1u);
  EXPECT_EQ(run(c, data_5x8(), indices({1, 2, 3}), out), 0);
  EXPECT_EQ(out.get_f64(23), 31);  // row 3, column 7
  EXPECT_EQ(pool.heap_allocations(), taken);
}

// The check is its own loop: the copy after it still vectorizes.
TEST(TirAssert, TheCheckedLoopStillVectorizes) {
  codegen::LlvmModule m =
      codegen::LlvmModule::build({{"kernel", checked_gather()}}, codegen::CodegenOptions{});
  std::string ir = m.ir_text();
  EXPECT_NE(ir.find("x float>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("tessel_rt_kernel_error"), std::string::npos);
}

}  // namespace
}  // namespace tessel::tir
