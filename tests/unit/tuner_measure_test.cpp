// Measuring candidates without risking the session (tuner/measure/): work in
// a child process comes back as a result or as an error saying why (a
// crash, a timeout, a thrown error, an exit without a result), and the
// process that asked goes on; a built candidate is checked against expected
// outputs and timed; one that writes out of bounds or never ends is an error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <stdexcept>

#include "src/codegen/llvm/llvm_module.h"
#include "tuner/measure/isolated.h"
#include "tuner/measure/measure.h"

namespace tessel::tune {
namespace {

TEST(TunerIsolated, ResultsAndEveryWayOfFailingComeBack) {
  IsolatedResult ok = run_isolated([] { return std::string("42"); }, 10);
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(ok.output, "42");
  IsolatedResult thrown = run_isolated([]() -> std::string { throw std::runtime_error("no such kernel"); }, 10);
  EXPECT_FALSE(thrown.ok);
  EXPECT_EQ(thrown.error, "no such kernel");
  IsolatedResult crashed = run_isolated([]() -> std::string { std::raise(SIGSEGV); return ""; }, 10);
  EXPECT_FALSE(crashed.ok);
  EXPECT_EQ(crashed.error.rfind("crashed: ", 0), 0u) << crashed.error;
  IsolatedResult hung = run_isolated([]() -> std::string { for (;;) pause(); }, 0.3);
  EXPECT_EQ(hung.error, "timed out after 0.3 s");
  IsolatedResult silent = run_isolated([]() -> std::string { _exit(3); }, 10);
  EXPECT_EQ(silent.error, "exited with status 3 and no result");
  EXPECT_TRUE(run_isolated([] { return std::string("still here"); }, 10).ok) << "the parent goes on";
}

// y[index(i)] = x[index(i)] * 2 for i in 0..extent.
tir::PrimFunc doubling(int64_t n, int64_t extent, std::function<tir::Expr(const tir::Var&)> index) {
  using namespace tir;
  Buffer x = make_buffer("x", DType::kF32, {n}), y = make_buffer("y", DType::kF32, {n});
  Var i = var("i");
  Stmt body = make_store(y, load(x, {index(i)}) * float_imm(2.0, DType::kF32), {index(i)});
  return make_prim_func("doubling", {x}, {y}, make_for(i, int_imm(0), int_imm(extent), ForKind::kSerial, body));
}

TEST(TunerMeasure, ACandidateIsCheckedThenTimed) {
  Tensor x(DType::kF32, {256}), want(DType::kF32, {256}), wrong(DType::kF32, {256});
  for (int64_t i = 0; i < 256; ++i) x.set_f64(i, double(i)), want.set_f64(i, 2.0 * i), wrong.set_f64(i, 2.0 * i);
  wrong.set_f64(7, 0.0);
  codegen::Target host = codegen::parse_target("llvm");
  MeasureOptions quick;
  quick.repeat = 3;
  quick.flush_bytes = 0;
  Measurement m = measure_candidate(host, doubling(256, 256, [](const tir::Var& i) { return i; }), {x}, {want}, quick);
  ASSERT_TRUE(m.ok()) << m.error;
  EXPECT_EQ(m.times_ms.size(), 3u);
  for (double t : m.times_ms) EXPECT_GT(t, 0);
  Measurement bad = measure_candidate(host, doubling(256, 256, [](const tir::Var& i) { return i; }), {x}, {wrong}, quick);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.error.find("wrong output: output 0[7] = 14, expected 0"), std::string::npos) << bad.error;
  // An input a model run finds in cache is read again after every flush; a
  // flag per input, or none.
  MeasureOptions warm = quick;
  warm.flush_bytes = 1 << 20;
  warm.warm_inputs = {true};
  Measurement warmed =
      measure_candidate(host, doubling(256, 256, [](const tir::Var& i) { return i; }), {x}, {want}, warm);
  EXPECT_TRUE(warmed.ok()) << warmed.error;
  warm.warm_inputs = {true, false};
  EXPECT_THROW(
      measure_candidate(host, doubling(256, 256, [](const tir::Var& i) { return i; }), {x}, {want}, warm),
      InternalError);
}

// A candidate that stages its result in a buffer beyond the stack (from the
// runtime's scratch pool) loads and measures like any other.
TEST(TunerMeasure, ACandidateWithAScratchBufferIsMeasured) {
  using namespace tir;
  constexpr int64_t n = 64 * 1024;  // 256 KB: past the stack's limit
  Buffer x = make_buffer("x", DType::kF32, {n}), y = make_buffer("y", DType::kF32, {n});
  Buffer staged = make_buffer("staged", DType::kF32, {n});
  Var i = var("i"), j = var("j");
  Stmt fill = make_for(i, int_imm(0), int_imm(n), ForKind::kSerial,
                       make_store(staged, load(x, {i}) * float_imm(2.0, DType::kF32), {i}));
  Stmt copy = make_for(j, int_imm(0), int_imm(n), ForKind::kSerial, make_store(y, load(staged, {j}), {j}));
  PrimFunc f = make_prim_func("staged", {x}, {y}, make_allocate(staged, make_seq({fill, copy})));
  Tensor in(DType::kF32, {n}), want(DType::kF32, {n});
  for (int64_t e = 0; e < n; ++e) in.set_f64(e, double(e % 100)), want.set_f64(e, 2.0 * double(e % 100));
  MeasureOptions quick;
  quick.repeat = 2;
  quick.flush_bytes = 0;
  Measurement m = measure_candidate(codegen::parse_target("llvm"), f, {in}, {want}, quick);
  EXPECT_TRUE(m.ok()) << m.error;
}

// A candidate timed beside a baseline comes back as its time over the
// baseline's; one that computes something else, or crashes, as an error.
TEST(TunerMeasure, ACandidateIsTimedAlternatelyWithTheBaseline) {
  Tensor x(DType::kF32, {256}), want(DType::kF32, {256}), wrong(DType::kF32, {256});
  for (int64_t i = 0; i < 256; ++i)
    x.set_f64(i, double(i)), want.set_f64(i, 2.0 * i), wrong.set_f64(i, 2.0 * i);
  wrong.set_f64(3, 1.0);
  codegen::Target host = codegen::parse_target("llvm");
  MeasureOptions quick;
  quick.repeat = 5;
  quick.flush_bytes = 1 << 16;
  auto same_place = [](const tir::Var& i) { return tir::floormod(i, tir::int_imm(256)); };
  tir::PrimFunc once = doubling(256, 256, same_place);
  // The same result, every element written 4096 times over.
  tir::PrimFunc again_and_again = doubling(256, 256 * 4096, same_place);
  Comparison slower = compare_with_baseline(host, once, again_and_again, {x}, {want}, quick);
  ASSERT_TRUE(slower.ok()) << slower.error;
  EXPECT_GT(slower.ratio, 1) << "candidate over baseline, not the other way";
  Comparison faster = compare_with_baseline(host, again_and_again, once, {x}, {want}, quick);
  ASSERT_TRUE(faster.ok()) << faster.error;
  EXPECT_LT(faster.ratio, 1);
  Comparison wrong_output = compare_with_baseline(host, once, once, {x}, {wrong}, quick);
  EXPECT_FALSE(wrong_output.ok());
  EXPECT_NE(wrong_output.error.find("wrong output: output 0[3] = 6, expected 1"), std::string::npos)
      << wrong_output.error;
  Comparison crashed = compare_with_baseline(
      host, once,
      doubling(256, 256, [](const tir::Var& i) { return (i + 1) * tir::int_imm(int64_t(1) << 38); }), {x}, {},
      quick);
  EXPECT_EQ(crashed.error.rfind("crashed: ", 0), 0u) << crashed.error;
}

TEST(TunerMeasure, ACandidateThatCrashesOrNeverEndsIsAnError) {
  Tensor x(DType::kF32, {256});
  codegen::Target host = codegen::parse_target("llvm");
  MeasureOptions quick;
  quick.repeat = 1;
  quick.flush_bytes = 0;
  quick.timeout_s = 20;
  // Stores a terabyte apart: the first lands far outside any mapping.
  Measurement crashed = measure_candidate(
      host, doubling(256, 256, [](const tir::Var& i) { return (i + 1) * tir::int_imm(int64_t(1) << 38); }), {x}, {},
      quick);
  EXPECT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.error.rfind("crashed: ", 0), 0u) << crashed.error;
  // 2^62 iterations: it cannot end before the timeout.
  quick.timeout_s = 2;
  Measurement hung = measure_candidate(
      host, doubling(256, int64_t(1) << 62, [](const tir::Var& i) { return tir::floormod(i, tir::int_imm(256)); }),
      {x}, {}, quick);
  EXPECT_EQ(hung.error, "timed out after 2 s");
}

}  // namespace
}  // namespace tessel::tune
