// Functions for the CUDA backend's tests: GPU-scheduled and flattened as the
// pipeline gives them to the backend, a hand-written thread block that
// exchanges data through shared memory (with or without its barriers), and
// a gather whose threads check their indices.
#pragma once

#include "ir/core/tensor.h"
#include "schedules/defaults/gpu_defaults.h"
#include "src/tir_passes/backend_passes.h"
#include "src/tir_passes/insert_barriers.h"
#include "tests/unit/tir_test_util.h"

namespace tessel::tir {

// The tensor-IR passes the pipeline runs before a GPU backend (barriers included).
inline PrimFunc flattened(const PrimFunc& scheduled) {
  PrimFunc f = scheduled;
  for (const tir_passes::TirPass& pass : tir_passes::passes_before_gpu_backend()) f = pass.run(f);
  return f;
}

// make_matmul_func under the default GPU schedule, flattened.
inline PrimFunc gpu_matmul(int64_t M, int64_t N, int64_t K) {
  sched::Schedule sch(make_matmul_func(M, N, K));
  sched::apply_default_gpu_schedule(sch);
  return flattened(sch.func());
}

// out[t] = sum over 8 steps k of A[k * threads + threads - 1 - t]: each step,
// every thread stages one element of A in shared memory and reads its mirror
// image's, so the block needs a barrier between the writes and the reads
// (insert_barriers adds them) and one before the next step overwrites them.
inline PrimFunc mirror_sum(int64_t threads, bool barriers) {
  constexpr int64_t kSteps = 8;
  Buffer a = make_buffer("A", DType::kF32, {kSteps * threads});
  Buffer out = make_buffer("out", DType::kF32, {threads});
  Buffer shared = make_buffer("A_s", DType::kF32, {threads}, MemScope::kShared);
  Var tx = var("tx"), k0 = var("k0");
  Stmt step = make_seq({make_store(shared, load(a, {k0 * threads + tx}), {tx}),
                        make_store(out, load(out, {tx}) + load(shared, {int_imm(threads - 1) - tx}), {tx})});
  Stmt body = make_seq({make_store(out, float_imm(0.0), {tx}),
                        make_for(k0, int_imm(0), int_imm(kSteps), ForKind::kSerial, step)});
  Stmt block = make_for(tx, int_imm(0), int_imm(threads), ForKind::kThreadBound, body, "threadIdx.x");
  PrimFunc f = make_prim_func("mirror_sum", {a}, {out}, make_root_block(block, {shared}));
  if (barriers) return flattened(f);
  PrimFunc without = f;  // the passes without insert_barriers: a schedule that misses them
  for (const tir_passes::TirPass& pass : tir_passes::passes_before_backend()) without = pass.run(without);
  return without;
}

// y[i] = x[idx[i]] for 4 threads, with the index checked as lowering checks gathers.
inline PrimFunc gpu_checked_gather() {
  Buffer x = make_buffer("x", DType::kF32, {10}), idx = make_buffer("idx", DType::kI64, {4});
  Buffer y = make_buffer("y", DType::kF32, {4});
  Var t = var("t");
  Expr i = load(idx, {t});
  Stmt body = make_seq(
      {make_assert(i >= int_imm(0) && i < int_imm(10), "index {} of element {} is out of range", {i, t}),
       make_store(y, load(x, {i}), {t})});
  return flattened(make_prim_func(
      "gather", {x, idx}, {y},
      make_root_block(make_for(t, int_imm(0), int_imm(4), ForKind::kThreadBound, body, "threadIdx.x"), {})));
}

// i % 13 * scale - 1 at element i: small exact values, none repeated nearby.
inline Tensor ramp(std::vector<int64_t> shape, double scale) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(i % 13) * scale - 1.0);
  return t;
}

}  // namespace tessel::tir
