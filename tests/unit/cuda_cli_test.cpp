// The GPU target as a user meets it on a machine without a GPU: the CUDA C
// printed, a model checked through the emulation, and what cannot be done
// here refused with the reason.
#include <gtest/gtest.h>

#include "src/codegen/cuda/nvrtc_library.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

using cli_test::contains;
using cli_test::expect_user_error;
using cli_test::Result;
using cli_test::run_tessel;

const std::string kTiny = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";

TEST(CudaCli, CompilePrintsTheCudaCWithoutALibrary) {
  if (!codegen::load_nvrtc()) GTEST_SKIP() << "no NVRTC on this machine";
  Result r = run_tessel(
      {"compile", kTiny, "--input-shape", "image=1x1x28x28", "--target", "cuda -arch=sm_80", "--print-cuda"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "TESSEL_KERNEL tessel_k0_fused_conv1_l0(")) << r.out.substr(0, 3000);
  EXPECT_TRUE(contains(r.out, "// ptxas, sm_80, per kernel:\n//   tessel_k0_fused_conv1_l0: "))
      << r.out.substr(0, 3000);
  EXPECT_TRUE(contains(r.out, "(tessel_i64)threadIdx.x;")) << r.out.substr(0, 3000);
  EXPECT_TRUE(contains(r.out, "#define TESSEL_KERNEL extern \"C\" __global__ void")) << r.out.substr(0, 3000);
  // The conv's padded input read in place and its bias + ReLU in its write-back: one launch.
  EXPECT_FALSE(contains(r.out, "tessel_k0_fused_conv1_l1")) << r.out.substr(0, 3000);
  EXPECT_TRUE(contains(r.out, "float* TESSEL_RESTRICT r1, tessel_error*")) << r.out.substr(0, 3000);
}

TEST(CudaCli, CheckRunsTheCudaCOnThisCpuKernelByKernel) {
  Result r = run_tessel(
      {"check", kTiny, "--input-shape", "image=1x1x28x28", "--target", "cuda-emulated", "--per-kernel"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "check passed")) << r.out;
  EXPECT_TRUE(contains(r.out, "kernel 0 ")) << r.out;
}

TEST(CudaCli, WhatNeedsAGpuOrAnLlvmTargetIsRefused) {
  expect_user_error(run_tessel({"compile", kTiny, "--input-shape", "image=1x1x28x28", "--target",
                                "cuda-emulated", "--print-llvm", "-o", "/tmp/never.so"}),
                    "--print-llvm prints an llvm target's code; for cuda, --print-cuda");
  expect_user_error(run_tessel({"compile", kTiny, "--input-shape", "image=1x1x28x28", "--print-cuda", "-o",
                                "/tmp/never.so"}),
                    "--print-cuda needs --target cuda (or cuda-emulated)");
  expect_user_error(
      run_tessel({"compile", kTiny, "--input-shape", "image=1x1x28x28", "--target", "cuda-emulated"}),
      "compile needs -o OUT.so");
  expect_user_error(run_tessel({"conformance", std::string(TESSEL_SOURCE_DIR), "--target", "opencl"}),
                    "(available: reference, tir, llvm, cuda, cuda-emulated)");
}

}  // namespace
}  // namespace tessel
