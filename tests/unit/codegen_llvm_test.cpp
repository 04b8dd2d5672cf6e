// The LLVM backend: flattened functions compiled through O3 and the JIT
// compute what the interpreter computes, on every workload unscheduled and
// scheduled for a CPU; the built-in math functions against the C library;
// vectorized loops become vector code.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "ir/tensor/scalar_semantics.h"
#include "src/codegen/llvm/llvm_module.h"
#include "tests/unit/codegen_llvm_util.h"
#include "tests/unit/sched_workloads_util.h"

namespace tessel {
namespace {

using namespace sched_workloads;
using namespace codegen_test;
using codegen::CpuTarget;

void expect_compiled_equal(Workload w, const tir::PrimFunc& scheduled) {
  const Reference& ref = reference(w);
  EXPECT_EQ(compare_outputs(run_compiled(scheduled, ref.inputs), ref.outputs), "") << workload_name(w) << "\n"
                                                                                   << scheduled;
}

TEST(CodegenLlvm, EveryWorkloadUnscheduled) {
  for (Workload w : kAllWorkloads) expect_compiled_equal(w, lower_workload(w));
}

TEST(CodegenLlvm, TiledParallelVectorizedMatmulWithALocalAccumulator) {
  Schedule sch(lower_workload(Workload::kMatmul));
  BlockRV mm = sch.get_block("mm");
  std::vector<LoopRV> l = sch.get_loops(mm);
  std::vector<LoopRV> i = sch.split(l[0], {4, 8});
  BlockRV cache = sch.cache_write(mm, 0, tir::MemScope::kLocal);
  sch.reverse_compute_at(cache, i[0]);
  sch.decompose_reduction(mm, l[2]);
  sch.parallel(i[0]);
  expect_compiled_equal(Workload::kMatmul, sch.func());
}

TEST(CodegenLlvm, ParallelUnrolledAndVectorizedLoopsOfEveryWorkload) {
  for (Workload w : kAllWorkloads) {
    Schedule sch(lower_workload(w));
    for (const std::string& name : block_names(sch.func())) {
      BlockRV block = sch.get_block(name);
      std::vector<LoopRV> loops = sch.get_loops(block);
      if (loops.empty()) continue;
      try {
        if (loop_is_spatial(sch, block, loops[0])) sch.parallel(loops[0]);
        if (loops.size() > 2) sch.unroll(loops[1]);
        if (loops.size() > 1 && loop_is_spatial(sch, block, loops.back())) sch.vectorize(loops.back());
      } catch (const ScheduleError&) {
        // Illegal here (a loop shared by two blocks, say): the rest still runs.
      }
    }
    expect_compiled_equal(w, sch.func());
  }
}

TEST(CodegenLlvm, BuiltInMathMatchesTheCLibrary) {
  std::vector<float> xs;
  for (double v = -120; v <= 120; v += 0.0173) xs.push_back(float(v));
  for (float v :
       {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-40f, 3e-8f, 0.625f, -0.625f, 88.72f, 88.73f, -87.3f, -103.9f,
        -104.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()})
    xs.push_back(v);
  int64_t n = int64_t(xs.size());
  Tensor x(DType::kF32, {n});
  std::copy(xs.begin(), xs.end(), x.data<float>());
  for (const CpuTarget& target : host_feature_sets())
  for (tir::Intrinsic op : {tir::Intrinsic::k_exp, tir::Intrinsic::k_log, tir::Intrinsic::k_tanh,
                            tir::Intrinsic::k_erf, tir::Intrinsic::k_sigmoid}) {
    SCOPED_TRACE(target.features.back());
    Tensor y = run_compiled(unary_func(op, DType::kF32, n), {x}, nullptr, target)[0];
    int bad = 0;
    for (int64_t k = 0; k < n && bad < 5; ++k) {
      float v = xs[size_t(k)];
      float want = tir::apply_intrinsic<float>(op, v, 0.0f);
      float got = y.data<float>()[k];
      bool same_class = std::isnan(want) == std::isnan(got) && std::isinf(want) == std::isinf(got);
      bool close = std::isnan(want) || std::isinf(want)
                       ? same_class && (std::isnan(want) || got == want)
                       : std::abs(got - want) <= 2e-6f * std::abs(want) + 1e-37f;
      if (!close) {
        ++bad;
        ADD_FAILURE() << tir::intrinsic_name(op) << "(" << v << ") = " << got << ", C library " << want;
      }
    }
  }
}

TEST(CodegenLlvm, VectorizedLoopsBecomeVectorCode) {
  std::string ir;
  Tensor x(DType::kF32, {1000});
  for (int64_t k = 0; k < 1000; ++k) x.data<float>()[k] = float(k) / 100;
  Tensor y = run_compiled(unary_func(tir::Intrinsic::k_exp, DType::kF32, 1000), {x}, &ir)[0];
  // As wide as the host's vector registers (8 floats with AVX2, 16 with AVX-512).
  int lanes = codegen::vector_register_bits(codegen::host_cpu_target()) / 32;
  EXPECT_NE(ir.find("<" + std::to_string(lanes) + " x float>"), std::string::npos) << ir.substr(0, 4000);
  EXPECT_EQ(ir.find("call float @expf"), std::string::npos);
  // The tail: 1000 is not a multiple of 16, and the last element is right.
  EXPECT_NEAR(y.data<float>()[999], std::exp(9.99f), 1e-6 * std::exp(9.99f));
}

// A serial loop of rows around a vectorized row shorter than a vector (a
// pool's 14 columns): LLVM unrolls the short row, and must not then vectorize
// the loop of rows with a gather and a scatter per access.
TEST(CodegenLlvm, ASerialLoopAroundAVectorLoopIsNotVectorizedByLlvm) {
  const int64_t rows = 12, cols = 14;
  tir::Buffer x = tir::make_buffer("X", DType::kF32, {rows + 1, cols});
  tir::Buffer y = tir::make_buffer("Y", DType::kF32, {rows, cols});
  tir::Var r = tir::var("r"), c = tir::var("c");
  tir::Expr v = tir::max(tir::load(x, {r, c}), tir::load(x, {r + 1, c}));
  tir::Stmt body = tir::make_for(r, tir::int_imm(0), tir::int_imm(rows), tir::ForKind::kSerial,
                                 tir::make_for(c, tir::int_imm(0), tir::int_imm(cols),
                                               tir::ForKind::kVectorized, tir::make_store(y, v, {r, c})));
  tir::PrimFunc f = tir::make_prim_func("rows", {x}, {y}, body);
  Tensor in(DType::kF32, {rows + 1, cols});
  for (int64_t k = 0; k < in.numel(); ++k) in.data<float>()[k] = float((k * 37) % 11) - 5;
  std::string ir;
  Tensor out = run_compiled(f, {in}, &ir)[0];
  EXPECT_EQ(ir.find("llvm.masked.gather"), std::string::npos) << ir.substr(0, 6000);
  EXPECT_EQ(ir.find("llvm.masked.scatter"), std::string::npos) << ir.substr(0, 6000);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      EXPECT_EQ(out.data<float>()[i * cols + j],
                std::max(in.data<float>()[i * cols + j], in.data<float>()[(i + 1) * cols + j]));
}

// A stride phase's copy (each row split into its even and odd columns) reads
// its input two elements per iteration: vectorized before any unrolling, as
// whole vectors deinterleaved by shuffles; unrolled first, SLP gathered every
// vector element by element.
TEST(CodegenLlvm, AStridedCopyIsDeinterleavedNotGathered) {
  const int64_t n = 27;
  tir::Buffer x = tir::make_buffer("X", DType::kF32, {2 * n + 1});
  tir::Buffer even = tir::make_buffer("E", DType::kF32, {n}), odd = tir::make_buffer("O", DType::kF32, {n});
  tir::Var i = tir::var("i");
  tir::Stmt body = tir::make_seq({tir::make_store(even, tir::load(x, {i * 2}), {i}),
                                  tir::make_store(odd, tir::load(x, {i * 2 + 1}), {i})});
  tir::PrimFunc f = tir::make_prim_func(
      "phases", {x}, {even, odd},
      tir::make_for(i, tir::int_imm(0), tir::int_imm(n), tir::ForKind::kVectorized, body));
  Tensor in(DType::kF32, {2 * n + 1});
  for (int64_t k = 0; k < in.numel(); ++k) in.data<float>()[k] = float(k);
  std::string ir;
  std::vector<Tensor> out = run_compiled(f, {in}, &ir);
  EXPECT_EQ(ir.find("llvm.masked.gather"), std::string::npos) << ir.substr(0, 6000);
  EXPECT_NE(ir.find("shufflevector"), std::string::npos) << ir.substr(0, 6000);
  for (int64_t k = 0; k < n; ++k) {
    EXPECT_EQ(out[0].data<float>()[k], float(2 * k));
    EXPECT_EQ(out[1].data<float>()[k], float(2 * k + 1));
  }
}

// A window's max is one llvm.maximum per tap (no-signed-zeros: a max and a
// NaN fix-up), not two compares merged into one select: NaN on either side
// still gives NaN, as the interpreter's float_max does.
TEST(CodegenLlvm, AFloatMaxIsOneMaximumThatKeepsNaNsFromEitherSide) {
  const int64_t n = 40;
  tir::Buffer a = tir::make_buffer("a", DType::kF32, {n}), b = tir::make_buffer("b", DType::kF32, {n});
  tir::Buffer hi = tir::make_buffer("hi", DType::kF32, {n}), lo = tir::make_buffer("lo", DType::kF32, {n});
  tir::Var i = tir::var("i");
  tir::Expr ai = tir::load(a, {i}), bi = tir::load(b, {i});
  tir::Stmt body = tir::make_for(i, tir::int_imm(0), tir::int_imm(n), tir::ForKind::kVectorized,
                                 tir::make_seq({tir::make_store(hi, tir::max(ai, bi), {i}),
                                                tir::make_store(lo, tir::min(ai, bi), {i})}));
  tir::PrimFunc f = tir::make_prim_func("extremes", {a, b}, {hi, lo}, body);
  Tensor ta(DType::kF32, {n}), tb(DType::kF32, {n});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t k = 0; k < n; ++k) {
    ta.data<float>()[k] = k % 5 == 1 ? nan : float((k * 7) % 13) - 6;
    tb.data<float>()[k] = k % 7 == 2 ? nan : float((k * 5) % 11) - 5;
  }
  std::string ir;
  std::vector<Tensor> got = run_compiled(f, {ta, tb}, &ir);
  for (const char* op : {"x float> @llvm.maximum.v", "x float> @llvm.minimum.v"}) {  // vectorized, any width
    size_t at = ir.find(op);
    ASSERT_NE(at, std::string::npos) << op << "\n" << ir.substr(0, 6000);
    EXPECT_NE(ir.rfind("call nsz <", at), std::string::npos) << op;
  }
  EXPECT_EQ(ir.find("fcmp"), std::string::npos) << ir.substr(0, 6000);
  std::vector<Tensor> want = tir::interpret(f, {ta, tb});
  for (size_t o = 0; o < 2; ++o)
    for (int64_t k = 0; k < n; ++k) {
      float g = got[o].data<float>()[k], w = want[o].data<float>()[k];
      if (std::isnan(w))
        EXPECT_TRUE(std::isnan(g)) << "output " << o << " at " << k;
      else
        EXPECT_EQ(g, w) << "output " << o << " at " << k;
    }
}

TEST(CodegenLlvm, IntegerSemanticsFollowTheInterpreter) {
  // floor division and modulo of negative numbers, division by zero and by -1, u8 wrap, float to int.
  tir::Buffer a = tir::make_buffer("a", DType::kI32, {6}), b = tir::make_buffer("b", DType::kI32, {6});
  tir::Buffer q = tir::make_buffer("q", DType::kI32, {6}), r = tir::make_buffer("r", DType::kI32, {6});
  tir::Buffer d = tir::make_buffer("d", DType::kI32, {6});
  tir::Var i = tir::var("i");
  tir::Expr ai = tir::load(a, {i}), bi = tir::load(b, {i});
  tir::Stmt body = tir::make_for(i, tir::int_imm(0), tir::int_imm(6), tir::ForKind::kSerial,
                                 tir::make_seq({tir::make_store(q, tir::floordiv(ai, bi), {i}),
                                                tir::make_store(r, tir::floormod(ai, bi), {i}),
                                                tir::make_store(d, tir::div(ai, bi), {i})}));
  tir::PrimFunc f = tir::make_prim_func("ints", {a, b}, {q, r, d}, body);
  Tensor ta(DType::kI32, {6}), tb(DType::kI32, {6});
  int32_t av[] = {7, -7, 7, -7, std::numeric_limits<int32_t>::min(), 5};
  int32_t bv[] = {2, 2, -2, -2, -1, 3};
  std::copy(av, av + 6, ta.data<int32_t>());
  std::copy(bv, bv + 6, tb.data<int32_t>());
  std::vector<Tensor> got = run_compiled(f, {ta, tb});
  std::vector<Tensor> want = tir::interpret(f, {ta, tb});
  for (int o = 0; o < 3; ++o)
    for (int k = 0; k < 6; ++k)
      EXPECT_EQ(got[size_t(o)].data<int32_t>()[k], want[size_t(o)].data<int32_t>()[k])
          << "output " << o << " " << k;
}

// A float that a clamp and a NaN guard keep in int32's range converts to
// int32 in vector lanes (float_bounds.h); the same conversion unclamped goes
// through int64 and wraps: both as the interpreter computes them.
TEST(CodegenLlvm, AClampedFloatConvertsThroughInt32InVectorLanes) {
  const int64_t n = 16;
  tir::Buffer x = tir::make_buffer("x", DType::kF64, {n});
  tir::Buffer clamped = tir::make_buffer("c", DType::kI8, {n}),
              wrapped = tir::make_buffer("w", DType::kI32, {n});
  tir::Var i = tir::var("i");
  tir::Expr xi = tir::load(x, {i}), lo = tir::float_imm(-1000, DType::kF64),
            hi = tir::float_imm(1000, DType::kF64);
  tir::Expr above_lo = tir::select(tir::lt(xi, lo), lo, xi);
  tir::Expr v = tir::select(tir::lt(hi, above_lo), hi, above_lo);
  tir::Expr guarded = tir::select(tir::eq(v, v), v, tir::float_imm(0, DType::kF64));
  tir::Stmt body = tir::make_for(i, tir::int_imm(0), tir::int_imm(n), tir::ForKind::kVectorized,
                                 tir::make_seq({tir::make_store(clamped, tir::cast(DType::kI8, guarded), {i}),
                                                tir::make_store(wrapped, tir::cast(DType::kI32, xi), {i})}));
  tir::PrimFunc f = tir::make_prim_func("convert", {x}, {clamped, wrapped}, body);
  Tensor tx(DType::kF64, {n});
  for (int64_t k = 0; k < n; ++k) tx.data<double>()[k] = (k % 2 ? -1 : 1) * (300.7 + 4e8 * double(k * k));
  tx.data<double>()[3] = std::numeric_limits<double>::quiet_NaN();
  std::string ir;
  std::vector<Tensor> got = run_compiled(f, {tx}, &ir);
  bool vector_int32_conversion = false;  // fptosi <N x double> ... to <N x i32>, any N
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);)
    vector_int32_conversion = vector_int32_conversion || (line.find("fptosi <") != std::string::npos &&
                                                          line.find(" x double>") != std::string::npos &&
                                                          line.find(" x i32>") != std::string::npos);
  EXPECT_TRUE(vector_int32_conversion) << ir.substr(0, 6000);
  std::vector<Tensor> want = tir::interpret(f, {tx});
  for (int64_t k = 0; k < n; ++k) {
    EXPECT_EQ(got[0].data<int8_t>()[k], want[0].data<int8_t>()[k]) << k;
    EXPECT_EQ(got[1].data<int32_t>()[k], want[1].data<int32_t>()[k]) << k;
  }
  EXPECT_EQ(want[0].data<int8_t>()[1], int8_t(-1000 & 0xff));  // clamped, then wrapped
  EXPECT_EQ(want[0].data<int8_t>()[3], 0);                     // NaN
}

}  // namespace
}  // namespace tessel
