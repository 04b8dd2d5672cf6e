// The roofline: where a kernel sits on it (arithmetic only), measuring with
// the target's micro-kernel and a triad, the per-machine cache (read back,
// replaced when corrupt), targets it refuses, and the commands that print it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/codegen/target.h"
#include "src/driver/roofline.h"
#include "tessel/error.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

using driver::RooflinePoint;

TEST(Roofline, AKernelIsPlacedByItsIntensity) {
  RooflinePoint roof{100, 20};  // ridge 5 FLOP/byte
  EXPECT_DOUBLE_EQ(roof.ridge(), 5.0);
  // 1 GFLOP over 1 GB in 0.1 s: intensity 1, bound 20 GFLOP/s, achieved 10.
  driver::RooflinePlace memory = driver::place_on_roofline(roof, 1e9, 1e9, 0.1);
  EXPECT_DOUBLE_EQ(memory.intensity, 1.0);
  EXPECT_DOUBLE_EQ(memory.bound_gflops, 20.0);
  EXPECT_DOUBLE_EQ(memory.percent, 50.0);
  EXPECT_FALSE(memory.compute_bound);
  // 10 GFLOP over 1 GB in 0.2 s: intensity 10, bound the peak, achieved 50.
  driver::RooflinePlace compute = driver::place_on_roofline(roof, 1e10, 1e9, 0.2);
  EXPECT_DOUBLE_EQ(compute.bound_gflops, 100.0);
  EXPECT_DOUBLE_EQ(compute.percent, 50.0);
  EXPECT_TRUE(compute.compute_bound);
  EXPECT_EQ(driver::place_on_roofline(roof, 1e9, 0, 0.1).percent, 0.0) << "no bytes: no place";
}

TEST(Roofline, FewerThreadsThanCoresScaleOneThreadsPeakUpToAllCores) {
  driver::Roofline r{"m", 4, {10, 5, 40}, {30, 12, 100}};
  EXPECT_DOUBLE_EQ(r.at(1).gflops, 10);
  EXPECT_DOUBLE_EQ(r.at(2).gflops, 20);
  EXPECT_DOUBLE_EQ(r.at(2).gbps, 10);
  EXPECT_DOUBLE_EQ(r.at(4).gflops, 30);
  EXPECT_DOUBLE_EQ(r.at(4).gbps, 12);
  EXPECT_DOUBLE_EQ(r.at(2).cache_gbps, 80);
  EXPECT_DOUBLE_EQ(r.at(4).cache_gbps, 100);
}

driver::RooflineOptions quick() {
  driver::RooflineOptions o;
  o.fma_seconds = 0.002;
  o.triad_bytes = 3 << 20;
  o.repeats = 2;
  return o;
}

// A cache folder of the test's own (tests run in parallel, each in a process).
struct CacheDir {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) /
                              ("tessel_roofline_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
  CacheDir() {
    std::filesystem::remove_all(dir);
    setenv("TESSEL_CACHE", dir.c_str(), 1);
  }
  ~CacheDir() { unsetenv("TESSEL_CACHE"); }
};

TEST(Roofline, MeasuredOnceThenReadFromTheCacheAndRemeasuredWhenCorrupt) {
  CacheDir cache;
  codegen::Target host = codegen::parse_target("llvm");
  std::ostringstream first;
  driver::Roofline measured = driver::machine_roofline(host, false, first, quick());
  EXPECT_NE(first.str().find("measuring the roofline"), std::string::npos) << first.str();
  EXPECT_GT(measured.one_thread.gflops, 0);
  EXPECT_GT(measured.one_thread.gbps, 0);
  EXPECT_GT(measured.all_threads.gflops, 0);
  EXPECT_GT(measured.one_thread.cache_gbps, 0);
  EXPECT_GT(measured.all_threads.cache_gbps, 0);
  EXPECT_EQ(driver::roofline_cache_path(), (cache.dir / "roofline.json").string());
  std::ostringstream second;
  driver::Roofline cached = driver::machine_roofline(host, false, second, quick());
  EXPECT_NE(second.str().find("from " + driver::roofline_cache_path()), std::string::npos) << second.str();
  EXPECT_EQ(cached.one_thread.gflops, measured.one_thread.gflops);
  EXPECT_EQ(cached.all_threads.gbps, measured.all_threads.gbps);
  std::ofstream(driver::roofline_cache_path()) << "{\"" << measured.machine << "\": {\"cores\": 2, \"one";
  std::ostringstream third;
  driver::Roofline again = driver::machine_roofline(host, false, third, quick());
  EXPECT_NE(third.str().find("cannot be read"), std::string::npos) << third.str();
  EXPECT_GT(again.one_thread.gflops, 0);
  std::ostringstream fourth;
  driver::machine_roofline(host, false, fourth, quick());
  EXPECT_NE(fourth.str().find("from "), std::string::npos) << "the replaced cache reads back: " << fourth.str();
  // An entry of an older measurement (no version): measured again.
  std::ofstream(driver::roofline_cache_path())
      << "{\"" << measured.machine
      << "\": {\"cores\": 2, \"one_thread\": {\"gflops\": 59, \"gbps\": 14, \"cache_gbps\": 120},"
         " \"all_threads\": {\"gflops\": 118, \"gbps\": 27, \"cache_gbps\": 216}}}";
  std::ostringstream fifth;
  driver::machine_roofline(host, false, fifth, quick());
  EXPECT_NE(fifth.str().find("measured by an older Tessel; measuring again"), std::string::npos)
      << fifth.str();
  std::ostringstream sixth;
  driver::machine_roofline(host, false, sixth, quick());
  EXPECT_NE(sixth.str().find("from "), std::string::npos) << sixth.str();
}

TEST(Roofline, OnlyThisMachinesCpuIsMeasured) {
  EXPECT_THROW(driver::measure_roofline(codegen::parse_target("cuda"), quick()), UserError);
  std::vector<std::string> lacking;
  for (const char* f : {"avx512f", "avx2", "avx512fp16", "amx-tile"}) {
    codegen::Target t = codegen::parse_target(std::string("llvm -mattr=+") + f);
    if (!codegen::features_host_lacks(t).empty()) {
      EXPECT_THROW(driver::measure_roofline(t, quick()), UserError) << f;
      return;
    }
  }
}

TEST(RooflineCli, PrintsTheTableAndProfilesPlaceKernelsOnIt) {
  CacheDir cache;
  std::string env = "TESSEL_CACHE=" + cli_test::quote(cache.dir.string());
  cli_test::Result r = cli_test::run_tessel_line("roofline", env);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(cli_test::contains(r.out, "threads   peak GFLOP/s   bandwidth GB/s   ridge FLOP/byte")) << r.out;
  EXPECT_TRUE(cli_test::contains(r.err, "measuring the roofline")) << r.err;
  std::string model = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";
  cli_test::Result p = cli_test::run_tessel_line(
      "run " + cli_test::quote(model) + " --input-shape image=1x1x28x28 --profile --threads 1", env);
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_TRUE(cli_test::contains(p.out, "FLOP/B   %roof  bound")) << p.out;
  EXPECT_TRUE(cli_test::contains(p.out, "roofline at 1 thread: ")) << p.out;
  EXPECT_TRUE(cli_test::contains(p.err, "from ")) << "the cached roofline: " << p.err;
  cli_test::expect_user_error(cli_test::run_tessel({"roofline", "model.onnx"}), "roofline takes no model");
}

}  // namespace
}  // namespace tessel
