// The tuning log: what a tuning session measured, one JSON object per line,
// appended and flushed to disk (fsync) record by record, so that a session
// killed at any moment loses at most the record it was writing, and
// `--resume` continues from the rest.
//
//   {"task":"9f3c...","target":"llvm -mcpu=znver4","version":"0.1.0",
//    "trace":{...},"times_ms":[0.21,0.20,0.21],"error":"",
//    "knobs":{"b0.rows":4},"round":3,"predicted":0.71,"flops":1.2e8,"weight":2,
//    "vs_default":0.93}
//
// Reading checks every line: a line that is not a record is an error naming
// the file and line, except a last line cut short (no newline: the write a
// kill interrupted), which is dropped and reported. Records made for another
// target or another compiler version are kept apart, never applied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
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
  // Optional (absent in a line means the default): what the search and the report need.
  std::map<std::string, int64_t> knobs;  // the schedule's knob decisions (sched::KnobDecisions)
  int64_t round = 0;                     // the search round that measured it (0: the default schedule)
  std::optional<double> predicted;       // the cost model's score before it was measured; none: untrained
  double flops = 0;                      // per run of the task's function
  int64_t weight = 1;                    // runs of the task per inference
  // A task only the alternative side of a fusion tuned region has: the
  // model runs it only if the region's decision takes that side.
  bool alternative_only = false;
  // A candidate that would have become its task's best was timed again in
  // one process alternately with the default schedule: the median of its
  // time over the default's, run by run. Measured minutes apart, the two
  // times also differ by the machine's drift; run by run, they do not.
  std::optional<double> vs_default;
  // A GPU candidate's kernels as ptxas compiled them: the most registers per
  // thread, the bytes spilled to local memory (0: none reported).
  int64_t registers = 0, spill_bytes = 0;

  bool ok() const { return error.empty() && !times_ms.empty(); }
  // Its median run (the record must be ok()): what the tuner ranks by. The
  // fastest run of a few favours a lucky one; the median does not.
  double median_ms() const;
  // What the tuner ranks it by (ok() records): default_ms (its task's
  // default schedule's median) times vs_default where it was measured
  // against the default, else its median.
  double time_ms(double default_ms) const;
};

// A fusion decision of a session with `--fusion tuned`: in a region where
// two groupings disagree (src/passes/fusion_regions.h), the tasks of each
// side's groups, their measured times added up, the side chosen, and how
// many times the model runs the region.
//
//   {"fusion":{"base":["a1..","b2.."],"alternative":["c3.."],"base_ms":0.31,
//    "alternative_ms":0.22,"choice":"alternative","runs":2},"target":"llvm ...","version":"0.1.0"}
struct FusionRecord {
  std::string target, compiler_version;
  std::vector<std::string> base, alternative;  // task keys, one per group
  double base_ms = 0, alternative_ms = 0;      // each side's kernels' times added
  bool take_alternative = false;
  int64_t runs = 1;                            // times the model runs the region (optional)
  std::string base_ops, alternative_ops;       // optional, for people: "Flatten+Gemm | Softmax"
};

// A layout decision of a session that searched conv layouts: for one
// convolution (its lower::conv_key), each layout measured (form and
// alignment, the default's first) with the time of the model's kernels that
// compute the conv that way added up, and the one chosen.
//
//   {"layout":{"conv":"conv 1x64x56x56 k3x3 s1x1 d1x1 p1,1,1,1 g1 c64","choice":1,
//    "measured":[{"form":"flat","align":48,"ms":0.91},{"form":"channels-last","align":1,"ms":0.84}]},
//    "target":"llvm ...","version":"0.1.0"}
struct LayoutOption {
  std::string form;  // lower::conv_form_name
  int64_t align = 1;
  double ms = 0;
};

struct LayoutRecord {
  std::string target, compiler_version;
  std::string conv;
  std::vector<LayoutOption> measured;  // the default's first
  size_t choice = 0;                   // into measured
};

// A session's decision checked in the model itself: the library compiled
// with the log and the one compiled without it, run in alternation, each
// kernel timed in place. For a task's tuned schedule, its kernels' time in
// each library (kernels whose conv the log re-lays out count for the
// layout, not here); for a conv's layout, the time of the kernels that
// compute that conv. A decision not kept is left out when compiling with the
// log, as long as the log's decision is still the one checked (the same
// trace, the same layout); the last check of a decision counts.
//
//   {"in_model":{"task":"9f3c...","trace":{...},"default_ms":1.10,"tuned_ms":1.23,"kept":false},
//    "target":"llvm ...","version":"0.1.0"}
//   {"in_model":{"conv":"conv 1x64x56x56 ...","form":"channels-last","align":1,"default_ms":0.91,
//    "tuned_ms":0.84,"kept":true},"target":"llvm ...","version":"0.1.0"}
struct InModelRecord {
  std::string target, compiler_version;
  std::string task, trace;  // a tuned schedule's check (trace: sched::Trace::to_json)
  std::string conv, form;   // or a layout decision's: its conv and the layout checked
  int64_t align = 1;
  double default_ms = 0, tuned_ms = 0;
  bool kept = false;
  bool is_layout() const { return !conv.empty(); }
  // The decision checked, whichever trace or layout: "task KEY" or "conv KEY".
  std::string decision() const { return is_layout() ? "conv " + conv : "task " + task; }
};

// One line of the log (without its newline), and back; from_line throws a
// tessel::UserError saying what is wrong with the line.
std::string to_line(const TuningRecord& record);
TuningRecord record_from_line(const std::string& line);
std::string to_line(const FusionRecord& record);
FusionRecord fusion_record_from_line(const std::string& line);
std::string to_line(const LayoutRecord& record);
LayoutRecord layout_record_from_line(const std::string& line);
std::string to_line(const InModelRecord& record);
InModelRecord in_model_record_from_line(const std::string& line);

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
  void append(const FusionRecord& record);
  void append(const LayoutRecord& record);
  void append(const InModelRecord& record);
  const std::string& path() const { return path_; }

 private:
  void append_line(const std::string& line);
  std::string path_;
  int fd_ = -1;
};

struct TuningLog {
  std::vector<TuningRecord> records;  // for the expected target and compiler version, in file order
  std::vector<TuningRecord> foreign;  // for another target or version: reported, not applied
  std::vector<FusionRecord> fusion;   // for the expected target and version, in file order
  size_t foreign_fusion = 0;          // fusion records for another target or version
  std::vector<LayoutRecord> layouts;  // for the expected target and version, in file order
  size_t foreign_layouts = 0;         // layout records for another target or version
  std::vector<InModelRecord> in_model;  // checks in the model, for the expected target and version
  size_t foreign_in_model = 0;
  bool dropped_partial_line = false;  // the last line was cut short (an interrupted write) and dropped
};

// Reads a log; an empty expected target or version accepts any. A missing
// file is an empty log when `missing_ok`, else an error.
TuningLog read_tuning_log(const std::string& path, const std::string& target, const std::string& compiler_version,
                          bool missing_ok = false);

}  // namespace tessel::tune
