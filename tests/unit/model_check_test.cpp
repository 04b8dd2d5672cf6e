// The model check's verdicts (src/driver/model_check.h): each decision of a
// log judged by its kernels' times in place in the two libraries.
#include "src/driver/model_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "src/driver/tune_report.h"
#include "src/driver/tune_session.h"

namespace tessel::driver {
namespace {

using lower::ConvForm;
using lower::ConvLayout;

PlacedKernel kernel(const std::string& task, double ms,
                    std::vector<std::pair<std::string, ConvLayout>> convs = {}) {
  return {task, "group of " + task, std::move(convs), ms};
}

PlacedTimes library(std::vector<PlacedKernel> kernels) {
  PlacedTimes t;
  t.kernels = std::move(kernels);
  for (const PlacedKernel& k : t.kernels) t.end_to_end_ms += k.ms;
  return t;
}

const tune::InModelRecord* find(const std::vector<tune::InModelRecord>& records, const std::string& what) {
  for (const tune::InModelRecord& r : records)
    if ((r.is_layout() ? r.conv : r.task) == what) return &r;
  return nullptr;
}

// A task's kernels added up in each library (the model runs t2 twice): t1's
// tuned schedule lost in place, t2's won; t3 kept its default schedule and
// is not judged.
TEST(ModelCheck, AScheduleSlowerInPlaceIsNotKept) {
  PlacedTimes by_default =
      library({kernel("t1", 1.0), kernel("t2", 0.5), kernel("t3", 0.2), kernel("t2", 0.5)});
  PlacedTimes tuned = library({kernel("t1", 1.1), kernel("t2", 0.4), kernel("t3", 0.1), kernel("t2", 0.45)});
  std::set<std::string> checked;
  std::vector<tune::InModelRecord> records =
      judge_in_model(by_default, tuned, {{"t1", "A"}, {"t2", "B"}}, checked);
  ASSERT_EQ(records.size(), 2u);
  const tune::InModelRecord *t1 = find(records, "t1"), *t2 = find(records, "t2");
  ASSERT_TRUE(t1 && t2);
  EXPECT_FALSE(t1->kept);
  EXPECT_EQ(t1->trace, "A");
  EXPECT_DOUBLE_EQ(t1->default_ms, 1.0);
  EXPECT_DOUBLE_EQ(t1->tuned_ms, 1.1);
  EXPECT_TRUE(t2->kept);
  EXPECT_DOUBLE_EQ(t2->default_ms, 1.0);
  EXPECT_DOUBLE_EQ(t2->tuned_ms, 0.85);
}

// A conv laid out otherwise in the tuned library is judged by the kernels
// that compute it in each (their tasks differ: the lowered function
// changed); the re-laid-out kernel's tuned schedule counts for the layout,
// not on its own.
TEST(ModelCheck, AReLaidOutConvIsJudgedByTheKernelsThatComputeIt) {
  std::pair<std::string, ConvLayout> flat{"conv c", {ConvForm::kFlat, 48}},
      channels_last{"conv c", {ConvForm::kChannelsLast, 1}}, other{"conv d", {ConvForm::kFlat, 48}};
  PlacedTimes by_default =
      library({kernel("t1", 1.0, {flat}), kernel("t2", 0.3, {other}), kernel("t1", 1.0, {flat})});
  PlacedTimes tuned = library(
      {kernel("t9", 1.2, {channels_last}), kernel("t2", 0.3, {other}), kernel("t9", 1.2, {channels_last})});
  std::set<std::string> checked;
  std::vector<tune::InModelRecord> records = judge_in_model(by_default, tuned, {{"t9", "X"}}, checked);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(records[0].is_layout());
  EXPECT_EQ(records[0].conv, "conv c");
  EXPECT_EQ(records[0].form, "channels-last");
  EXPECT_EQ(records[0].align, 1);
  EXPECT_DOUBLE_EQ(records[0].default_ms, 2.0);
  EXPECT_DOUBLE_EQ(records[0].tuned_ms, 2.4);
  EXPECT_FALSE(records[0].kept);
}

// A decision judged once is not judged again by the next pass; one whose
// kernels the libraries do not run as often (or at all) is not judged.
TEST(ModelCheck, ADecisionIsJudgedOnceAndOnlyOnMatchingKernels) {
  PlacedTimes by_default = library({kernel("t1", 1.0), kernel("t2", 0.5)});
  PlacedTimes tuned = library({kernel("t1", 0.9), kernel("t2", 0.4), kernel("t2", 0.4)});
  std::set<std::string> checked;
  TunedTraces traces{{"t1", "A"}, {"t2", "B"}, {"t7", "C"}};
  std::vector<tune::InModelRecord> first = judge_in_model(by_default, tuned, traces, checked);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].task, "t1");
  EXPECT_TRUE(judge_in_model(by_default, tuned, traces, checked).empty());
  // Another trace of t1 (a later session's best) is another decision.
  traces["t1"] = "A2";
  EXPECT_EQ(judge_in_model(by_default, tuned, traces, checked).size(), 1u);
}

