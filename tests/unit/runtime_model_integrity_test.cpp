// What tessel_model_load refuses in an exported model.so, through the C ABI
// and through `tessel run` (exit 2, the reason on stderr): a flipped bit in the
// weights or the plan (checksums), kernels compiled for CPU features this CPU
// lacks, and an invalid TESSEL_NUM_THREADS.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "src/codegen/llvm/host_target.h"
#include "src/driver/compile_model.h"
#include "src/driver/pipeline.h"
#include "src/runtime/cpu_features.h"
#include "src/runtime/plan.h"
#include "tessel/runtime.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using cli_test::contains;
using cli_test::quote;
using cli_test::Result;
using cli_test::run_tessel;
using cli_test::run_tessel_line;

const std::string kTinyCnn = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";

fs::path process_dir() {
  return fs::temp_directory_path() / ("tessel_integrity_" + std::to_string(::getpid()));
}

// The tiny CNN exported once per process, and the weights embedded in it.
struct Exported {
  fs::path so = process_dir() / "tiny.so";
  std::vector<uint8_t> weights;
  Exported() {
    fs::create_directories(process_dir());
    driver::PipelineOptions options;
    options.import.input_shapes["image"] = {1, 1, 28, 28};
    graph::Graph g = driver::load_graph(kTinyCnn, options);
    driver::CompiledGraph compiled = driver::compile_graph(g, {});
    weights = compiled.weights;
    driver::export_shared_library(std::move(compiled), so.string());
  }
  ~Exported() {
    std::error_code ec;
    fs::remove_all(process_dir(), ec);
  }
};

const Exported& exported() {
  static const Exported e;
  return e;
}

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

fs::path write_copy(const std::vector<uint8_t>& bytes, const std::string& name) {
  fs::path p = process_dir() / name;
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), long(bytes.size()));
  return p;
}

// tessel_model_load of the library at path: its status and message.
struct Load {
  bool loaded = false;
  int32_t status = -1;
  std::string message;
};

Load load_library(const fs::path& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_TRUE(handle) << dlerror();
  if (!handle) return {};
  auto load = reinterpret_cast<tessel_model* (*)()>(dlsym(handle, "tessel_model_load"));
  auto unload = reinterpret_cast<void (*)(tessel_model*)>(dlsym(handle, "tessel_model_unload"));
  auto status = reinterpret_cast<int32_t (*)()>(dlsym(handle, "tessel_last_status"));
  auto error = reinterpret_cast<const char* (*)()>(dlsym(handle, "tessel_last_error"));
  EXPECT_TRUE(load && unload && status && error);
  Load out;
  if (load && unload && status && error) {
    tessel_model* m = load();
    out = {m != nullptr, m ? TESSEL_OK : status(), m ? "" : error()};
    unload(m);
  }
  dlclose(handle);
  return out;
}

// Where `needle` starts in `hay` (the first time), or npos.
size_t find(const std::vector<uint8_t>& hay, const uint8_t* needle, size_t n) {
  auto it = std::search(hay.begin(), hay.end(), needle, needle + n);
  return it == hay.end() ? std::string::npos : size_t(it - hay.begin());
}

TEST(RuntimeModelIntegrity, TheExportedLibraryLoads) {
  Load l = load_library(exported().so);
  EXPECT_TRUE(l.loaded) << l.message;
}

TEST(RuntimeModelIntegrity, AFlippedWeightBitIsAChecksumMismatchAtLoad) {
  const std::vector<uint8_t>& w = exported().weights;
  // A run of 32 weight bytes that is not all zero, found in the file.
  size_t at = 0;
  while (at + 32 <= w.size() &&
         std::all_of(w.begin() + long(at), w.begin() + long(at + 32), [](uint8_t b) { return b == 0; }))
    at += 32;
  ASSERT_LE(at + 32, w.size()) << "no non-zero weights";
  std::vector<uint8_t> file = read_bytes(exported().so);
  size_t in_file = find(file, w.data() + at, 32);
  ASSERT_NE(in_file, std::string::npos) << "the weights are not in the library";
  file[in_file + 5] ^= 0x10;  // a mantissa bit: a slightly different weight, the kind that goes unnoticed
  fs::path bad = write_copy(file, "weight_flipped.so");
  Load l = load_library(bad);
  EXPECT_FALSE(l.loaded);
  EXPECT_EQ(l.status, TESSEL_ERR_CORRUPT_MODEL);
  EXPECT_TRUE(contains(l.message, "model data corrupt: checksum mismatch in the weights")) << l.message;
  cli_test::expect_user_error(run_tessel({"run", bad.string()}), "checksum mismatch in the weights");
}

