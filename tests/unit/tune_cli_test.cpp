// `tessel tune` end to end, as a user runs it: a short session on the tiny
// CNN writes a log that `compile --tuning-log` applies and `check` passes; a
// log is never appended to silently, `--resume` continues it, Ctrl-C keeps
// what was measured, and a corrupt or foreign log is reported.
#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "src/driver/tuned_schedules.h"
#include "tuner/log/tuning_log.h"

#include "tests/unit/cli_runner.h"
#include "tests/unit/tune_cli_util.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using cli_test::contains;
using cli_test::expect_user_error;
using cli_test::quote;
using cli_test::Result;
using cli_test::run_tessel;
using cli_test::run_tessel_line;
using cli_test::TempDir;

using tune_cli_test::kTinyCnn;
using tune_cli_test::lines_of;
using tune_cli_test::measured_of;
using tune_cli_test::tune_args;

// N in the session's "6 kernels, T tasks (N of them only 2 convs in other
// layouts have)", checked against T; 0 when the line is missing or off.
size_t alternative_tasks(const std::string& err) {
  std::smatch m;
  static const std::regex line(
      R"(6 kernels, (\d+) tasks \((\d+) of them only 2 convs in other layouts have\))");
  if (!std::regex_search(err, m, line)) return 0;
  size_t tasks = std::stoul(m[1]), alternatives = std::stoul(m[2]);
  EXPECT_EQ(tasks, 6 + alternatives) << m[0];
  return alternatives;
}

// Every record that measured alone as its task's new applied best was timed
// again beside the default, and ranks by that.
void expect_new_bests_timed_beside_the_default(const fs::path& log) {
  std::map<std::string, double> default_ms, best_ms;
  for (const tune::TuningRecord& r : tune::read_tuning_log(log.string(), "", "").records) {
    if (!r.ok()) continue;
    if (r.round == 0) {
      default_ms[r.task] = best_ms[r.task] = r.median_ms();
      continue;
    }
    double d = default_ms.at(r.task);
    if (r.median_ms() < d * (1 - driver::kMinTunedGain) && r.median_ms() < best_ms.at(r.task)) {
      EXPECT_TRUE(r.vs_default) << "round " << r.round << " of " << r.task << " in " << r.median_ms()
                                << " ms";
    }
    best_ms[r.task] = std::min(best_ms[r.task], r.time_ms(d));
  }
}

