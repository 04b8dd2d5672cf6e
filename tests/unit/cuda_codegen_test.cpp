// The CUDA backend's text: the default GPU schedule's bindings, one launch
// per loop nest with its grid and block, shared buffers in the arena,
// barriers, refusals of what a GPU cannot launch, and NVRTC compiling it.
#include <gtest/gtest.h>

#include <map>

#include "ir/core/diagnostics.h"
#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "schedules/defaults/cpu_knobs.h"
#include "src/codegen/backend.h"
#include "src/codegen/cuda/cuda_codegen.h"
#include "src/codegen/cuda/nvrtc_compile.h"
#include "src/codegen/cuda/nvrtc_library.h"
#include "tests/unit/cuda_test_util.h"
#include "tests/unit/sanitized.h"

namespace tessel::tir {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(GpuDefaults, EachOutputElementIsAThreadAndTheReductionStaysInIt) {
  PrimFunc f = gpu_matmul(20, 30, 7);
  std::string text = to_string(f);
  EXPECT_TRUE(contains(text, "in 0..3 thread_bound(blockIdx.x)")) << text;
  EXPECT_TRUE(contains(text, "in 0..256 thread_bound(threadIdx.x)")) << text;
  EXPECT_TRUE(contains(text, "for k in 0..7:")) << text;
  // The sum is the thread's own: one element, allocated inside the thread loop.
  EXPECT_TRUE(contains(text, "thread_bound(threadIdx.x):\n      alloc C_local: f32[1, 1] local\n")) << text;
  Tensor a = ramp({20, 7}, 0.5), b = ramp({7, 30}, 0.25);
  EXPECT_EQ(interpret(f, {a, b})[0].to_f64_vector(),
            interpret(make_matmul_func(20, 30, 7), {a, b})[0].to_f64_vector());
}

TEST(GpuDefaults, ADividingMatmulIsTiledThroughSharedMemory) {
  PrimFunc f = gpu_matmul(128, 64, 32);
  std::string text = to_string(f);
  EXPECT_TRUE(contains(text, "in 0..2 thread_bound(blockIdx.y)")) << text;
  EXPECT_TRUE(contains(text, "in 0..16 thread_bound(threadIdx.y)")) << text;
  EXPECT_TRUE(contains(text, "alloc A_shared: f32[64, 16] shared")) << text;
  EXPECT_TRUE(contains(text, "barrier()")) << text;
  Tensor a = ramp({128, 32}, 0.5), b = ramp({32, 64}, 0.25);
  std::vector<double> want = interpret(make_matmul_func(128, 64, 32), {a, b})[0].to_f64_vector();
  for (ThreadOrder order : {ThreadOrder::kForward, ThreadOrder::kReverse, ThreadOrder::kShuffled})
    EXPECT_EQ(interpret(f, {a, b}, {order, 3})[0].to_f64_vector(), want) << int(order);
}

// Points of the matmul's knobs (the tuner's search space) across each
// knob's range compute the product; a value a knob does not offer falls
// back to the default.
TEST(GpuDefaults, MatmulTilingsTheKnobsOfferComputeTheProduct) {
  Tensor a = ramp({128, 32}, 0.5), b = ramp({32, 128}, 0.25);
  std::vector<double> want = interpret(make_matmul_func(128, 128, 32), {a, b})[0].to_f64_vector();
  int64_t point = 0;
  for (int64_t rows : {0, 1, 2, 4, 8})
    for (int64_t cols : {1, 8})
      for (int64_t threads_y : {8, 32}) {
        if (!test_support::sweep_point_runs(point++)) continue;
        int64_t step = rows == 2 ? 32 : 4;
        sched::KnobChoices knobs({{"C.thread_rows", rows},
                                  {"C.thread_cols", cols},
                                  {"C.threads_y", threads_y},
                                  {"C.threads_x", 8},
                                  {"C.step", step}});
        sched::Schedule sch(make_matmul_func(128, 128, 32));
        sched::apply_default_gpu_schedule(sch, {.knobs = &knobs});
        std::map<std::string, int64_t> taken = knobs.taken();
        EXPECT_EQ(taken.at("C.thread_rows"), rows);
        PrimFunc f = flattened(sch.func());
        EXPECT_EQ(contains(to_string(f), "A_shared"), rows > 0) << rows;
        if (rows > 0) {
          bool fits = rows * cols <= 64 && 128 % (threads_y * rows) == 0;
          EXPECT_EQ(taken.at("C.thread_cols") == cols && taken.at("C.threads_y") == threads_y, fits)
              << rows << "x" << cols << " threads_y " << threads_y;
        }
        EXPECT_EQ(interpret(f, {a, b}, {ThreadOrder::kShuffled, 5})[0].to_f64_vector(), want)
            << "thread tile " << rows << "x" << cols << ", threads_y " << threads_y << ", step " << step;
      }
  sched::KnobChoices asked;
  sched::Schedule sch(make_matmul_func(128, 128, 32));
  sched::apply_default_gpu_schedule(sch, {.knobs = &asked});
  ASSERT_EQ(asked.knobs().size(), 5u);
  EXPECT_EQ(asked.knobs()[0].key, "C.thread_rows");
  EXPECT_EQ(asked.knobs()[0].candidates, (std::vector<int64_t>{0, 1, 2, 4, 8}));
  EXPECT_EQ(asked.knobs()[0].default_value, 4);
  EXPECT_EQ(asked.knobs()[1].candidates, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(asked.knobs()[1].default_value, 4);
  EXPECT_EQ(asked.knobs()[2].candidates, (std::vector<int64_t>{8, 16, 32}));
  EXPECT_EQ(asked.knobs()[3].candidates, (std::vector<int64_t>{8, 16, 32}));
  EXPECT_EQ(asked.knobs()[4].key, "C.step");
  EXPECT_EQ(asked.knobs()[4].candidates, (std::vector<int64_t>{4, 8, 16, 32}));
  EXPECT_EQ(asked.knobs()[4].default_value, 16);
}

// A tile whose operands would not fit the block's shared memory is not offered.
TEST(GpuDefaults, MatmulStepsAreOfferedOnlyWhereTheTilesFitSharedMemory) {
  sched::KnobChoices asked;
  sched::Schedule sch(make_matmul_func(128, 128, 32));
  // 16 x 16 threads of 4 x 4: 64 rows and 64 columns a step, 512 bytes per unit of step.
  sched::apply_default_gpu_schedule(sch, {.shared_bytes_per_block = 512 * 8, .knobs = &asked});
  ASSERT_EQ(asked.knobs().size(), 5u);
  EXPECT_EQ(asked.knobs()[4].candidates, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(asked.knobs()[4].value, 8);
}

TEST(GpuDefaults, ASmallNestIsOneThreadBlock) {
  std::string text = to_string(gpu_matmul(4, 8, 3));
  EXPECT_TRUE(contains(text, "in 0..32 thread_bound(threadIdx.x)")) << text;
  EXPECT_FALSE(contains(text, "blockIdx")) << text;
}

TEST(CudaCodegen, ALoopNestIsALaunchOfItsBoundExtents) {
  codegen::CudaProgram p =
      codegen::generate_cuda({{"k_matmul", gpu_matmul(20, 30, 7)}}, codegen::GpuTarget{});
  ASSERT_EQ(p.functions.size(), 1u);
  ASSERT_EQ(p.functions[0].launches.size(), 1u);
  const codegen::CudaLaunch& l = p.functions[0].launches[0];
  EXPECT_EQ(l.kernel, "k_matmul_l0");
  EXPECT_EQ(std::vector<int64_t>(l.grid, l.grid + 3), (std::vector<int64_t>{3, 1, 1}));
  EXPECT_EQ(std::vector<int64_t>(l.block, l.block + 3), (std::vector<int64_t>{256, 1, 1}));
  EXPECT_EQ(l.shared_bytes, 0);
  EXPECT_FALSE(l.has_barrier);
  EXPECT_TRUE(
      contains(p.source,
               "TESSEL_KERNEL k_matmul_l0(TESSEL_THREAD_PARAM const float* TESSEL_RESTRICT A, const float* "
               "TESSEL_RESTRICT B, float* TESSEL_RESTRICT C, tessel_error* TESSEL_RESTRICT "
               "tessel_err) {\n"))
      << p.source;
  EXPECT_TRUE(contains(p.source, "= (tessel_i64)blockIdx.x;\n")) << p.source;
  EXPECT_TRUE(
      contains(p.source, "static void k_matmul_l0_thread(const tessel_emu_thread* self, void* closure) {\n"))
      << p.source;
  rt::GpuProgram table = codegen::gpu_program(p);  // what the runtime launches
  ASSERT_EQ(table.functions.size(), 1u);
  const rt::GpuFunction& f = table.functions[0];
  EXPECT_EQ(f.symbol, "k_matmul");
  EXPECT_EQ(f.num_inputs, 2u);
  EXPECT_EQ(f.param_bytes, (std::vector<uint64_t>{20 * 7 * 4, 7 * 30 * 4, 20 * 30 * 4}));
  ASSERT_EQ(f.launches.size(), 1u);
  EXPECT_EQ(f.launches[0].kernel, "k_matmul_l0");
  EXPECT_EQ(f.launches[0].grid[0], 3u);
  EXPECT_EQ(f.launches[0].block[0], 256u);
  ASSERT_EQ(f.launches[0].args.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(f.launches[0].args[i].kind, rt::GpuArg::Kind::kParam);
    EXPECT_EQ(f.launches[0].args[i].value, i);
  }
}

TEST(CudaCodegen, SharedBuffersAreViewsOfTheArenaAndBarriersSyncTheBlock) {
  codegen::CudaProgram p = codegen::generate_cuda({{"k_mirror", mirror_sum(32, true)}}, codegen::GpuTarget{});
  const codegen::CudaLaunch& l = p.functions[0].launches[0];
  EXPECT_EQ(l.shared_bytes, 32 * 4);
  EXPECT_TRUE(l.has_barrier);
  EXPECT_EQ(l.block[0], 32);
  EXPECT_TRUE(contains(p.source, "  TESSEL_SHARED_ARENA\n")) << p.source;
  EXPECT_TRUE(contains(p.source, "float* A_s = (float*)(tessel_shared + 0);\n")) << p.source;
  EXPECT_TRUE(contains(p.source, "__syncthreads();\n")) << p.source;
  codegen::CudaProgram none =
      codegen::generate_cuda({{"k_mirror", mirror_sum(32, false)}}, codegen::GpuTarget{});
  EXPECT_FALSE(none.functions[0].launches[0].has_barrier);
}

TEST(CudaCodegen, WhatAGpuCannotLaunchIsAUserError) {
  codegen::GpuTarget gpu;
  try {
    codegen::generate_cuda({{"k_big", mirror_sum(2048, true)}}, gpu);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "k_big_l0: a thread block of 2048 threads; sm_90 runs at most 1024"))
        << e.what();
  }
  gpu.shared_bytes_per_block = 64;
  try {
    codegen::generate_cuda({{"k_mirror", mirror_sum(32, true)}}, gpu);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "needs 128 bytes of shared memory per block; sm_90 gives a block 64"))
        << e.what();
  }
}

