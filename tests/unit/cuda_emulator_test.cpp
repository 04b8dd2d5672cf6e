// The generated CUDA C run on this CPU through the GPU runtime: the same
// results as the tensor-IR interpreter, thread blocks that meet at their
// barriers, a schedule that misses a barrier caught, and a failed run-time
// check reported.
#include <gtest/gtest.h>

#include <cstring>

#include "ir/tensor/interpreter.h"
#include "src/codegen/cuda/cuda_codegen.h"
#include "src/codegen/cuda/cuda_emulator.h"
#include "src/runtime/gpu/gpu_runner.h"
#include "src/runtime/kernel_error.h"
#include "tests/unit/cuda_test_util.h"

namespace tessel::tir {
namespace {

// The program on the emulator behind the GPU runtime, as the CUDA backend loads it.
struct Emulated {
  explicit Emulated(const codegen::CudaProgram& p)
      : runner(codegen::gpu_program(p), codegen::open_emulated_device(p.source)) {}
  // Runs `symbol` on host arrays; the status it returns.
  int32_t run(const std::string& symbol, std::vector<Tensor*> args) {
    std::vector<void*> pointers;
    for (Tensor* t : args) pointers.push_back(t->raw());
    return runner.call_host(runner.index(symbol), pointers.data());
  }
  rt::GpuRunner runner;
};

TEST(CudaEmulator, RunsTheGeneratedTextAsTheInterpreterRunsTheIr) {
  PrimFunc f = gpu_matmul(20, 30, 7);
  Emulated lib(codegen::generate_cuda({{"k_matmul", f}}, codegen::GpuTarget{}));
  Tensor a = ramp({20, 7}, 0.5), b = ramp({7, 30}, 0.25), c(DType::kF32, {20, 30});
  ASSERT_EQ(lib.run("k_matmul", {&a, &b, &c}), 0);
  EXPECT_EQ(c.to_f64_vector(), interpret(f, {a, b})[0].to_f64_vector());
}

TEST(CudaEmulator, ATiledMatmulStagedInSharedMemoryComputesTheProduct) {
  PrimFunc f = gpu_matmul(64, 128, 16);
  codegen::CudaProgram p = codegen::generate_cuda({{"k_matmul", f}}, codegen::GpuTarget{});
  ASSERT_TRUE(p.functions[0].launches[0].has_barrier);
  Emulated lib(p);
  Tensor a = ramp({64, 16}, 0.5), b = ramp({16, 128}, 0.25), c(DType::kF32, {64, 128});
  ASSERT_EQ(lib.run("k_matmul", {&a, &b, &c}), 0);
  EXPECT_EQ(c.to_f64_vector(), interpret(make_matmul_func(64, 128, 16), {a, b})[0].to_f64_vector());
}

TEST(CudaEmulator, ThreadsOfABlockMeetAtItsBarriersAndAMissingOneShows) {
  Tensor a = ramp({8 * 64}, 1.0);
  std::vector<double> want(64, 0.0);
  for (int64_t t = 0; t < 64; ++t)
    for (int64_t k = 0; k < 8; ++k) want[size_t(t)] += a.get_f64(k * 64 + 63 - t);
  for (bool barriers : {true, false}) {
    codegen::CudaProgram p =
        codegen::generate_cuda({{"k_mirror", mirror_sum(64, barriers)}}, codegen::GpuTarget{});
    Emulated lib(p);
    Tensor out(DType::kF32, {64});
    ASSERT_EQ(lib.run("k_mirror", {&a, &out}), 0);
    if (barriers)
      EXPECT_EQ(out.to_f64_vector(), want);
    else
      EXPECT_NE(out.to_f64_vector(), want) << "a read of shared memory before its write went unnoticed";
  }
}

TEST(CudaEmulator, AFailedRunTimeCheckIsReportedWithItsValues) {
  Emulated lib(codegen::generate_cuda({{"k_gather", gpu_checked_gather()}}, codegen::GpuTarget{}));
  Tensor x = ramp({10}, 1.0), idx(DType::kI64, {4}), y(DType::kF32, {4});
  for (int64_t i = 0; i < 4; ++i) idx.set_f64(i, double(9 - i));
  ASSERT_EQ(lib.run("k_gather", {&x, &idx, &y}), 0);
  EXPECT_EQ(y.get_f64(0), x.get_f64(9));
  idx.set_f64(2, 12);
  EXPECT_EQ(lib.run("k_gather", {&x, &idx, &y}), 1);
  EXPECT_EQ(rt::take_kernel_error(), "index 12 of element 2 is out of range");
}

TEST(CudaEmulator, AHostCompilerThatFailsIsAUserErrorWithItsOutput) {
  EXPECT_THROW(codegen::open_emulated_device("this is not C++;"), UserError);
}

}  // namespace
}  // namespace tessel::tir