TEST(RuntimeModelIntegrity, AFlippedPlanBitIsAChecksumMismatchAtLoad) {
  std::vector<uint8_t> file = read_bytes(exported().so);
  // The magic and the format version: the runtime's own copy of the magic is followed by other bytes.
  const uint8_t header[12] = {'T', 'S', 'L', 'P', 'L', 'A', 'N', 0, uint8_t(rt::kPlanFormatVersion), 0, 0, 0};
  size_t plan = find(file, header, sizeof(header));
  ASSERT_NE(plan, std::string::npos);
  file[plan + 40] ^= 0x01;
  fs::path bad = write_copy(file, "plan_flipped.so");
  Load l = load_library(bad);
  EXPECT_EQ(l.status, TESSEL_ERR_CORRUPT_MODEL);
  EXPECT_TRUE(contains(l.message, "model data corrupt: checksum mismatch in the plan")) << l.message;
}

TEST(RuntimeModelIntegrity, AnInvalidThreadCountInTheEnvironmentFailsTheLoad) {
  std::string so = quote(exported().so.string());
  for (const char* bad : {"abc", "0", "-3", "2048", "4threads"}) {
    Result r = run_tessel_line("run " + so, std::string("TESSEL_NUM_THREADS=") + quote(bad));
    cli_test::expect_user_error(r, "TESSEL_NUM_THREADS='" + std::string(bad) + "' is not a thread count");
  }
  ::setenv("TESSEL_NUM_THREADS", "many", 1);
  Load l = load_library(exported().so);
  ::unsetenv("TESSEL_NUM_THREADS");
  EXPECT_EQ(l.status, TESSEL_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(l.message, "TESSEL_NUM_THREADS='many'")) << l.message;
  // More threads than cores are honoured.
  Result r = run_tessel_line("run " + so + " --repeat 3", "TESSEL_NUM_THREADS=8");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(8 threads)")) << r.out;
}

// The runtime's cpuid table agrees with LLVM's view of this CPU on every feature both know.
TEST(RuntimeModelIntegrity, CpuidAgreesWithLlvmOnTheHostFeatures) {
  const std::vector<std::string>& checkable = rt::checkable_cpu_features();
  int compared = 0;
  for (const std::string& f : codegen::host_cpu_target().features) {
    std::string name = f.substr(1);
    if (std::find(checkable.begin(), checkable.end(), name) == checkable.end()) continue;
    EXPECT_EQ(rt::missing_cpu_features({name}).empty(), f[0] == '+') << f;
    ++compared;
  }
#if defined(__x86_64__)
  EXPECT_GT(compared, 20);
#endif
  EXPECT_EQ(rt::missing_cpu_features({"no-such-feature"}), std::vector<std::string>{"no-such-feature"});
  EXPECT_EQ(rt::required_cpu_features({"+fma", "-avx512f", "+avx2", "+fma", "+no-such-feature"}),
            (std::vector<std::string>{"avx2", "fma"}));
}

// A feature this host lacks and the loader checks: the likeliest ones first.
std::string feature_the_host_lacks() {
  std::vector<std::string> lacking;
  const std::vector<std::string>& checkable = rt::checkable_cpu_features();
  for (const std::string& f : codegen::host_cpu_target().features)
    if (f[0] == '-' && std::find(checkable.begin(), checkable.end(), f.substr(1)) != checkable.end())
      lacking.push_back(f.substr(1));
  for (const char* preferred : {"avx512fp16", "amx-tile", "avx512bf16", "avx512f", "avx2"})
    if (std::find(lacking.begin(), lacking.end(), preferred) != lacking.end()) return preferred;
  return lacking.empty() ? "" : lacking.front();
}

TEST(RuntimeModelIntegrity, ALibraryForAFeatureThisCpuLacksIsRefusedNamingIt) {
  std::string feature = feature_the_host_lacks();
  if (feature.empty()) GTEST_SKIP() << "this CPU has every feature the loader checks";
  fs::path so = process_dir() / "needs_feature.so";
  fs::create_directories(process_dir());
  Result c = run_tessel({"compile", kTinyCnn, "--input-shape", "image=1x1x28x28", "--target",
                         "llvm -mattr=+" + feature, "-o", so.string()});
  ASSERT_EQ(c.code, 0) << c.err;
  // The feature implies others (avx512fp16 needs avx512bw, ...), which the list names too.
  Result r = run_tessel({"run", so.string()});
  cli_test::expect_user_error(r, "CPU features this CPU lacks: ");
  EXPECT_TRUE(contains(r.err, feature)) << r.err;
  Load l = load_library(so);
  EXPECT_FALSE(l.loaded);
  EXPECT_EQ(l.status, TESSEL_ERR_UNSUPPORTED_CPU);
  EXPECT_TRUE(contains(l.message, feature)) << l.message;
}

}  // namespace
}  // namespace tessel
