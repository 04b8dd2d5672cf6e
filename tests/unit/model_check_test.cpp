// The model check's verdicts (src/driver/model_check.h): each decision of a
// log judged by its kernels' times in place in the two libraries.
#include "src/driver/model_check.h"

#include "src/driver/tune_session.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tessel::driver
