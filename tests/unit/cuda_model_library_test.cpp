// A model library compiled for a GPU, as a user meets it where there is no
// GPU: built for the emulator it runs as the CPU library does; built for a
// GPU it says why it cannot run here; a corrupt GPU program is caught.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "src/codegen/cuda/nvrtc_library.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

using cli_test::contains;
using cli_test::Result;
using cli_test::run_tessel;
using cli_test::run_tessel_line;
using cli_test::TempDir;

const std::string kTiny = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";

Result compile(const std::string& target, const std::string& out) {
  return run_tessel({"compile", kTiny, "--input-shape", "image=1x1x28x28", "--target", target, "-o", out});
}

// The summary line `tessel run` prints of the output (min, max, mean to six digits).
std::string output_line(const Result& r) {
  return r.out.substr(0, r.out.find('\n'));
}

TEST(CudaModelLibrary, BuiltForTheEmulatorItRunsAsTheCpuLibraryDoes) {
  TempDir dir;
  std::string gpu = (dir / "tiny_emulated.so").string(), cpu = (dir / "tiny_cpu.so").string();
  Result built = compile("cuda-emulated", gpu);
  ASSERT_EQ(built.code, 0) << built.err;
  EXPECT_TRUE(contains(built.out, "target cuda-emulated")) << built.out;
  ASSERT_EQ(compile("llvm", cpu).code, 0);
  Result on_gpu = run_tessel({"run", gpu, "--seed", "7", "--profile"});
  Result on_cpu = run_tessel({"run", cpu, "--seed", "7"});
  ASSERT_EQ(on_gpu.code, 0) << on_gpu.err;
  ASSERT_EQ(on_cpu.code, 0) << on_cpu.err;
  EXPECT_TRUE(contains(output_line(on_cpu), "output 'probs' f32[1, 10]  min ")) << on_cpu.out;
  EXPECT_EQ(output_line(on_gpu), output_line(on_cpu));
  EXPECT_TRUE(
      contains(on_gpu.out, "kernels on cuda: the CUDA emulator on this CPU, timed between device events"))
      << on_gpu.out;
  EXPECT_TRUE(contains(on_gpu.out, "fused_conv1")) << "the profile names each step: " << on_gpu.out;
}

TEST(CudaModelLibrary, BuiltForAGpuItSaysWhyItCannotRunHere) {
  if (!codegen::load_nvrtc()) GTEST_SKIP() << "no NVRTC on this machine";
  TempDir dir;
  std::string so = (dir / "tiny_gpu.so").string();
  Result built = compile("cuda", so);
  ASSERT_EQ(built.code, 0) << built.err;
  EXPECT_TRUE(contains(built.out, "target cuda sm_90")) << built.out;
  Result r = run_tessel_line("run " + cli_test::quote(so), "TESSEL_LIBCUDA=/nonexistent/libcuda.so.1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "no CUDA driver (/nonexistent/libcuda.so.1: cannot open shared object file"))
      << r.err;
}

TEST(CudaModelLibrary, ACorruptGpuProgramIsCaughtWhenTheLibraryLoads) {
  TempDir dir;
  std::string so = (dir / "tiny_emulated.so").string();
  ASSERT_EQ(compile("cuda-emulated", so).code, 0);
  std::string bytes;
  {
    std::ifstream in(so, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // The magic, format version 1 and the 6 kernels of tiny_cnn: the program, not the runtime's copy of the
  // magic.
  const std::string header("TSLGPU\0\0\1\0\0\0\6\0\0\0", 16);
  size_t program = bytes.find(header);
  ASSERT_NE(program, std::string::npos);
  ASSERT_EQ(bytes.find(header, program + 1), std::string::npos);
  bytes[program + 40] ^= 0x10;
  std::ofstream(so, std::ios::binary) << bytes;
  Result r = run_tessel({"run", so});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "corrupt GPU program: checksum mismatch")) << r.err;
}

}  // namespace
}  // namespace tessel