TEST(TuneCli, ATinySessionWritesALogThatCompileAndCheckApply) {
  TempDir dir;
  fs::path log = dir / "tiny.jsonl", events = dir / "events.jsonl";
  std::vector<std::string> args = tune_args(log, 24);
  args.insert(args.end(), {"--events", events.string()});
  Result tune = run_tessel(args);
  ASSERT_EQ(tune.code, 0) << tune.out << tune.err;
  EXPECT_TRUE(contains(tune.err, "default schedules")) << tune.err;  // the task table first
  EXPECT_TRUE(contains(tune.err, "[24/24 trials]")) << tune.err;
  EXPECT_TRUE(contains(tune.out, "estimated end to end")) << tune.out;
  std::vector<std::string> records = measured_of(log);
  ASSERT_EQ(records.size(), 24u);
  for (const std::string& r : lines_of(log)) EXPECT_TRUE(contains(r, "\"target\":\"llvm -mcpu=")) << r;
  expect_new_bests_timed_beside_the_default(log);
  // Its two convs were also compiled in their other layouts: 6 tasks and
  // those only the other layouts have (how many depends on the CPU's vector
  // width), each measured at least with its default schedule, and a decision per conv.
  size_t alternatives = alternative_tasks(tune.err);
  EXPECT_GE(alternatives, 1u) << tune.err;
  // Then its decisions checked in the model: a record per tuned schedule or
  // re-laid-out conv, after the layout decisions.
  std::vector<std::string> lines = lines_of(log);
  size_t checks = size_t(std::count_if(lines.begin(), lines.end(),
                                       [](const std::string& l) { return contains(l, "{\"in_model\":{"); }));
  ASSERT_EQ(lines.size(), 26u + checks);
  EXPECT_TRUE(contains(lines[25], "{\"layout\":{\"choice\":")) << lines[25];
  EXPECT_TRUE(contains(tune.out, "conv layouts: 2 convs measured in other layouts")) << tune.out;
  EXPECT_TRUE(contains(tune.err, "in the model, pass 1: default ")) << tune.err;
  EXPECT_TRUE(contains(tune.out, "in the model (the two libraries run in alternation): default "))
      << tune.out;
  EXPECT_TRUE(contains(tune.out, " of " + std::to_string(checks) + " decisions left out")) << tune.out;
  // The summary lists the model's tasks first, the alternatives' after.
  // So does the table of default schedules the session prints first.
  for (const std::string& text : {tune.out, tune.err}) {
    std::string runs_column;  // each task row's runs, in order: "1" or "alt"
    std::istringstream table(text);
    for (std::string line; std::getline(table, line) && line.rfind("estimated", 0) != 0;) {
      std::istringstream row(line);
      std::string key, group, runs;
      if (row >> key >> group >> runs && key.size() == 16) runs_column += runs == "alt" ? 'a' : 'm';
    }
    EXPECT_EQ(runs_column, "mmmmmm" + std::string(alternatives, 'a')) << text;
  }
  std::vector<std::string> event_lines = lines_of(events);
  ASSERT_GE(event_lines.size(), 3u);
  EXPECT_TRUE(contains(event_lines.front(), "\"event\":\"start\""));
  EXPECT_TRUE(contains(event_lines.back(), "\"event\":\"end\""));
  EXPECT_TRUE(contains(event_lines.back(), "\"in_model\":{\"default_ms\":")) << event_lines.back();

  Result compile = run_tessel({"compile", kTinyCnn, "--input-shape", "image=1x1x28x28", "--tuning-log",
                               log.string(), "-o", (dir / "tiny.so").string()});
  ASSERT_EQ(compile.code, 0) << compile.err;
  EXPECT_TRUE(contains(compile.out, "6 kernels (fusion default, schedule default, 6 tuned)")) << compile.out;
  EXPECT_TRUE(contains(compile.err, "layout decisions for 2 convs")) << compile.err;
  Result check = run_tessel({"check", kTinyCnn, "--input-shape", "image=1x1x28x28", "--tuning-log", log.string(),
                             "--per-kernel"});
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  EXPECT_TRUE(contains(check.out, "check passed")) << check.out;
  Result report = run_tessel({"tune-report", log.string(), "-o", (dir / "report").string()});
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_TRUE(contains(report.out, "24 trials, " + std::to_string(6 + alternatives) + " tasks"))
      << report.out;
  EXPECT_TRUE(contains(report.out, "conv layouts: 2 convs")) << report.out;
  EXPECT_EQ(contains(report.out, "checked in the model: " + std::to_string(checks) + " decisions"),
            checks > 0)
      << report.out;
  for (const char* file : {"tasks.csv", "curve.csv", "accuracy.csv", "curve.svg", "layouts.csv"})
    EXPECT_TRUE(fs::exists(dir / "report" / file)) << file;
  EXPECT_EQ(lines_of(dir / "report" / "curve.csv").size(), 25u);
  std::vector<std::string> layouts = lines_of(dir / "report" / "layouts.csv");
  ASSERT_EQ(layouts.size(), 3u);  // the header and a row per conv
  EXPECT_EQ(layouts[0], "conv,choice,default_ms,chosen_ms,measured");
  EXPECT_TRUE(contains(layouts[1], "\"conv 1x")) << layouts[1];
}

TEST(TuneCli, ALogIsContinuedOnlyWithResume) {
  TempDir dir;
  fs::path log = dir / "resume.jsonl";
  std::vector<std::string> unchecked = tune_args(log, 10);
  unchecked.push_back("--no-model-check");
  Result first = run_tessel(unchecked);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_FALSE(contains(first.err, "in the model")) << first.err;
  for (const std::string& line : lines_of(log)) EXPECT_FALSE(contains(line, "in_model")) << line;
  size_t alternatives = alternative_tasks(first.err);
  expect_user_error(run_tessel(tune_args(log, 16)), "pass --resume to continue");
  EXPECT_EQ(measured_of(log).size(), 10u);
  std::vector<std::string> args = tune_args(log, 16);
  args.push_back("--resume");
  Result resumed = run_tessel(args);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_TRUE(contains(resumed.err, "resumed 10 records")) << resumed.err;
  std::vector<std::string> records = measured_of(log);
  EXPECT_EQ(records.size(), 16u);
  // The default schedules of the model's 6 tasks and the convs' other
  // layouts' were measured by the first session, not again.
  size_t defaults = 0;
  for (const std::string& r : records) defaults += contains(r, "\"round\":0");
  EXPECT_EQ(defaults, 6 + alternatives);
}