// for bx in blockIdx.x: alloc T (scope, elements); for tx in threadIdx.x: T[tx] = A[bx * 32 + tx]; out[...] =
// T[tx]
PrimFunc block_buffer(MemScope scope, int64_t elements, bool inside_threads) {
  Buffer a = make_buffer("A", DType::kF32, {64}), out = make_buffer("out", DType::kF32, {64});
  Buffer t = make_buffer("T", DType::kF32, {elements}, scope);
  Var bx = var("bx"), tx = var("tx");
  Stmt body = make_seq(
      {make_store(t, load(a, {bx * 32 + tx}), {tx}), make_store(out, load(t, {tx}), {bx * 32 + tx})});
  Stmt threads = inside_threads ? make_for(tx, int_imm(0), int_imm(32), ForKind::kThreadBound,
                                           make_allocate(t, body), "threadIdx.x")
                                : make_allocate(t, make_for(tx, int_imm(0), int_imm(32),
                                                            ForKind::kThreadBound, body, "threadIdx.x"));
  Stmt nest = make_for(bx, int_imm(0), int_imm(2), ForKind::kThreadBound, threads, "blockIdx.x");
  return make_prim_func("f", {a}, {out}, nest);
}

TEST(CudaCodegen, ABufferNoThreadCanHoldIsAUserError) {
  EXPECT_NO_THROW(
      codegen::generate_cuda({{"k", block_buffer(MemScope::kGlobal, 32, true)}}, codegen::GpuTarget{}));
  try {
    codegen::generate_cuda({{"k", block_buffer(MemScope::kGlobal, 32, false)}}, codegen::GpuTarget{});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "global buffer T is allocated inside a kernel, outside its thread loops"))
        << e.what();
  }
  try {
    codegen::generate_cuda({{"k", block_buffer(MemScope::kLocal, 1 << 20, true)}}, codegen::GpuTarget{});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "buffer T would be an array of 4194304 bytes per thread")) << e.what();
  }
}

