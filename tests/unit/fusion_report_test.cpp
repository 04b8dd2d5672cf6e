// The fusion report on the bundled example: one profile per policy whose
// figures agree with each other (kernels, bytes, time inside and outside
// kernels, the groups against their nodes), and the three files as a user
// opens them; bad options are user errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "src/driver/fusion_report/report_writers.h"
#include "tessel/error.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

using passes::FusionPolicy;

// One roofline cache for these tests: the first to run measures it.
std::string cache_dir() { return (std::filesystem::path(testing::TempDir()) / "tessel_report_roofline").string(); }

std::string example() { return std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx"; }

struct FusionReportTest : testing::Test {
  static void SetUpTestSuite() {
    setenv("TESSEL_CACHE", cache_dir().c_str(), 1);
    driver::FusionReportOptions o;
    o.pipeline.import.input_shapes["image"] = {1, 1, 28, 28};
    o.policies = {FusionPolicy::kNone, FusionPolicy::kSimple, FusionPolicy::kDefault};
    o.repeat = 3;
    o.threads = 1;
    std::ostringstream progress;
    report = new driver::FusionReport(driver::make_fusion_report(example(), o, progress));
    log = new std::string(progress.str());
  }
  static void TearDownTestSuite() {
    delete report;
    delete log;
    unsetenv("TESSEL_CACHE");
  }
  static driver::FusionReport* report;
  static std::string* log;
};
driver::FusionReport* FusionReportTest::report = nullptr;
std::string* FusionReportTest::log = nullptr;

TEST_F(FusionReportTest, EveryPolicyIsProfiledAndItsFiguresAddUp) {
  ASSERT_EQ(report->policies.size(), 3u);
  EXPECT_NE(log->find("[3/3] fusion default"), std::string::npos) << *log;
  const driver::PolicyReport &none = report->policies[0], &fused = report->policies[2];
  EXPECT_EQ(none.policy, "none");
  EXPECT_EQ(report->threads, 1);
  size_t nodes = 0;
  for (const driver::ReportKernel& k : none.kernels) nodes += k.nodes.size();
  EXPECT_EQ(nodes, none.kernels.size()) << "one kernel per node";
  EXPECT_LT(fused.kernels.size(), none.kernels.size());
  for (const driver::PolicyReport& p : report->policies) {
    double sum = 0, bytes = 0;
    for (const driver::ReportKernel& k : p.kernels) {
      sum += k.median_ms;
      bytes += k.bytes;
      EXPECT_FALSE(k.ops.empty());
    }
    EXPECT_DOUBLE_EQ(p.kernel_sum_ms, sum);
    EXPECT_DOUBLE_EQ(p.bytes_between_kernels, bytes);
    EXPECT_GE(p.outside_kernels_ms(), 0) << "each run's time outside its kernels";
    EXPECT_LE(p.outside_kernels_ms(), p.end_to_end.max_ms);
    EXPECT_EQ(p.end_to_end.runs, 3);
    EXPECT_GT(p.arena_bytes, 0);
  }
  EXPECT_LT(fused.bytes_between_kernels, none.bytes_between_kernels) << "fusion keeps intermediates in the kernel";
}

TEST_F(FusionReportTest, AFusedGroupIsComparedWithItsNodesAsKernels) {
  ASSERT_FALSE(report->changes.empty());
  std::map<std::string, double> node_ms;
  for (const driver::ReportKernel& k : report->policies[0].kernels) node_ms[k.nodes.at(0)] = k.median_ms;
  for (const driver::GroupChange& c : report->changes) {
    const driver::PolicyReport& p = c.policy == "simple" ? report->policies[1] : report->policies[2];
    auto k = std::find_if(p.kernels.begin(), p.kernels.end(), [&](auto& k) { return k.name == c.kernel; });
    ASSERT_NE(k, p.kernels.end()) << c.kernel;
    double unfused = 0;
    for (const std::string& n : k->nodes) unfused += node_ms.at(n);
    EXPECT_DOUBLE_EQ(c.unfused_ms, unfused);
    EXPECT_DOUBLE_EQ(c.fused_ms, k->median_ms);
    EXPECT_EQ(c.nodes, int(k->nodes.size()));
  }
  for (size_t i = 1; i < report->changes.size(); ++i)
    EXPECT_GE(std::abs(report->changes[i - 1].saved_ms()), std::abs(report->changes[i].saved_ms()));
}

TEST_F(FusionReportTest, TheFilesCarryEveryPolicyAndEveryKernel) {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "tessel_fusion_report";
  std::filesystem::remove_all(dir);
  driver::write_fusion_report(*report, dir.string());
  nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "report.json"));
  ASSERT_EQ(j.at("policies").size(), 3u);
  EXPECT_EQ(j["policies"][2]["policy"], "default");
  EXPECT_EQ(j["policies"][0]["kernels"].size(), report->policies[0].kernels.size());
  EXPECT_TRUE(j["policies"][0]["kernels"][0].contains("roofline_percent"));
  std::string md = cli_test::read_file(dir / "report.md");
  EXPECT_NE(md.find("| policy | kernels | end to end ms"), std::string::npos) << md;
  EXPECT_NE(md.find("Fastest: "), std::string::npos) << md;
  std::string html = cli_test::read_file(dir / "report.html");
  size_t points = 0, kernels_with_flops = 0;
  for (size_t at = html.find("<circle cx"); at != std::string::npos; at = html.find("<circle cx", at + 1)) ++points;
  for (const driver::PolicyReport& p : report->policies)
    for (const driver::ReportKernel& k : p.kernels) kernels_with_flops += k.flops > 0 && k.median_ms > 0;
  EXPECT_EQ(points, kernels_with_flops + report->policies.size()) << "a point per kernel, one per legend entry";
  EXPECT_EQ(html.find("<script"), std::string::npos) << "no script: the page opens from disk anywhere";
  EXPECT_EQ(html.find("http"), std::string::npos) << "nothing fetched from the network";
}

TEST(FusionReportCli, WritesTheReportOrRefusesBadOptions) {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "tessel_fusion_report_cli";
  std::filesystem::remove_all(dir);
  std::string env = "TESSEL_CACHE=" + cli_test::quote(cache_dir());
  cli_test::Result ok = cli_test::run_tessel_line(
      "fusion-report " + cli_test::quote(example()) + " --input-shape image=1x1x28x28 --policies none,default "
      "--repeat 2 -o " + cli_test::quote(dir.string()), env);
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(cli_test::contains(ok.out, "| default |")) << ok.out;
  EXPECT_TRUE(cli_test::contains(ok.err, "[2/2] fusion default")) << ok.err;
  for (const char* f : {"report.md", "report.json", "report.html"}) EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  cli_test::expect_user_error(cli_test::run_tessel({"fusion-report", example(), "--input-shape", "image=1x1x28x28"}),
                              "fusion-report needs -o DIR");
  cli_test::expect_user_error(cli_test::run_tessel({"fusion-report", example(), "--policies", "none,greedy", "-o",
                                                    dir.string()}),
                              "unknown fusion policy 'greedy'");
}

}  // namespace
}  // namespace tessel
