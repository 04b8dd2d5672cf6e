// insert_barriers on hand-written thread blocks: where the barriers land (the
// printed IR) and that the interpreter needs them, in every thread order.
#include <gtest/gtest.h>

#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "src/tir_passes/insert_barriers.h"
#include "tests/unit/tir_test_util.h"

namespace tessel::tir {
namespace {

constexpr int64_t kThreads = 32, kSteps = 8;

// out[t] = sum over k of A[k * 32 + 31 - t]: each step, every thread stages one
// element of A in shared memory and reads its mirror image's element.
//   for tx in threadIdx.x:
//     out[tx] = 0
//     for k0 in 0..8:
//       A_s[tx] = A[k0 * 32 + tx]
//       out[tx] = out[tx] + A_s[31 - tx]
PrimFunc mirror_sum(bool grid) {
  Buffer a = make_buffer("A", DType::kF32, {kSteps * kThreads});
  Buffer out = make_buffer("out", DType::kF32, {kThreads});
  Buffer shared = make_buffer("A_s", DType::kF32, {kThreads}, MemScope::kShared);
  Var tx = var("tx"), k0 = var("k0"), bx = var("bx");
  Stmt step = make_seq({make_store(shared, load(a, {k0 * kThreads + tx}), {tx}),
                        make_store(out, load(out, {tx}) + load(shared, {int_imm(kThreads - 1) - tx}), {tx})});
  Stmt body = make_seq({make_store(out, float_imm(0.0), {tx}),
                        make_for(k0, int_imm(0), int_imm(kSteps), ForKind::kSerial, step)});
  Stmt threads = make_for(tx, int_imm(0), int_imm(kThreads), ForKind::kThreadBound, body, "threadIdx.x");
  if (grid) threads = make_for(bx, int_imm(0), int_imm(1), ForKind::kThreadBound, threads, "blockIdx.x");
  return make_prim_func("mirror_sum", {a}, {out}, make_root_block(threads, {shared}));
}

Tensor ramp() {
  Tensor t(DType::kF32, {kSteps * kThreads});
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(i % 13) - 6.0);
  return t;
}

std::vector<double> expected_sums(const Tensor& a) {
  std::vector<double> want(kThreads, 0.0);
  for (int64_t t = 0; t < kThreads; ++t)
    for (int64_t k = 0; k < kSteps; ++k) want[t] += a.get_f64(k * kThreads + kThreads - 1 - t);
  return want;
}

TEST(InsertBarriers, RawAndWarBarriersInTheSteppingLoop) {
  std::string text = to_string(tir_passes::insert_barriers(mirror_sum(false)));
  // One barrier between the store to A_s and the read of it, and one at the end
  // of the loop body, before the next step overwrites A_s.
  EXPECT_NE(text.find("A_s[tx] = A[k0 * 32 + tx]\n      barrier()\n      out[tx] = out[tx] + A_s[31 - tx]\n"
                      "      barrier()\n"),
            std::string::npos)
      << text;
  size_t count = 0;
  for (size_t at = text.find("barrier()"); at != std::string::npos; at = text.find("barrier()", at + 1))
    ++count;
  EXPECT_EQ(count, 2u) << text;
}

TEST(InsertBarriers, TheInterpreterNeedsThem) {
  Tensor a = ramp();
  for (bool grid : {false, true}) {
    PrimFunc without = mirror_sum(grid);
    EXPECT_THROW(interpret(without, {a}), InterpreterError) << "grid " << grid;
    PrimFunc with = tir_passes::insert_barriers(without);
    for (ThreadOrder order : {ThreadOrder::kForward, ThreadOrder::kReverse, ThreadOrder::kShuffled}) {
      Tensor out = interpret(with, {a}, {order, 7})[0];
      EXPECT_EQ(out.to_f64_vector(), expected_sums(a)) << "grid " << grid << " order " << int(order);
    }
  }
}

TEST(InsertBarriers, LeavesFunctionsWithoutSharedExchangeAlone) {
  Buffer x = make_buffer("x", DType::kF32, {kThreads}), y = make_buffer("y", DType::kF32, {kThreads});
  Var tx = var("tx");
  Stmt body = make_for(tx, int_imm(0), int_imm(kThreads), ForKind::kThreadBound,
                       make_store(y, load(x, {tx}) * int64_t{2}, {tx}), "threadIdx.x");
  PrimFunc f = make_prim_func("scale", {x}, {y}, make_root_block(body, {}));
  EXPECT_TRUE(tir_passes::insert_barriers(f).same_as(f));
  PrimFunc cpu = make_matmul_func(4, 4, 4);
  EXPECT_TRUE(tir_passes::insert_barriers(cpu).same_as(cpu));
}

}  // namespace
}  // namespace tessel::tir