TEST(CudaCodegen, NvrtcCompilesTheTextForTheArchitecture) {
  if (!codegen::load_nvrtc()) GTEST_SKIP() << "no NVRTC on this machine";
  codegen::CudaProgram p = codegen::generate_cuda(
      {{"k_matmul", gpu_matmul(20, 30, 7)}, {"k_mirror", mirror_sum(32, true)}}, codegen::GpuTarget{});
  for (int sm : {80, 90}) {
    codegen::NvrtcResult r = codegen::nvrtc_compile(p.source, "test.cu", sm);
    EXPECT_TRUE(contains(r.ptx, ".entry k_matmul_l0(")) << r.ptx.substr(0, 2000);
    EXPECT_TRUE(contains(r.ptx, ".target sm_" + std::to_string(sm))) << r.ptx.substr(0, 400);
    EXPECT_TRUE(contains(r.ptx, "bar.sync")) << "the barrier of k_mirror";
    EXPECT_GT(r.resources["k_matmul_l0"].registers, 0) << r.log;
    // A module built for the target reports the same, as the tuner logs it per candidate.
    codegen::Target target = codegen::parse_target("cuda -arch=sm_" + std::to_string(sm));
    codegen::KernelUsage usage =
        codegen::make_backend(target)->build({{"k_matmul", gpu_matmul(20, 30, 7)}})->usage("k_matmul");
    EXPECT_EQ(usage.max_registers, r.resources["k_matmul_l0"].registers);
    ASSERT_GT(r.cubin.size(), 4u);
    EXPECT_EQ(std::string(r.cubin.data(), 4),
              "\x7f"
              "ELF");
  }
}