// The session's summary (and tune-report's) estimates what compile applies:
// a schedule or layout the last check left out at its default's time.
TEST(ModelCheck, TheEstimateCountsWhatWasLeftOutAtTheDefault) {
  TuneSummary s;
  for (const char* key : {"a", "b"}) {
    TunedTask t{key, "", 1, 0};
    t.default_ms = 1.0;
    t.best_ms = 0.8;
    s.tasks.push_back(t);
  }
  tune::LayoutRecord l;
  l.conv = "conv c";
  l.measured = {{"flat", 48, 2.0}, {"channels-last", 1, 1.5}};
  l.choice = 1;
  s.layouts = {l};
  EXPECT_DOUBLE_EQ(s.tuned_ms(), 0.8 + 0.8 - 0.5);
  tune::InModelRecord a, a_again, c;
  a.task = a_again.task = "a";
  a_again.kept = true;  // an earlier check, then a later one that left it out
  c.conv = "conv c";
  c.form = "channels-last";
  apply_model_checks(s, {a_again, a, c});
  EXPECT_TRUE(s.tasks[0].left_out);
  EXPECT_FALSE(s.tasks[1].left_out);
  EXPECT_EQ(s.layouts[0].choice, 0u);
  EXPECT_DOUBLE_EQ(s.tuned_ms(), 1.0 + 0.8);
}

// tune-report over a log with checks: each decision's last check in
// DIR/in_model.csv, those left out listed, the estimate at the default.
TEST(ModelCheck, TheReportListsEachDecisionsLastCheck) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tessel_checks_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string log = (dir / "log.jsonl").string();
  {
    tune::TuningLogWriter writer(log);
    for (auto [trace, ms, round] : {std::tuple{"d", 1.0, 0}, std::tuple{"t", 0.8, 1}}) {
      tune::TuningRecord r;
      r.task = "a1";
      r.target = "llvm -mcpu=znver3";
      r.compiler_version = "0.1.0";
      r.trace = std::string(R"({"name":")") + trace + R"("})";
      r.times_ms = {ms};
      r.round = round;
      writer.append(r);
    }
    tune::InModelRecord check;
    check.target = "llvm -mcpu=znver3";
    check.compiler_version = "0.1.0";
    check.task = "a1";
    check.trace = R"({"name":"t"})";
    check.default_ms = 1.0;
    check.tuned_ms = 0.9;
    check.kept = true;
    writer.append(check);
    check.tuned_ms = 1.2;  // checked again: slower this time
    check.kept = false;
    writer.append(check);
  }
  TuneReport report = make_tune_report(log);
  ASSERT_EQ(report.checks.size(), 1u);
  EXPECT_FALSE(report.checks[0].kept);
  EXPECT_DOUBLE_EQ(report.summary.tuned_ms(), 1.0);
  std::ostringstream printed;
  print_tune_report(report, printed);
  EXPECT_NE(printed.str().find("checked in the model: 1 decisions, 1 left out"), std::string::npos)
      << printed.str();
  EXPECT_NE(printed.str().find("task a1: 1.2000 ms in place, default 1.0000 ms"), std::string::npos)
      << printed.str();
  write_tune_report(report, (dir / "report").string());
  std::ifstream csv(dir / "report" / "in_model.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(header, "decision,key,layout,default_ms,tuned_ms,kept");
  EXPECT_EQ(row, "task,a1,,1,1.2,0");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessel::driver
