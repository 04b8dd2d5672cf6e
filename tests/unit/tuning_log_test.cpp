// The tuning log (tuner/log/tuning_log.h): records round-trip through a
// line; appends survive a writer killed with SIGKILL between and during
// writes (the record in flight is the most that is lost, and appending goes
// on); a corrupt line is an error naming its line; records of another target
// or compiler version are kept apart.
#include "tuner/log/tuning_log.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tessel/error.h"

namespace tessel::tune {
namespace {

std::string temp_log(const std::string& name) {
  std::string path = (std::filesystem::temp_directory_path() / ("tessel_" + std::to_string(getpid()) + "_" + name))
                         .string();
  std::filesystem::remove(path);
  return path;
}

TuningRecord record(const std::string& task, const std::string& target, const std::string& trace,
                    std::vector<double> times, const std::string& error) {
  TuningRecord r;
  r.task = task;
  r.target = target;
  r.compiler_version = "0.1.0";
  r.trace = trace;
  r.times_ms = std::move(times);
  r.error = error;
  return r;
}

TuningRecord measured(const std::string& task, double ms) {
  TuningRecord r = record(task, "llvm -mcpu=znver4", R"({"insts":[]})", {ms, ms * 1.1}, "");
  r.knobs = {{"b0.rows", 4}, {"b0.cols", 32}};
  r.round = 3;
  r.predicted = 0.75;
  r.flops = 1.5e6;
  r.weight = 2;
  r.alternative_only = task == "9f3c";
  r.vs_default = 0.875;
  r.registers = 40;
  r.spill_bytes = 16;
  return r;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(TuningLog, ARecordRoundTripsThroughALine) {
  TuningRecord failed = record("ab12", "llvm", R"({"insts":[{"kind":"split"}]})", {}, "timed out after 10 s");
  for (const TuningRecord& r : {measured("9f3c", 0.25), failed}) {
    TuningRecord back = record_from_line(to_line(r));
    EXPECT_EQ(back.task, r.task);
    EXPECT_EQ(back.target, r.target);
    EXPECT_EQ(back.compiler_version, r.compiler_version);
    EXPECT_EQ(back.trace, r.trace);
    EXPECT_EQ(back.times_ms, r.times_ms);
    EXPECT_EQ(back.error, r.error);
    EXPECT_EQ(back.knobs, r.knobs);
    EXPECT_EQ(back.round, r.round);
    EXPECT_EQ(back.predicted, r.predicted);
    EXPECT_EQ(back.flops, r.flops);
    EXPECT_EQ(back.weight, r.weight);
    EXPECT_EQ(back.alternative_only, r.alternative_only);
    EXPECT_EQ(back.vs_default, r.vs_default);
    EXPECT_EQ(back.registers, r.registers);
    EXPECT_EQ(back.spill_bytes, r.spill_bytes);
    EXPECT_EQ(back.ok(), r.error.empty());
  }
  EXPECT_FALSE(record_from_line(to_line(failed)).vs_default);
  EXPECT_DOUBLE_EQ(measured("t", 0.25).median_ms(), 0.25 * 1.05);
  // Timed beside the default, a record ranks by the default's time scaled;
  // without a default's time, or without that timing, by its median.
  EXPECT_DOUBLE_EQ(measured("t", 0.25).time_ms(0.4), 0.4 * 0.875);
  EXPECT_DOUBLE_EQ(measured("t", 0.25).time_ms(0), 0.25 * 1.05);
  TuningRecord alone = measured("t", 0.25);
  alone.vs_default.reset();
  EXPECT_DOUBLE_EQ(alone.time_ms(0.4), 0.25 * 1.05);
}

TEST(TuningLog, WhatIsNotARecordIsRefusedWithItsReason) {
  const char* bad[] = {
      "nonsense",
      "[1, 2]",
      R"({"task":"a"})",
      R"({"task":"a","target":"llvm","version":"1","trace":{},"times_ms":[-1],"error":""})",
      R"({"task":"a","target":"llvm","version":"1","trace":{},"times_ms":[],"error":""})",
      R"({"task":"","target":"llvm","version":"1","trace":{},"times_ms":[1],"error":""})",
      R"({"task":"a","target":7,"version":"1","trace":{},"times_ms":[1],"error":""})",
      R"({"task":"a","target":"llvm","version":"1","trace":{},"times_ms":[1],"error":"","vs_default":0})",
      R"({"task":"a","target":"llvm","version":"1","trace":{},"times_ms":[1],"error":"","vs_default":-2})",
      R"({"task":"a","target":"llvm","version":"1","trace":{},"times_ms":[1],"error":"","vs_default":"x"})",
      R"({"task":"a","target":"cuda","version":"1","trace":{},"times_ms":[1],"error":"","registers":-1})"};
  for (const char* line : bad) EXPECT_THROW(record_from_line(line), UserError) << line;
}

TEST(TuningLog, AppendedRecordsAreReadBackInOrder) {
  std::string path = temp_log("append.jsonl");
  {
    TuningLogWriter log(path);
    log.append(measured("a", 1.0));
    log.append(measured("b", 2.0));
  }
  TuningLogWriter again(path);  // a resumed session appends after what is there
  again.append(measured("c", 3.0));
  TuningLog read = read_tuning_log(path, "llvm -mcpu=znver4", "0.1.0");
  ASSERT_EQ(read.records.size(), 3u);
  EXPECT_EQ(read.records[0].task, "a");
  EXPECT_EQ(read.records[2].task, "c");
  EXPECT_FALSE(read.dropped_partial_line);
  std::filesystem::remove(path);
}

// A corrupt line in the middle is an error with the file and line number.
TEST(TuningLog, ACorruptLineIsAnErrorNamingItsLine) {
  std::string path = temp_log("corrupt.jsonl");
  write_file(path, to_line(measured("a", 1.0)) + "\n{\"task\": oops\n" + to_line(measured("b", 1.0)) + "\n");
  try {
    read_tuning_log(path, "", "");
    FAIL() << "a corrupt line was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2: not a tuning record"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_tuning_log(temp_log("missing.jsonl"), "", ""), UserError);
  EXPECT_TRUE(read_tuning_log(temp_log("missing.jsonl"), "", "", /*missing_ok=*/true).records.empty());
  std::filesystem::remove(path);
}

TEST(TuningLog, RecordsOfAnotherTargetOrVersionAreKeptApart) {
  std::string path = temp_log("foreign.jsonl");
  TuningRecord other_target = measured("a", 1.0), other_version = measured("b", 1.0);
  other_target.target = "cuda -arch=sm_90";
  other_version.compiler_version = "0.0.9";
  {
    TuningLogWriter log(path);
    for (const TuningRecord& r : {measured("c", 1.0), other_target, other_version}) log.append(r);
  }
  TuningLog read = read_tuning_log(path, "llvm -mcpu=znver4", "0.1.0");
  ASSERT_EQ(read.records.size(), 1u);
  EXPECT_EQ(read.records[0].task, "c");
  EXPECT_EQ(read.foreign.size(), 2u);
  std::filesystem::remove(path);
}

FusionRecord decision(const std::string& target) {
  FusionRecord f;
  f.target = target;
  f.compiler_version = "0.1.0";
  f.base = {"a1", "b2"};
  f.alternative = {"c3"};
  f.base_ms = 0.31;
  f.alternative_ms = 0.22;
  f.take_alternative = true;
  f.runs = 3;
  f.base_ops = "Flatten+Gemm | Softmax";
  f.alternative_ops = "Flatten+Gemm+Softmax";
  return f;
}

// Fusion decisions share the log with the measured records: they read back
// apart from them, those of another target are counted, and a decision that
// does not say what it chose is an error naming its line.
TEST(TuningLog, FusionDecisionsReadBackBesideTheRecords) {
  std::string path = temp_log("fusion.jsonl");
  {
    TuningLogWriter log(path);
    log.append(measured("a1", 1.0));
    log.append(decision("llvm -mcpu=znver4"));
    log.append(decision("llvm -mcpu=znver3"));
  }
  TuningLog read = read_tuning_log(path, "llvm -mcpu=znver4", "0.1.0");
  ASSERT_EQ(read.records.size(), 1u);
  ASSERT_EQ(read.fusion.size(), 1u);
  EXPECT_EQ(read.foreign_fusion, 1u);
  const FusionRecord& f = read.fusion[0];
  EXPECT_EQ(f.base, (std::vector<std::string>{"a1", "b2"}));
  EXPECT_EQ(f.alternative, std::vector<std::string>{"c3"});
  EXPECT_DOUBLE_EQ(f.base_ms, 0.31);
  EXPECT_DOUBLE_EQ(f.alternative_ms, 0.22);
  EXPECT_TRUE(f.take_alternative);
  EXPECT_EQ(f.runs, 3);
  EXPECT_EQ(f.alternative_ops, "Flatten+Gemm+Softmax");

  std::string line = to_line(decision("llvm"));
  std::string chosen = "\"choice\":\"alternative\"";
  std::string undecided = line.replace(line.find(chosen), chosen.size(), "\"choice\":\"maybe\"");
  ASSERT_NE(undecided.find("maybe"), std::string::npos) << undecided;
  write_file(path, to_line(measured("a1", 1.0)) + "\n" + undecided + "\n");
  try {
    read_tuning_log(path, "", "");
    FAIL() << "a decision without a choice was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(":2: not a tuning record: field \"choice\""), std::string::npos) << e.what();
  }
  for (const char* bad : {R"({"fusion":{"base":[],"alternative":["c"],"base_ms":1,"alternative_ms":1,"choice":"base"},"target":"llvm","version":"1"})",
                          R"({"fusion":{"base":["a"],"alternative":["c"],"base_ms":0,"alternative_ms":1,"choice":"base"},"target":"llvm","version":"1"})",
                          R"({"fusion":7,"target":"llvm","version":"1"})"})
    EXPECT_THROW(fusion_record_from_line(bad), UserError) << bad;
  std::filesystem::remove(path);
}

// Layout decisions too: read back apart, another target's counted, a
// choice that is not one of the measured layouts an error naming its line.
TEST(TuningLog, LayoutDecisionsReadBackBesideTheRecords) {
  std::string path = temp_log("layout.jsonl");
  LayoutRecord l;
  l.target = "llvm -mcpu=znver4";
  l.compiler_version = "0.1.0";
  l.conv = "conv 1x64x56x56 k3x3 s1x1 d1x1 p1,1,1,1 g1 c64";
  l.measured = {{"flat", 48, 0.91}, {"channels-last", 1, 0.84}};
  l.choice = 1;
  LayoutRecord foreign = l;
  foreign.target = "llvm -mcpu=znver3";
  {
    TuningLogWriter log(path);
    log.append(measured("a1", 1.0));
    log.append(l);
    log.append(foreign);
  }
  TuningLog read = read_tuning_log(path, "llvm -mcpu=znver4", "0.1.0");
  ASSERT_EQ(read.records.size(), 1u);
  ASSERT_EQ(read.layouts.size(), 1u);
  EXPECT_EQ(read.foreign_layouts, 1u);
  EXPECT_EQ(read.layouts[0].conv, l.conv);
  ASSERT_EQ(read.layouts[0].measured.size(), 2u);
  EXPECT_EQ(read.layouts[0].measured[1].form, "channels-last");
  EXPECT_EQ(read.layouts[0].measured[1].align, 1);
  EXPECT_DOUBLE_EQ(read.layouts[0].measured[1].ms, 0.84);
  EXPECT_EQ(read.layouts[0].choice, 1u);

  l.choice = 2;
  write_file(path, to_line(measured("a1", 1.0)) + "\n" + to_line(l) + "\n");
  try {
    read_tuning_log(path, "", "");
    FAIL() << "a choice out of range was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(":2: not a tuning record: field \"choice\""), std::string::npos)
        << e.what();
  }
  for (
      const char* bad :
      {R"({"layout":{"conv":"c","choice":0,"measured":[{"form":"flat","align":1,"ms":1}]},"target":"llvm","version":"1"})",
       R"({"layout":{"conv":"c","choice":0,"measured":[{"form":"flat","align":0,"ms":1},{"form":"direct","align":1,"ms":1}]},"target":"llvm","version":"1"})",
       R"({"layout":{"choice":0,"measured":[]},"target":"llvm","version":"1"})"})
    EXPECT_THROW(layout_record_from_line(bad), UserError) << bad;
  std::filesystem::remove(path);
}