TEST(TuneCli, AnInterruptKeepsWhatWasMeasured) {
  TempDir dir;
  fs::path log = dir / "interrupted.jsonl", code = dir / "code";
  std::string line;
  for (const std::string& a : tune_args(log, 100000)) line += " " + quote(a);
  // SIGINT to tessel alone, as Ctrl-C would, once it has measured a few
  // candidates (however slow the machine), then its exit code.
  std::string script = quote(TESSEL_BINARY) + line + " >/dev/null 2>&1 & pid=$!; for i in $(seq 600); do " +
                       "[ \"$(cat " + quote(log.string()) + " 2>/dev/null | wc -l)\" -ge 3 ] && break; sleep 0.2; done; " +
                       "kill -INT $pid; wait $pid; echo $? > " + quote(code.string());
  ASSERT_EQ(std::system(("bash -c " + quote(script)).c_str()), 0);
  EXPECT_EQ(cli_test::read_file(code), "130\n");
  std::vector<std::string> records = lines_of(log);
  EXPECT_GE(records.size(), 3u);
  EXPECT_LT(records.size(), 100000u);
  for (const std::string& rec : records) EXPECT_EQ(rec.back(), '}') << rec;
}

TEST(TuneCli, ACorruptOrForeignLogIsReported) {
  TempDir dir;
  fs::path log = dir / "tiny.jsonl";
  ASSERT_EQ(run_tessel(tune_args(log, 8)).code, 0);
  std::vector<std::string> records = measured_of(log);
  auto write = [&](const fs::path& path, const std::vector<std::string>& lines) {
    std::ofstream out(path);
    for (const std::string& l : lines) out << l << "\n";
  };
  std::vector<std::string> corrupt = records;
  corrupt[3] = "{\"task\": 12";
  write(dir / "corrupt.jsonl", corrupt);
  expect_user_error(run_tessel({"compile", kTinyCnn, "--input-shape", "image=1x1x28x28", "--tuning-log",
                                (dir / "corrupt.jsonl").string(), "-o", (dir / "x.so").string()}),
                    "corrupt.jsonl:4");
  std::vector<std::string> foreign;
  for (std::string r : records) {
    size_t at = r.find("\"target\":\"llvm -mcpu=");
    r.replace(at, std::string("\"target\":\"llvm -mcpu=").size(), "\"target\":\"llvm -mcpu=other-");
    foreign.push_back(r);
  }
  write(dir / "foreign.jsonl", foreign);
  Result compile = run_tessel({"compile", kTinyCnn, "--input-shape", "image=1x1x28x28", "--tuning-log",
                               (dir / "foreign.jsonl").string(), "-o", (dir / "y.so").string()});
  ASSERT_EQ(compile.code, 0) << compile.err;
  EXPECT_TRUE(contains(compile.err, "8 records for another target or compiler version left out")) << compile.err;
  EXPECT_TRUE(contains(compile.out, "0 tuned")) << compile.out;
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

TEST(TuneCli, ASavedCostModelStartsTheNextSession) {
  TempDir dir;
  fs::path model = dir / "model.xgb", events = dir / "events.jsonl";
  std::vector<std::string> first = tune_args(dir / "first.jsonl", 20);
  first.insert(first.end(), {"--save-cost-model", model.string()});
  ASSERT_EQ(run_tessel(first).code, 0);
  ASSERT_TRUE(fs::exists(model));
  std::vector<std::string> second = tune_args(dir / "second.jsonl", 14);
  second.insert(second.end(), {"--cost-model", model.string(), "--events", events.string()});
  Result r = run_tessel(second);
  ASSERT_EQ(r.code, 0) << r.err;
  // Its very first round was ranked by the loaded model, so the round reports its accuracy.
  std::vector<std::string> rounds;
  for (std::string& line : lines_of(events))
    if (contains(line, "\"event\":\"round\"")) rounds.push_back(std::move(line));
  ASSERT_GE(rounds.size(), 1u);
  EXPECT_FALSE(contains(rounds[0], "\"model_accuracy\":null")) << rounds[0];
  fs::path bad = dir / "bad.xgb";
  std::ofstream(bad) << "not a model\n";
  std::vector<std::string> third = tune_args(dir / "third.jsonl", 8);
  third.insert(third.end(), {"--cost-model", bad.string()});
  expect_user_error(run_tessel(third), "bad.xgb");
}

}  // namespace
}  // namespace tessel