// -fast-math: NVRTC's --use_fast_math, the hardware's approximations with
// denormals flushed; the emulator, whose math is the host's, refuses it.
TEST(CudaCodegen, FastMathIsAnOptionOfTheCudaTarget) {
  codegen::Target fast = codegen::parse_target("cuda -arch=sm_80 -fast-math");
  EXPECT_TRUE(fast.gpu.fast_math);
  EXPECT_EQ(fast.gpu.sm, 80);
  EXPECT_FALSE(codegen::parse_target("cuda").gpu.fast_math);
  try {
    codegen::parse_target("cuda-emulated -fast-math");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "-fast-math is for target cuda")) << e.what();
  }
  if (!codegen::load_nvrtc()) GTEST_SKIP() << "no NVRTC on this machine";
  std::string source =
      "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = expf(x[threadIdx.x]) / x[32]; }\n";
  std::string exact = codegen::nvrtc_compile(source, "exact.cu", 90).ptx;
  std::string approximate = codegen::nvrtc_compile(source, "fast.cu", 90, true).ptx;
  EXPECT_TRUE(contains(exact, "div.rn.f32")) << exact;  // IEEE division
  EXPECT_FALSE(contains(approximate, "div.rn.")) << approximate;
  EXPECT_TRUE(contains(approximate, "div.approx")) << approximate;
  EXPECT_LT(approximate.size(), exact.size()) << "expf without its range reduction";
}