// Checks in the model read back apart, each naming a task and its trace or a
// conv and its layout; one naming both or neither, or without its times or
// verdict, is an error.
TEST(TuningLog, ChecksInTheModelReadBackBesideTheRecords) {
  std::string path = temp_log("in_model.jsonl");
  InModelRecord task;
  task.target = "llvm -mcpu=znver4";
  task.compiler_version = "0.1.0";
  task.task = "9f3c";
  task.trace = R"({"steps":[]})";
  task.default_ms = 1.10;
  task.tuned_ms = 1.23;
  InModelRecord conv = task;
  conv.task = conv.trace = "";
  conv.conv = "conv 1x64x56x56 k3x3 s1x1 d1x1 p1,1,1,1 g1 c64";
  conv.form = "channels-last";
  conv.align = 1;
  conv.kept = true;
  InModelRecord foreign = conv;
  foreign.compiler_version = "0.0.9";
  {
    TuningLogWriter log(path);
    log.append(measured("a1", 1.0));
    for (const InModelRecord& r : {task, conv, foreign}) log.append(r);
  }
  TuningLog read = read_tuning_log(path, "llvm -mcpu=znver4", "0.1.0");
  EXPECT_EQ(read.records.size(), 1u);
  ASSERT_EQ(read.in_model.size(), 2u);
  EXPECT_EQ(read.foreign_in_model, 1u);
  const InModelRecord &t = read.in_model[0], &c = read.in_model[1];
  EXPECT_FALSE(t.is_layout());
  EXPECT_EQ(t.task, "9f3c");
  EXPECT_EQ(t.trace, R"({"steps":[]})");
  EXPECT_DOUBLE_EQ(t.default_ms, 1.10);
  EXPECT_DOUBLE_EQ(t.tuned_ms, 1.23);
  EXPECT_FALSE(t.kept);
  EXPECT_TRUE(c.is_layout());
  EXPECT_EQ(c.conv, conv.conv);
  EXPECT_EQ(c.form, "channels-last");
  EXPECT_EQ(c.align, 1);
  EXPECT_TRUE(c.kept);
  for (
      const char* bad :
      {R"({"in_model":{"task":"a","trace":{},"conv":"c","form":"flat","default_ms":1,"tuned_ms":1,"kept":true},"target":"llvm","version":"1"})",
       R"({"in_model":{"default_ms":1,"tuned_ms":1,"kept":true},"target":"llvm","version":"1"})",
       R"({"in_model":{"task":"a","trace":{},"default_ms":0,"tuned_ms":1,"kept":true},"target":"llvm","version":"1"})",
       R"({"in_model":{"task":"a","trace":{},"default_ms":1,"tuned_ms":1},"target":"llvm","version":"1"})",
       R"({"in_model":{"conv":"c","form":"flat","align":0,"default_ms":1,"tuned_ms":1,"kept":false},"target":"llvm","version":"1"})"})
    EXPECT_THROW(in_model_record_from_line(bad), UserError) << bad;
  std::filesystem::remove(path);
}

