// The tuning log: what a tuning session measured, one JSON object per line,
// appended and flushed to disk (fsync) record by record, so that a session
// killed at any moment loses at most the record it was writing, and
// `--resume` continues from the rest.
//
//   {"task":"9f3c...","target":"llvm -mcpu=znver4","version":"0.1.0",
//    "trace":{...},"times_ms":[0.21,0.20,0.21],"error":""}
//
// Reading checks every line: a line that is not a record is an error naming
// the file and line, except a last line cut short (no newline: the write a
// kill interrupted), which is dropped and reported. Records made for another
// target or another compiler version are kept apart, never applied.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace tessel::tune {

struct TuningRecord {
  std::string task;              // the task's key (the structural hash of its lowered function, in hex)
  std::string target;            // the target the candidate was built for
  std::string compiler_version;  // of the Tessel that built it
  std::string trace;             // the candidate's schedule (sched::Trace::to_json)
  std::vector<double> times_ms;  // its measured runs; empty when it failed
  std::string error;             // why it failed (a crash, a timeout, a wrong output); empty when measured

  bool ok() const { return error.empty() && !times_ms.empty(); }
  double best_ms() const;  // the fastest run (the record must be ok())
};

// One line of the log (without its newline), and back; from_line throws a
// tessel::UserError saying what is wrong with the line.
std::string to_line(const TuningRecord& record);
TuningRecord record_from_line(const std::string& line);

// Appends records to a log file, creating it; each append is one write of a
// whole line followed by fsync. A last line cut short (a killed session's
// record in flight) is truncated away first.
class TuningLogWriter {
 public:
  explicit TuningLogWriter(const std::string& path);
  ~TuningLogWriter();
  TuningLogWriter(const TuningLogWriter&) = delete;
  TuningLogWriter& operator=(const TuningLogWriter&) = delete;

  void append(const TuningRecord& record);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

struct TuningLog {
  std::vector<TuningRecord> records;  // for the expected target and compiler version, in file order
  std::vector<TuningRecord> foreign;  // for another target or version: reported, not applied
  bool dropped_partial_line = false;  // the last line was cut short (an interrupted write) and dropped
};

// Reads a log; an empty expected target or version accepts any. A missing
// file is an empty log when `missing_ok`, else an error.
TuningLog read_tuning_log(const std::string& path, const std::string& target, const std::string& compiler_version,
                          bool missing_ok = false);

}  // namespace tessel::tune
