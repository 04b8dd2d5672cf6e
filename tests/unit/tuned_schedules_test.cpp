// What `compile --tuning-log` takes from a log (src/driver/tuned_schedules.h):
// per task, the fastest record when it beat the default schedule by the
// margin, else the default's; a record timed beside the default ranks by
// that ratio, not by its own median measured at another moment.
#include "src/driver/tuned_schedules.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <sstream>

#include "src/driver/targets.h"
#include "src/driver/tune_session.h"
#include "tuner/log/tuning_log.h"

namespace tessel::driver {
namespace {

class TunedSchedulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() / ("tessel_tuned_" + std::to_string(getpid()) + ".jsonl"))
                .string();
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // A record of `task` measured in `ms` by the search's round `round`.
  void add(const std::string& task, const std::string& name, double ms, int64_t round,
           std::optional<double> vs_default = std::nullopt, const std::string& version = compiler_version()) {
    tune::TuningRecord r;
    r.task = task;
    r.target = log_target(host_);
    r.compiler_version = version;
    r.trace = R"({"name":")" + name + R"("})";
    r.times_ms = {ms};
    r.round = round;
    r.vs_default = vs_default;
    tune::TuningLogWriter(path_).append(r);
  }
  // A check in the model of `task`'s schedule `name`, or of `conv` laid out as `form`.
  void check(const std::string& task, const std::string& name, bool kept) {
    tune::InModelRecord r = in_model(kept);
    r.task = task;
    r.trace = R"({"name":")" + name + R"("})";
    tune::TuningLogWriter(path_).append(r);
  }
  void check_layout(const std::string& conv, const std::string& form, bool kept) {
    tune::InModelRecord r = in_model(kept);
    r.conv = conv;
    r.form = form;
    tune::TuningLogWriter(path_).append(r);
  }
  void decide_layout(const std::string& conv, const std::string& form) {
    tune::LayoutRecord l;
    l.target = log_target(host_);
    l.compiler_version = compiler_version();
    l.conv = conv;
    l.measured = {{"flat", 48, 1.0}, {form, 1, 0.8}};
    l.choice = 1;
    tune::TuningLogWriter(path_).append(l);
  }
  tune::InModelRecord in_model(bool kept) {
    tune::InModelRecord r;
    r.target = log_target(host_);
    r.compiler_version = compiler_version();
    r.default_ms = 1.0;
    r.tuned_ms = kept ? 0.9 : 1.1;
    r.kept = kept;
    return r;
  }
  TunedSchedules load() {
    std::ostringstream notes;
    TunedSchedules out = load_tuned_schedules(path_, host_, notes);
    notes_ = notes.str();
    return out;
  }

  codegen::Target host_ = codegen::parse_target("llvm");
  std::string path_, notes_;
};

TEST_F(TunedSchedulesTest, TheFastestCandidateReplacesTheDefaultOnlyByTheMargin) {
  add("a", "a-default", 1.0, 0);
  add("a", "a-close", 0.99, 1);  // within the margin: noise
  add("b", "b-default", 1.0, 0);
  add("b", "b-close", 0.99, 1);
  add("b", "b-faster", 0.9, 2);
  TunedSchedules s = load();
  EXPECT_EQ(s.tasks.at("a").trace, R"({"name":"a-default"})");
  EXPECT_DOUBLE_EQ(s.tasks.at("a").best_ms, 1.0);
  EXPECT_EQ(s.tasks.at("b").trace, R"({"name":"b-faster"})");
  EXPECT_DOUBLE_EQ(s.tasks.at("b").best_ms, 0.9);
  EXPECT_NE(notes_.find("1 kept their default schedule"), std::string::npos) << notes_;
}

TEST_F(TunedSchedulesTest, ACandidateTimedBesideTheDefaultRanksByThatRatio) {
  add("a", "a-default", 1.0, 0);
  // Measured alone in a fast moment, beside the default it was no faster.
  add("a", "a-lucky", 0.8, 1, 1.01);
  add("b", "b-default", 1.0, 0);
  add("b", "b-lucky", 0.7, 1, 0.95);
  // Measured alone in a slow moment, beside the default it was the fastest.
  add("b", "b-unlucky", 0.9, 2, 0.85);
  TunedSchedules s = load();
  EXPECT_EQ(s.tasks.at("a").trace, R"({"name":"a-default"})");
  EXPECT_EQ(s.tasks.at("b").trace, R"({"name":"b-unlucky"})");
  EXPECT_DOUBLE_EQ(s.tasks.at("b").best_ms, 0.85);
}

// The version names the code generation's revision: a log measured by the
// same release before code generation changed is reported, not applied.
TEST_F(TunedSchedulesTest, ALogOfAnEarlierCodeGenerationIsReportedNotApplied) {
  EXPECT_EQ(compiler_version().rfind(tessel_version(), 0), 0u);
  EXPECT_NE(compiler_version(), tessel_version());
  add("a", "a-default", 1.0, 0, std::nullopt, tessel_version());
  add("a", "a-faster", 0.5, 1, std::nullopt, tessel_version());
  TunedSchedules s = load();
  EXPECT_TRUE(s.tasks.empty());
  EXPECT_NE(notes_.find("2 records for another target or compiler version left out"), std::string::npos)
      << notes_;
  EXPECT_NE(notes_.find(compiler_version()), std::string::npos) << notes_;
}

// The model check's verdicts: a schedule or layout it did not keep is left
// out while the log's decision is still the one it checked; the last check of
// a decision counts.
TEST_F(TunedSchedulesTest, ADecisionTheModelCheckDidNotKeepIsLeftOut) {
  add("a", "a-default", 1.0, 0);
  add("a", "a-faster", 0.8, 1);
  check("a", "a-faster", /*kept=*/false);
  add("b", "b-default", 1.0, 0);
  add("b", "b-first", 0.9, 1);
  check("b", "b-first", false);
  add("b", "b-later", 0.8, 2);  // found after the check: not the schedule it left out
  add("c", "c-default", 1.0, 0);
  add("c", "c-faster", 0.8, 1);
  check("c", "c-faster", false);
  check("c", "c-faster", true);  // checked again in a later session
  decide_layout("conv x", "channels-last");
  check_layout("conv x", "channels-last", false);
  decide_layout("conv y", "channels-last");
  check_layout("conv y", "flat-pointwise", false);  // another layout than the decided one
  TunedSchedules s = load();
  EXPECT_EQ(s.tasks.at("a").trace, R"({"name":"a-default"})");
  EXPECT_FALSE(s.tasks.at("a").tuned);
  EXPECT_EQ(s.tasks.at("b").trace, R"({"name":"b-later"})");
  EXPECT_TRUE(s.tasks.at("b").tuned);
  EXPECT_EQ(s.tasks.at("c").trace, R"({"name":"c-faster"})");
  EXPECT_EQ(s.conv_layouts.count("conv x"), 0u);
  ASSERT_EQ(s.conv_layouts.count("conv y"), 1u);
  EXPECT_EQ(s.conv_layouts.at("conv y").form, lower::ConvForm::kChannelsLast);
  EXPECT_NE(notes_.find("2 decisions left out, slower in the model"), std::string::npos) << notes_;
}

}  // namespace
}  // namespace tessel::driver