// A writer process appends records as fast as it can and is killed with
// SIGKILL: every complete line reads back, a line cut short (if the kill
// landed mid-write) is dropped and reported, and the next writer truncates
// it away and appends after the complete records.
TEST(TuningLog, AWriterKilledMidSessionLosesAtMostTheRecordInFlight) {
  std::string path = temp_log("killed.jsonl");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TuningLogWriter log(path);
    for (int i = 0;; ++i) log.append(measured("task" + std::to_string(i), 1.0 + i));
  }
  for (int tries = 0; tries < 2000 && read_tuning_log(path, "", "", true).records.size() < 20; ++tries) usleep(1000);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  TuningLog before = read_tuning_log(path, "", "");
  ASSERT_GE(before.records.size(), 20u);
  for (size_t i = 0; i < before.records.size(); ++i) EXPECT_EQ(before.records[i].task, "task" + std::to_string(i));
  // The same state as a kill in the middle of a write: half a record at the end.
  std::string half = to_line(measured("in_flight", 9.0));
  std::ofstream(path, std::ios::binary | std::ios::app) << half.substr(0, half.size() / 2);
  TuningLog cut = read_tuning_log(path, "", "");
  EXPECT_TRUE(cut.dropped_partial_line);
  EXPECT_EQ(cut.records.size(), before.records.size());
  {
    TuningLogWriter resumed(path);
    resumed.append(measured("after", 1.0));
  }
  TuningLog after = read_tuning_log(path, "", "");
  EXPECT_FALSE(after.dropped_partial_line);
  ASSERT_EQ(after.records.size(), before.records.size() + 1);
  EXPECT_EQ(after.records.back().task, "after");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tessel::tune
