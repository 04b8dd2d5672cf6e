// Target specs parsed once: what each part means, and the user errors for
// what the backends cannot serve; the backend interface on the LLVM backend.
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/core/diagnostics.h"
#include "src/codegen/backend.h"
#include "src/codegen/llvm/host_target.h"
#include "src/codegen/target.h"
#include "src/driver/tune_session.h"
#include "src/tir_passes/flatten_blocks.h"
#include "tests/unit/cli_runner.h"
#include "tests/unit/tir_test_util.h"

namespace tessel {
namespace {

using codegen::parse_target;
using codegen::Target;

// A feature LLVM knows that this CPU lacks ("amx-tile" on a Zen 4, "avx512f" on a Zen 3).
std::string feature_host_lacks() {
  for (const std::string& f : codegen::host_cpu_target().features)
    if (f[0] == '-') return f.substr(1);
  return "";
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

void expect_user_error(const std::string& spec, const std::string& message) {
  try {
    parse_target(spec);
    ADD_FAILURE() << spec << ": no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Target, TheHostIsTheDefaultWithItsVectorsCoresAndCaches) {
  Target t = parse_target("llvm");
  EXPECT_EQ(t.kind, codegen::TargetKind::kLlvm);
  EXPECT_EQ(t.cpu.cpu, codegen::host_cpu_target().cpu);
  EXPECT_TRUE(t.cpu.vector_bits == 128 || t.cpu.vector_bits == 256 || t.cpu.vector_bits == 512);
  EXPECT_GE(t.cpu.cores, 1);
  EXPECT_TRUE(codegen::features_host_lacks(t).empty());
}

TEST(Target, ANamedCpuBringsItsOwnFeaturesSpelledOut) {
  Target v3 = parse_target("llvm -mcpu=x86-64-v3");
  EXPECT_EQ(v3.cpu.cpu, "x86-64-v3");
  EXPECT_TRUE(has(v3.cpu.features, "+avx2"));
  EXPECT_TRUE(has(v3.cpu.features, "-avx512f"));
  EXPECT_EQ(v3.cpu.vector_bits, 256);
  Target v4 = parse_target("llvm -mcpu=x86-64-v3", {"-mattr=+avx512f"});
  EXPECT_TRUE(has(v4.cpu.features, "+avx512f"));
  EXPECT_EQ(v4.cpu.vector_bits, 512);
  Target narrow = parse_target("llvm -mattr=-avx512f,-avx2,-avx");
  EXPECT_EQ(narrow.cpu.vector_bits, 128);
}

TEST(Target, FeaturesTheHostLacksAreNamed) {
  std::string lacking = feature_host_lacks();
  if (lacking.empty()) GTEST_SKIP() << "this CPU has every feature LLVM lists";
  Target t = parse_target("llvm -mattr=+" + lacking);
  EXPECT_TRUE(has(codegen::features_host_lacks(t), lacking));
}

// The host's figure is measured (a power of two: one dependent chain of FMAs
// over many independent ones, so at least two on any pipelined FMA unit);
// another CPU's is unknown unless the target names it.
TEST(Target, FmasInFlightAreMeasuredOnTheHostOrNamed) {
  Target host = parse_target("llvm");
  if (has(host.cpu.features, "+fma")) {
    int n = host.cpu.fmas_in_flight;
    EXPECT_GE(n, 2);
    EXPECT_EQ(n & (n - 1), 0) << n;
    EXPECT_NE(codegen::describe(host).find("FMAs in flight " + std::to_string(n) + " "), std::string::npos);
    EXPECT_EQ(parse_target("llvm -mattr=-fma").cpu.fmas_in_flight, 0);
  }
  EXPECT_EQ(parse_target("llvm -fmas-in-flight=8").cpu.fmas_in_flight, 8);
  EXPECT_EQ(parse_target("llvm -mcpu=x86-64-v3").cpu.fmas_in_flight, 0);
  EXPECT_EQ(parse_target("llvm -mcpu=x86-64-v3 -fmas-in-flight=8").cpu.fmas_in_flight, 8);
  EXPECT_NE(codegen::describe(parse_target("llvm -mcpu=x86-64-v3")).find("FMAs in flight unknown"),
            std::string::npos);
  // Part of a tuning log's target: the default schedules' tiles follow it.
  EXPECT_EQ(driver::log_target(parse_target("llvm -mcpu=x86-64-v3 -fmas-in-flight=8")),
            "llvm -mcpu=x86-64-v3 -vector-bits=256 -fmas-in-flight=8");
  EXPECT_EQ(driver::log_target(parse_target("llvm -mcpu=x86-64-v3")),
            "llvm -mcpu=x86-64-v3 -vector-bits=256");
  expect_user_error("llvm -fmas-in-flight=0", "-fmas-in-flight takes a count from 1 to 64");
  expect_user_error("llvm -fmas-in-flight=eight", "got 'eight'");
}

// Where waking the pool is cheap, smaller kernels may run in parallel: a
// target attribute, part of the tuning log's target (the schedules follow it).
TEST(Target, TheParallelThresholdIsAnAttributeOfTheCpu) {
  EXPECT_EQ(parse_target("llvm").cpu.min_parallel_cycles, 0);
  codegen::Target cheap = parse_target("llvm -mcpu=x86-64-v3 -parallel-cycles=4096");
  EXPECT_EQ(cheap.cpu.min_parallel_cycles, 4096);
  EXPECT_NE(codegen::describe(cheap).find("parallel threshold 4096 cycles"), std::string::npos);
  EXPECT_EQ(driver::log_target(cheap), "llvm -mcpu=x86-64-v3 -vector-bits=256 -parallel-cycles=4096");
  expect_user_error("llvm -parallel-cycles=0", "-parallel-cycles takes a count of cycles");
  expect_user_error("llvm -parallel-cycles=-5", "got '-5'");
}

TEST(Target, CudaTakesAnArchitecture) {
  Target t = parse_target("cuda -arch=sm_80");
  EXPECT_EQ(t.kind, codegen::TargetKind::kCuda);
  EXPECT_EQ(t.gpu.sm, 80);
  EXPECT_EQ(t.gpu.shared_bytes_per_sm, 164 * 1024);
  EXPECT_EQ(parse_target("cuda").gpu.sm, 90);
  EXPECT_NE(codegen::describe(t).find("arch sm_80\n"), std::string::npos) << codegen::describe(t);
}

TEST(Target, MistakesAreUserErrorsNamingThePart) {
  expect_user_error("opencl", "unknown target 'opencl' (available: llvm, cuda, cuda-emulated)");
  expect_user_error("llvm -O3",
                    "unknown option '-O3' for target llvm (available: -mcpu=, -mattr=, -fmas-in-flight=, "
                    "-parallel-cycles=)");
  expect_user_error("llvm -mcpu=pentium9", "unknown CPU 'pentium9'");
  expect_user_error("llvm -mattr=+avx9", "unknown CPU feature 'avx9'");
  expect_user_error("llvm -mattr=avx2", "-mattr takes +feature or -feature items, got 'avx2'");
  expect_user_error("cuda -mcpu=znver3",
                    "unknown option '-mcpu=znver3' for target cuda (available: -arch=sm_NN, -fast-math)");
  expect_user_error("cuda -arch=sm_9x", "-arch takes sm_NN");
  expect_user_error("cuda -arch=sm_20", "sm_20");
}

// Parts LLVM knows, in a combination it cannot generate code for: LLVM would
// end the process (a fatal error, or an error diagnostic and exit) deep in
// code generation; the target's probe turns that into the user's error.
TEST(Target, ACombinationLlvmCannotSelectIsAUserError) {
  expect_user_error("llvm -mcpu=i386", "LLVM cannot generate code for this CPU and features (64-bit code requested");
  expect_user_error("llvm -mattr=-sse,-sse2", "(SSE register return with SSE disabled)");
  expect_user_error("llvm -mcpu=i386 -mattr=-64bit-mode", "target 'llvm -mcpu=i386 -mattr=-64bit-mode': LLVM cannot");
  // The process goes on: a good target after a refused one still parses.
  EXPECT_EQ(parse_target("llvm -mcpu=x86-64-v2").cpu.cpu, "x86-64-v2");
  EXPECT_EQ(parse_target("llvm -mattr=-sse2").kind, codegen::TargetKind::kLlvm);
}

TEST(Backend, TheLlvmBackendBuildsLoadsAndTimesAFunction) {
  tir::PrimFunc matmul = tir_passes::flatten_blocks(tir::make_matmul_func(2, 2, 2));
  std::unique_ptr<codegen::Backend> backend = codegen::make_backend(parse_target("llvm"));
  std::unique_ptr<codegen::Module> module = backend->build({{"k_matmul", matmul}});
  EXPECT_NE(module->source_text().find("k_matmul"), std::string::npos);
  std::unique_ptr<codegen::LoadedModule> code = module->load({});
  alignas(64) float a[4] = {1, 2, 3, 4};
  alignas(64) float b[4] = {5, 6, 7, 8};
  alignas(64) float c[4] = {};  // kernels assume 64-byte aligned buffers
  void* args[] = {a, b, c};
  EXPECT_EQ(code->lookup("k_matmul")(args), 0);
  EXPECT_EQ(c[3], 3 * 6 + 4 * 8);
  EXPECT_GE(code->time_function("k_matmul", args, 5), 0.0);
}

TEST(Target, CudaEmulatedIsTheCudaKindRunOnThisCpu) {
  codegen::Target t = parse_target("cuda-emulated -arch=sm_80");
  EXPECT_EQ(t.kind, codegen::TargetKind::kCuda);
  EXPECT_TRUE(t.gpu.emulated);
  EXPECT_EQ(t.gpu.sm, 80);
  EXPECT_FALSE(parse_target("cuda").gpu.emulated);
  EXPECT_NE(codegen::describe(t).find("emulated: the CUDA C runs on this CPU\n"), std::string::npos);
}

using cli_test::contains;
using cli_test::Result;
using cli_test::run_tessel;

TEST(TargetCli, PrintsTheParsedTargetOrRefusesWhatCannotRunHere) {
  Result host = run_tessel({"target"});
  EXPECT_EQ(host.code, 0) << host.err;
  EXPECT_TRUE(contains(host.out, "kind llvm\n")) << host.out;
  EXPECT_TRUE(contains(host.out, "vector registers ")) << host.out;
  cli_test::expect_user_error(run_tessel({"target", "llvm -mcpu=nocpu"}), "unknown CPU 'nocpu'");
  std::string tiny = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";
  cli_test::expect_user_error(run_tessel({"compile", tiny, "--input-shape", "image=1x1x28x28", "--target",
                                          "llvm -mcpu=i386", "-o", testing::TempDir() + "/i386.so"}),
                              "LLVM cannot generate code for this CPU and features");
  std::string lacking = feature_host_lacks();
  if (lacking.empty()) return;
  cli_test::expect_user_error(run_tessel({"target", "llvm -mattr=+" + lacking}), "this CPU lacks " + lacking);
  std::string model = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";
  // Running here is refused; building a library for another machine is not.
  cli_test::expect_user_error(run_tessel({"run", model, "--input-shape", "image=1x1x28x28", "--target",
                                          "llvm -mattr=+" + lacking}),
                              "this CPU lacks " + lacking);
}

TEST(PipelineCli, PrintsAfterEveryStageAndTimesThem) {
  std::string model = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";
  cli_test::TempDir dir;
  std::string so = (dir / "m.so").string();
  std::string shape = "image=1x1x28x28";
  Result all = run_tessel(
      {"compile", model, "--input-shape", shape, "-o", so, "--print-after=all", "--time-passes", "--verify"});
  ASSERT_EQ(all.code, 0) << all.err;
  for (const char* stage : {"import", "pack_matmul_weights", "fusion: 6 groups", "lower: kernel tessel_k0_",
                            "schedule: kernel", "flatten_blocks: kernel", "compact_buffers: kernel",
                            "partition_vector_loops: kernel", "plan: 6 steps", "codegen"})
    EXPECT_TRUE(contains(all.out, std::string("// after ") + stage)) << stage;
  for (const char* stage : {"import", "fusion", "schedule", "codegen", "export"})
    EXPECT_TRUE(contains(all.err, std::string("time ") + stage + " ")) << stage << "\n" << all.err;
  Result one = run_tessel({"compile", model, "--input-shape", shape, "-o", so, "--print-after", "fusion"});
  EXPECT_TRUE(contains(one.out, "group fused_conv1: conv1 (Conv) relu1 (Relu)\n")) << one.out;
  EXPECT_FALSE(contains(one.out, "// after lower")) << one.out;
  cli_test::expect_user_error(run_tessel({"compile", model, "--input-shape", shape, "-o", so, "--print-after=lowering"}),
                              "unknown stage 'lowering' (stages: all, import, ");
}

}  // namespace
}  // namespace tessel
