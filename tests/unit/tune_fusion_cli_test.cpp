// Fusion by measurement as a user runs it: `tessel tune --fusion tuned` on
// the tiny CNN tunes both sides of the one region where default and
// aggressive group otherwise (the classifier: Flatten+Gemm | Softmax against
// Flatten+Gemm+Softmax) and logs its decision; `compile --fusion tuned
// --tuning-log` applies whichever side the log chose, the result checks, and
// fusion-report compares it with the policies.
#include <algorithm>
#include <fstream>

#include "tests/unit/cli_runner.h"
#include "tests/unit/tune_cli_util.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using cli_test::contains;
using cli_test::expect_user_error;
using cli_test::Result;
using cli_test::run_tessel;
using cli_test::TempDir;
using tune_cli_test::kTinyCnn;
using tune_cli_test::lines_of;
using tune_cli_test::tune_args;

std::vector<std::string> compile_args(const fs::path& log, const fs::path& out) {
  return {"compile", kTinyCnn, "--input-shape", "image=1x1x28x28", "--fusion", "tuned",
          "--tuning-log", log.string(), "-o", out.string()};
}

// The log with its fusion decision's choice replaced.
fs::path with_choice(const fs::path& log, const std::string& choice, const fs::path& out) {
  std::ofstream o(out);
  for (std::string line : lines_of(log)) {
    for (const char* was : {"\"choice\":\"alternative\"", "\"choice\":\"base\""}) {
      size_t at = line.find(was);
      if (at != std::string::npos) line.replace(at, std::string(was).size(), "\"choice\":\"" + choice + "\"");
    }
    o << line << "\n";
  }
  return out;
}

TEST(TuneFusionCli, ASessionDecidesTheRegionAndCompileAppliesTheDecision) {
  TempDir dir;
  fs::path log = dir / "fusion.jsonl";
  std::vector<std::string> args = tune_args(log, 14);
  args.insert(args.end(),
              {"--fusion", "tuned", "--layouts", "default", "--events", (dir / "events.jsonl").string()});
  Result tune = run_tessel(args);
  ASSERT_EQ(tune.code, 0) << tune.out << tune.err;
  EXPECT_TRUE(contains(tune.err, "6 kernels, 7 tasks (1 of them only aggressive's groups in 1 fusion regions have)"))
      << tune.err;
  EXPECT_TRUE(contains(tune.out, "Flatten+Gemm | Softmax  ->  Flatten+Gemm+Softmax")) << tune.out;
  EXPECT_TRUE(contains(tune.out, "--fusion tuned -o model.so")) << tune.out;
  // The model check runs the tuned library against default's groups untuned.
  EXPECT_TRUE(contains(tune.err, "in the model, pass 1: default ")) << tune.err;
  std::vector<std::string> lines = lines_of(log);
  size_t checks = size_t(std::count_if(lines.begin(), lines.end(),
                                       [](const std::string& l) { return contains(l, "{\"in_model\":{"); }));
  ASSERT_EQ(lines.size(), 15u + checks);  // 14 measured candidates, the decision and the checks
  EXPECT_TRUE(contains(lines[14], "{\"fusion\":{\"alternative\":[")) << lines[14];
  size_t alternative_only = 0;
  for (const std::string& l : lines) alternative_only += contains(l, "\"alternative_only\":true");
  EXPECT_GE(alternative_only, 1u);  // the fused classifier's task: measured at least once
  std::vector<std::string> events = lines_of(dir / "events.jsonl");
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(contains(events.back(), "\"fusion\":[{\"choice\":")) << events.back();

  // Each choice the log could hold, applied.
  for (auto [choice, kernels, side] : {std::tuple{"alternative", "5 kernels", "1 as aggressive, 0 as default"},
                                       std::tuple{"base", "6 kernels", "0 as aggressive, 1 as default"}}) {
    fs::path chosen = with_choice(log, choice, dir / (std::string(choice) + ".jsonl"));
    Result compile = run_tessel(compile_args(chosen, dir / "tiny.so"));
    ASSERT_EQ(compile.code, 0) << compile.err;
    EXPECT_TRUE(contains(compile.out, std::string(kernels) + " (fusion tuned")) << compile.out;
    EXPECT_TRUE(contains(compile.out, side)) << compile.out;
    EXPECT_TRUE(contains(compile.err, "1 fusion decisions")) << compile.err;
    Result check = run_tessel({"check", kTinyCnn, "--input-shape", "image=1x1x28x28", "--fusion", "tuned",
                               "--tuning-log", chosen.string(), "--per-kernel"});
    EXPECT_EQ(check.code, 0) << check.out << check.err;
  }
  Result report = run_tessel({"tune-report", log.string(), "-o", (dir / "report").string()});
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_TRUE(contains(report.out, "Flatten+Gemm | Softmax  ->  Flatten+Gemm+Softmax")) << report.out;
  std::vector<std::string> decisions = lines_of(dir / "report" / "fusion.csv");
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_TRUE(contains(decisions[1], ",1,")) << decisions[1];  // the classifier runs once
  EXPECT_TRUE(contains(decisions[1], ",Flatten+Gemm | Softmax,Flatten+Gemm+Softmax,")) << decisions[1];
  // The granularity report puts the decided grouping beside the policies.
  Result granularity = run_tessel({"fusion-report", kTinyCnn, "--input-shape", "image=1x1x28x28", "--tuning-log",
                                   (dir / "alternative.jsonl").string(), "--policies", "default,tuned", "--repeat",
                                   "3", "-o", (dir / "fusion").string()});
  ASSERT_EQ(granularity.code, 0) << granularity.err;
  EXPECT_TRUE(contains(granularity.out, "| default | 6 |")) << granularity.out;
  EXPECT_TRUE(contains(granularity.out, "| tuned | 5 |")) << granularity.out;
}

TEST(TuneFusionCli, FusionTunedNeedsALogWithDecisions) {
  TempDir dir;
  expect_user_error(run_tessel({"compile", kTinyCnn, "--input-shape", "image=1x1x28x28", "--fusion", "tuned", "-o",
                                (dir / "x.so").string()}),
                    "fusion tuned is decided by a tuning log");
  // A log of a session without --fusion tuned: the region is undecided and keeps default's groups.
  fs::path log = dir / "plain.jsonl";
  ASSERT_EQ(run_tessel(tune_args(log, 6)).code, 0);
  Result compile = run_tessel(compile_args(log, dir / "y.so"));
  ASSERT_EQ(compile.code, 0) << compile.err;
  EXPECT_TRUE(contains(compile.out, "6 kernels (fusion tuned")) << compile.out;
  EXPECT_TRUE(contains(compile.out, "(1 not in the log: default's)")) << compile.out;
}

}  // namespace
}  // namespace tessel
