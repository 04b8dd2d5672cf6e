// The GPU target as a user meets it on a machine without a GPU: the CUDA C
// printed, a model checked through the emulation, and what cannot be done
// here refused with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "src/codegen/cuda/nvrtc_library.h"
#include "src/driver/compile_model.h"
#include "src/driver/pipeline.h"
#include "src/driver/run_compiled.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

using cli_test::contains;
using cli_test::expect_user_error;
using cli_test::Result;
using cli_test::run_tessel;
using cli_test::run_tessel_line;

const std::string kTiny = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";

TEST(CudaCli, CompilePrintsTheCudaCWithoutALibrary) {
  if (!codegen::load_nvrtc()) GTEST_SKIP() << "no NVRTC on this machine";
  Result r = run_tessel(
      {"compile", kTiny, "--input-shape", "image=1x1x28x28", "--target", "cuda -arch=sm_80", "--print-cuda"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "TESSEL_KERNEL tessel_k0_fused_conv1_l0(")) << r.out.substr(0, 3000);
  EXPECT_TRUE(
      contains(r.out, "// launches, with ptxas's report for sm_80:\n//   tessel_k0_fused_conv1_l0: grid "))
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

// A knob seed (conformance --sample-knobs) draws the GPU schedules' knobs in the pipeline.
TEST(CudaCli, AKnobSeedDrawsTheGpuSchedulesKnobs) {
  driver::PipelineOptions pipeline;
  pipeline.import.input_shapes["image"] = {1, 1, 28, 28};
  driver::CompileOptions options;
  options.target = codegen::parse_target("cuda-emulated");
  auto block_sizes = [&](std::optional<uint64_t> seed) {
    graph::Graph g = driver::load_graph(kTiny, pipeline);
    options.knob_seed = seed;
    std::string text = driver::compile_graph(g, options).module->source_text();
    std::set<std::string> sizes;
    for (size_t at = text.find(", block "); at != std::string::npos; at = text.find(", block ", at + 1))
      sizes.insert(text.substr(at, text.find(',', at + 2) - at));
    return sizes;
  };
  std::set<std::string> fixed = block_sizes(std::nullopt), drawn = block_sizes(3);
  EXPECT_NE(fixed, drawn) << "the knobs were not drawn";
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

// A run on the GPU opens the CUDA driver ($TESSEL_LIBCUDA here); where it
// is missing or is the toolkit's stub, the run stops saying so.
// A GPU model compiled in this process profiles with each kernel's shared
// memory, and its registers and spills where ptxas compiled it (not under emulation).
TEST(CudaCli, AProfileOfAGpuModelShowsWhatItsKernelsUse) {
  Result r = run_tessel({"run", kTiny, "--input-shape", "image=1x1x28x28", "--target", "cuda-emulated",
                         "--profile", "--repeat", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "GFLOP/s   regs  spill B  shared B\n")) << r.out;
  size_t fc = r.out.find("\nfused_fc ");
  ASSERT_NE(fc, std::string::npos) << r.out;
  std::string line = r.out.substr(fc + 1, r.out.find('\n', fc + 1) - fc - 1);
  EXPECT_TRUE(contains(line, "      -        -      2048")) << "a block reduction's scratch: " << line;
  driver::ModelProfile p;
  p.kernels.push_back({{"k0", 2e6, 1e6, 38, 16, 4096}, 0.5});
  std::ostringstream out;
  driver::print_profile(p, nullptr, out);
  EXPECT_TRUE(contains(out.str(), "     38       16      4096\n")) << out.str();
}

TEST(CudaCli, RunningOnAGpuWithoutItsDriverSaysWhy) {
  const codegen::Nvrtc* nvrtc = codegen::load_nvrtc();
  if (!nvrtc) GTEST_SKIP() << "no NVRTC on this machine";
  std::string check = "check " + cli_test::quote(kTiny) + " --input-shape image=1x1x28x28 --target cuda";
  auto expect_refused = [](const Result& r, const std::string& why) {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "tessel: error: " + why)) << r.err;
    EXPECT_TRUE(contains(r.err, "; --target cuda-emulated runs the generated CUDA C on this CPU")) << r.err;
  };
  expect_refused(run_tessel_line(check, "TESSEL_LIBCUDA=/nonexistent/libcuda.so.1"),
                 "no CUDA driver (/nonexistent/libcuda.so.1: ");
  std::filesystem::path stub = std::filesystem::path(nvrtc->path).parent_path() / "stubs" / "libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "the toolkit has no stub driver at " << stub;
  expect_refused(run_tessel_line(check, "TESSEL_LIBCUDA=" + cli_test::quote(stub.string())),
                 "the CUDA driver did not start: CUDA_ERROR_STUB_LIBRARY: " + stub.string() +
                     " is the toolkit's stub, not a driver");
}

}  // namespace
}  // namespace tessel
