// Helpers of the schedule tests: a matmul followed by a relu (two blocks),
// random inputs, interpret-and-compare, and a check that a rejected request
// raises the named ScheduleError and leaves the schedule unchanged.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "schedules/schedule.h"
#include "tests/unit/tir_test_util.h"

namespace tessel::sched_test {

using namespace tir;
using sched::Schedule;
using sched::ScheduleError;

// D[M, N] = max(A x B, 0) through an intermediate C: blocks "C" and "D".
inline PrimFunc make_matmul_relu_func(int64_t M, int64_t N, int64_t K) {
  PrimFunc mm = make_matmul_func(M, N, K);
  Buffer c = mm->outputs[0];
  Buffer d = make_buffer("D", DType::kF32, {M, N});
  Var i = var("i"), j = var("j"), vi = var("vi"), vj = var("vj");
  Stmt relu = make_test_block("D",
                              {{vi, {int_imm(0), int_imm(M)}, IterKind::kSpatial},
                               {vj, {int_imm(0), int_imm(N)}, IterKind::kSpatial}},
                              {i, j}, {}, make_store(d, max(load(c, {vi, vj}), float_imm(0.0)), {vi, vj}));
  Stmt nest = make_for(i, int_imm(0), int_imm(M), ForKind::kSerial,
                       make_for(j, int_imm(0), int_imm(N), ForKind::kSerial, relu));
  const auto& root = static_cast<const BlockNode&>(*mm->body);
  return make_prim_func("matmul_relu", mm->inputs, {d}, make_root_block(make_seq({root.body, nest}), {c}));
}

inline std::vector<Tensor> random_inputs(const PrimFunc& func, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Tensor> out;
  for (const Buffer& b : func->inputs) {
    Tensor t(b->dtype, b->shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(int64_t(rng() % 17) - 8) / 4.0);
    out.push_back(t);
  }
  return out;
}

// The scheduled function computes what the original does (small integers in
// quarter steps: the sums are exact in f32, whatever the order).
inline void expect_same_results(const PrimFunc& original, const PrimFunc& scheduled) {
  std::vector<Tensor> inputs = random_inputs(original, 7);
  std::vector<Tensor> want = interpret(original, inputs);
  std::vector<Tensor> got = interpret(scheduled, inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(want[o].shape(), got[o].shape());
    for (int64_t i = 0; i < want[o].numel(); ++i)
      ASSERT_EQ(want[o].get_f64(i), got[o].get_f64(i)) << "output " << o << " element " << i << "\n"
                                                       << scheduled;
  }
}

// f must throw ScheduleError of `kind` whose message contains `substring`,
// and leave the function and the trace of `sch` as they were.
inline void expect_rejected(Schedule& sch, const std::function<void()>& f, const std::string& kind,
                            const std::string& substring) {
  PrimFunc before = sch.func();
  std::string trace_before = sch.trace().to_json();
  try {
    f();
    ADD_FAILURE() << "expected ScheduleError " << kind;
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  }
  EXPECT_TRUE(sch.func().same_as(before)) << "the function changed";
  EXPECT_EQ(sch.trace().to_json(), trace_before) << "the trace changed";
}

}  // namespace tessel::sched_test
