// NVRTC opened at run time: found with the toolkit, a clear "unavailable"
// without it, and `--target cuda` refused with the reason (never a crash).
#include <gtest/gtest.h>

#include <filesystem>

#include "src/codegen/cuda/nvrtc_library.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

using cli_test::contains;
using cli_test::expect_user_error;
using cli_test::Result;
using cli_test::run_tessel_line;

bool toolkit_present() {
  for (const std::string& place : codegen::nvrtc_search_list())
    if (place.find('/') != std::string::npos && std::filesystem::exists(place)) return true;
  return false;
}

TEST(NvrtcLibrary, SearchListTriesTheToolkitFolders) {
  std::vector<std::string> list = codegen::nvrtc_search_list();
  ASSERT_FALSE(list.empty());
  EXPECT_EQ(list.front(), "libnvrtc.so.13");
  EXPECT_NE(std::find(list.begin(), list.end(), "/usr/local/cuda/lib64/libnvrtc.so.13"), list.end());
}

TEST(NvrtcLibrary, LoadsWhereTheToolkitIsAndReportsItsVersion) {
  if (!toolkit_present()) GTEST_SKIP() << "no CUDA toolkit on this machine";
  std::string why;
  const codegen::Nvrtc* nvrtc = codegen::load_nvrtc(&why);
  ASSERT_NE(nvrtc, nullptr) << why;
  int major = 0, minor = 0;
  ASSERT_EQ(nvrtc->version(&major, &minor), 0);
  EXPECT_GE(major, 12);
  std::vector<int> archs = codegen::nvrtc_architectures();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
  EXPECT_TRUE(contains(codegen::nvrtc_description(), std::to_string(major) + "." + std::to_string(minor) + " ("));
}

TEST(NvrtcLibrary, AMissingLibraryIsReportedUnavailableByVersion) {
  Result r = run_tessel_line("version", "TESSEL_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "NVRTC unavailable: NVRTC (libnvrtc.so) was not found")) << r.out;
  EXPECT_TRUE(contains(r.out, "/nonexistent/libnvrtc.so.13: ")) << r.out;
  EXPECT_TRUE(
      contains(r.out, "targets llvm, cuda-emulated; cuda unavailable: NVRTC (libnvrtc.so) was not found"))
      << r.out;
}

TEST(NvrtcLibrary, ALibraryThatIsNotNvrtcIsRefusedNamingWhatItLacks) {
  Result r = run_tessel_line("version", "TESSEL_NVRTC_LIBRARY=libm.so.6");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "libm.so.6: lacks nvrtcVersion")) << r.out;
}

TEST(NvrtcLibrary, TargetCudaIsAUserErrorWithTheReason) {
  std::string model = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";
  expect_user_error(run_tessel_line("compile " + model + " -o /tmp/never.so --target cuda",
                                    "TESSEL_NVRTC_LIBRARY=/nonexistent/libnvrtc.so"),
                    "target cuda is unavailable: NVRTC (libnvrtc.so) was not found");
  // With NVRTC the kernels compile; running them needs a GPU's driver (or the emulation).
  Result r = run_tessel_line("check " + model + " --input-shape image=1x1x28x28 --target cuda");
  EXPECT_EQ(r.code, 2) << r.err;
  if (!toolkit_present())
    EXPECT_TRUE(contains(r.err, "target cuda is unavailable: ")) << r.err;
  else
    EXPECT_TRUE(contains(r.err, "no CUDA driver (libcuda.so.1") ||
                contains(r.err, "on the GPU is not part of"))
        << r.err;
}

}  // namespace
}  // namespace tessel