// y[t * 4 + v + shift] = x[t * 4 + v + shift] for 8 threads, v a vectorized loop of 4 lanes.
PrimFunc vector_copy(int64_t shift) {
  Buffer x = make_buffer("x", DType::kF32, {40}), y = make_buffer("y", DType::kF32, {40});
  Var t = var("t"), v = var("v");
  Expr at = t * int_imm(4) + v + int_imm(shift);
  Stmt lanes = make_for(v, int_imm(0), int_imm(4), ForKind::kVectorized, make_store(y, load(x, {at}), {at}));
  return flattened(make_prim_func(
      "copy", {x}, {y},
      make_root_block(make_for(t, int_imm(0), int_imm(8), ForKind::kThreadBound, lanes, "threadIdx.x"), {})));
}

// A vectorized copy of four floats whose start is a multiple of four is one
// float4 load and store; one whose start may not be stays a loop.
TEST(CudaCodegen, AnAlignedVectorCopyIsOneFloat4LoadAndStore) {
  std::string aligned = codegen::generate_cuda({{"k", vector_copy(0)}}, codegen::GpuTarget{}).source;
  EXPECT_TRUE(contains(aligned, "TESSEL_COPY4(y + (t * 4LL), x + (t * 4LL));")) << aligned;
  std::string shifted = codegen::generate_cuda({{"k", vector_copy(1)}}, codegen::GpuTarget{}).source;
  EXPECT_FALSE(contains(shifted, "TESSEL_COPY4(y")) << shifted;
  EXPECT_TRUE(contains(shifted, "for (tessel_i64 v = 0LL; v < 4LL; ++v)")) << shifted;
  // The tiled matmul fetches its tiles into shared memory that way.
  codegen::CudaProgram tiled =
      codegen::generate_cuda({{"k_matmul", gpu_matmul(128, 128, 32)}}, codegen::GpuTarget{});
  EXPECT_TRUE(contains(tiled.source, "TESSEL_COPY4(A_shared + ")) << tiled.source;
  EXPECT_TRUE(contains(tiled.source, "TESSEL_COPY4(B_shared + ")) << tiled.source;
  if (!codegen::load_nvrtc()) GTEST_SKIP() << "no NVRTC on this machine";
  std::string ptx = codegen::nvrtc_compile(tiled.source, "tiled.cu", 90).ptx;
  EXPECT_TRUE(contains(ptx, "ld.global.nc.v4.")) << ptx;  // the read-only path, 16 bytes at once
  EXPECT_TRUE(contains(ptx, "st.shared.v4.")) << ptx;
}

TEST(CudaCodegen, PtxasReportsRegistersAndSpillsPerKernel) {
  std::map<std::string, codegen::KernelResources> r = codegen::parse_ptxas_report(
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k2' for 'sm_90'\n"
      "ptxas info    : Function properties for k2\n"
      "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 256 bytes smem\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Used 8 registers, used 0 barriers\n");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r["k2"].registers, 255);
  EXPECT_EQ(r["k2"].stack_bytes, 16);
  EXPECT_EQ(r["k2"].spill_store_bytes, 8);
  EXPECT_EQ(r["k2"].spill_load_bytes, 12);
  EXPECT_EQ(r["k"].registers, 8);
  EXPECT_EQ(r["k"].spill_store_bytes, 0);
}

}  // namespace
}  // namespace tessel::tir
