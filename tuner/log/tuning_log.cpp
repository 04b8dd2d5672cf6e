#include "tuner/log/tuning_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/core/diagnostics.h"
#include "tuner/median.h"
#include "tuner/write_all.h"

namespace tessel::tune {

namespace {

using nlohmann::json;

const char* const kFields[] = {"task", "target", "version", "trace", "times_ms", "error"};

std::string field_string(const json& j, const char* key) {
  TESSEL_USER_CHECK(j.contains(key) && j[key].is_string(), Span{})
      << "field \"" << key << "\" is not a string";
  return j[key].get<std::string>();
}

double optional_number(const json& j, const char* key, double fallback) {
  if (!j.contains(key)) return fallback;
  TESSEL_USER_CHECK(j[key].is_number(), Span{}) << "field \"" << key << "\" is not a number";
  return j[key].get<double>();
}

void read_optional_fields(const json& j, TuningRecord& r) {
  if (j.contains("knobs")) {
    TESSEL_USER_CHECK(j["knobs"].is_object(), Span{}) << "field \"knobs\" is not an object";
    for (const auto& [key, value] : j["knobs"].items()) {
      TESSEL_USER_CHECK(value.is_number_integer(), Span{}) << "knob \"" << key << "\" is not an integer";
      r.knobs[key] = value.get<int64_t>();
    }
  }
  r.round = int64_t(optional_number(j, "round", 0));
  if (j.contains("predicted")) r.predicted = optional_number(j, "predicted", 0);
  r.flops = optional_number(j, "flops", 0);
  r.weight = int64_t(optional_number(j, "weight", 1));
  if (j.contains("alternative_only")) {
    TESSEL_USER_CHECK(j["alternative_only"].is_boolean(), Span{}) << "field \"alternative_only\" is not a boolean";
    r.alternative_only = j["alternative_only"].get<bool>();
  }
  TESSEL_USER_CHECK(r.round >= 0 && r.flops >= 0 && r.weight >= 1, Span{})
      << "a negative round or FLOP count, or a weight below 1";
  r.registers = int64_t(optional_number(j, "registers", 0));
  r.spill_bytes = int64_t(optional_number(j, "spill_bytes", 0));
  TESSEL_USER_CHECK(r.registers >= 0 && r.spill_bytes >= 0, Span{}) << "a negative register or spill count";
  if (j.contains("vs_default")) {
    double ratio = optional_number(j, "vs_default", 0);
    TESSEL_USER_CHECK(ratio > 0 && std::isfinite(ratio), Span{})
        << "field \"vs_default\" is not a positive ratio";
    r.vs_default = ratio;
  }
}

// The length of the file at fd up to and including its last newline (0 when
// it has none): where a line cut short by an interrupted write begins.
off_t whole_lines_length(int fd) {
  off_t end = ::lseek(fd, 0, SEEK_END);
  char chunk[4096];
  while (end > 0) {
    off_t begin = std::max<off_t>(0, end - off_t(sizeof chunk));
    ssize_t n = ::pread(fd, chunk, size_t(end - begin), begin);
    if (n != end - begin) return -1;
    for (off_t i = n; i-- > 0;)
      if (chunk[i] == '\n') return begin + i + 1;
    end = begin;
  }
  return 0;
}

}  // namespace

double TuningRecord::median_ms() const {
  TESSEL_ICHECK(ok()) << "median time of a failed record";
  return median(times_ms);
}

double TuningRecord::time_ms(double default_ms) const {
  return vs_default && default_ms > 0 ? default_ms * *vs_default : median_ms();
}

std::string to_line(const TuningRecord& r) {
  json trace = r.trace.empty() ? json::object() : json::parse(r.trace);
  json j = {{"task", r.task},   {"target", r.target},     {"version", r.compiler_version},
            {"trace", trace},   {"times_ms", r.times_ms}, {"error", r.error},
            {"knobs", r.knobs}, {"round", r.round},       {"flops", r.flops},
            {"weight", r.weight}};
  if (r.predicted) j["predicted"] = *r.predicted;
  if (r.alternative_only) j["alternative_only"] = true;
  if (r.vs_default) j["vs_default"] = *r.vs_default;
  if (r.registers > 0) j["registers"] = r.registers;
  if (r.spill_bytes > 0) j["spill_bytes"] = r.spill_bytes;
  return j.dump();
}

namespace {

json parse_object(const std::string& line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  TESSEL_USER_CHECK(!j.is_discarded(), Span{}) << "not JSON";
  TESSEL_USER_CHECK(j.is_object(), Span{}) << "not a JSON object";
  return j;
}

bool is_fusion_decision(const json& j) { return j.contains("fusion"); }

TuningRecord record_from_json(const json& j) {
  for (const char* key : kFields) TESSEL_USER_CHECK(j.contains(key), Span{}) << "no field \"" << key << "\"";
  TuningRecord r;
  r.task = field_string(j, "task");
  r.target = field_string(j, "target");
  r.compiler_version = field_string(j, "version");
  r.error = field_string(j, "error");
  TESSEL_USER_CHECK(!r.task.empty(), Span{}) << "an empty task key";
  TESSEL_USER_CHECK(j["trace"].is_object(), Span{}) << "field \"trace\" is not an object";
  r.trace = j["trace"].dump();
  const json& times = j["times_ms"];
  TESSEL_USER_CHECK(times.is_array(), Span{}) << "field \"times_ms\" is not an array";
  for (const json& t : times) {
    TESSEL_USER_CHECK(t.is_number() && t.get<double>() > 0, Span{}) << "a time that is not a positive number";
    r.times_ms.push_back(t.get<double>());
  }
  TESSEL_USER_CHECK(!r.error.empty() || !r.times_ms.empty(), Span{}) << "neither times nor an error";
  read_optional_fields(j, r);
  return r;
}

}  // namespace

TuningRecord record_from_line(const std::string& line) { return record_from_json(parse_object(line)); }

std::string to_line(const FusionRecord& r) {
  json fusion = {{"base", r.base},
                 {"alternative", r.alternative},
                 {"base_ms", r.base_ms},
                 {"alternative_ms", r.alternative_ms},
                 {"choice", r.take_alternative ? "alternative" : "base"},
                 {"runs", r.runs}};
  if (!r.base_ops.empty()) fusion["base_ops"] = r.base_ops;
  if (!r.alternative_ops.empty()) fusion["alternative_ops"] = r.alternative_ops;
  return json{{"fusion", fusion}, {"target", r.target}, {"version", r.compiler_version}}.dump();
}

namespace {

std::vector<std::string> task_keys(const json& j, const char* key) {
  TESSEL_USER_CHECK(j.contains(key) && j[key].is_array() && !j[key].empty(), Span{})
      << "field \"" << key << "\" is not a list of task keys";
  std::vector<std::string> out;
  for (const json& k : j[key]) {
    TESSEL_USER_CHECK(k.is_string() && !k.get<std::string>().empty(), Span{}) << "a task key that is not a string";
    out.push_back(k.get<std::string>());
  }
  return out;
}

FusionRecord fusion_record_from_json(const json& j) {
  TESSEL_USER_CHECK(is_fusion_decision(j) && j["fusion"].is_object(), Span{}) << "not a fusion decision";
  FusionRecord r;
  r.target = field_string(j, "target");
  r.compiler_version = field_string(j, "version");
  const json& f = j["fusion"];
  r.base = task_keys(f, "base");
  r.alternative = task_keys(f, "alternative");
  r.base_ms = optional_number(f, "base_ms", -1);
  r.alternative_ms = optional_number(f, "alternative_ms", -1);
  TESSEL_USER_CHECK(r.base_ms > 0 && r.alternative_ms > 0, Span{}) << "a side's time is not a positive number";
  std::string choice = f.contains("choice") && f["choice"].is_string() ? f["choice"].get<std::string>() : "";
  TESSEL_USER_CHECK(choice == "base" || choice == "alternative", Span{})
      << "field \"choice\" is neither \"base\" nor \"alternative\"";
  r.take_alternative = choice == "alternative";
  r.runs = int64_t(optional_number(f, "runs", 1));
  TESSEL_USER_CHECK(r.runs >= 1, Span{}) << "field \"runs\" is below 1";
  for (auto [key, ops] : {std::pair{"base_ops", &r.base_ops}, std::pair{"alternative_ops", &r.alternative_ops}})
    if (f.contains(key)) *ops = field_string(f, key);
  return r;
}

}  // namespace

FusionRecord fusion_record_from_line(const std::string& line) { return fusion_record_from_json(parse_object(line)); }

namespace {

LayoutOption option_from_json(const json& j) {
  TESSEL_USER_CHECK(j.is_object(), Span{}) << "a measured layout that is not an object";
  LayoutOption o;
  o.form = field_string(j, "form");
  TESSEL_USER_CHECK(j.contains("align") && j["align"].is_number_integer() && j["align"].get<int64_t>() >= 1,
                    Span{})
      << "a measured layout's \"align\" is not an integer of at least 1";
  o.align = j["align"].get<int64_t>();
  TESSEL_USER_CHECK(j.contains("ms") && j["ms"].is_number() && j["ms"].get<double>() > 0, Span{})
      << "a measured layout's \"ms\" is not a positive number";
  o.ms = j["ms"].get<double>();
  return o;
}

LayoutRecord layout_record_from_json(const json& j) {
  TESSEL_USER_CHECK(j.contains("layout") && j["layout"].is_object(), Span{}) << "not a layout decision";
  LayoutRecord r;
  r.target = field_string(j, "target");
  r.compiler_version = field_string(j, "version");
  const json& l = j["layout"];
  r.conv = field_string(l, "conv");
  TESSEL_USER_CHECK(!r.conv.empty(), Span{}) << "an empty conv key";
  TESSEL_USER_CHECK(l.contains("measured") && l["measured"].is_array() && l["measured"].size() >= 2, Span{})
      << "field \"measured\" is not a list of at least two layouts";
  for (const json& o : l["measured"]) r.measured.push_back(option_from_json(o));
  TESSEL_USER_CHECK(l.contains("choice") && l["choice"].is_number_unsigned() &&
                        l["choice"].get<size_t>() < r.measured.size(),
                    Span{})
      << "field \"choice\" is not the index of a measured layout";
  r.choice = l["choice"].get<size_t>();
  return r;
}

}  // namespace

std::string to_line(const LayoutRecord& r) {
  json measured = json::array();
  for (const LayoutOption& o : r.measured)
    measured.push_back({{"form", o.form}, {"align", o.align}, {"ms", o.ms}});
  json layout = {{"conv", r.conv}, {"choice", r.choice}, {"measured", measured}};
  return json{{"layout", layout}, {"target", r.target}, {"version", r.compiler_version}}.dump();
}

LayoutRecord layout_record_from_line(const std::string& line) {
  return layout_record_from_json(parse_object(line));
}

namespace {

InModelRecord in_model_record_from_json(const json& j) {
  TESSEL_USER_CHECK(j.contains("in_model") && j["in_model"].is_object(), Span{})
      << "not a check in the model";
  InModelRecord r;
  r.target = field_string(j, "target");
  r.compiler_version = field_string(j, "version");
  const json& m = j["in_model"];
  TESSEL_USER_CHECK(m.contains("task") != m.contains("conv"), Span{})
      << "a check in the model names either a task or a conv";
  if (m.contains("task")) {
    r.task = field_string(m, "task");
    TESSEL_USER_CHECK(!r.task.empty() && m.contains("trace") && m["trace"].is_object(), Span{})
        << "a schedule's check in the model without its task key or trace";
    r.trace = m["trace"].dump();
  } else {
    r.conv = field_string(m, "conv");
    r.form = field_string(m, "form");
    TESSEL_USER_CHECK(!r.conv.empty() && !r.form.empty(), Span{})
        << "a layout's check without its conv or form";
    r.align = int64_t(optional_number(m, "align", 1));
    TESSEL_USER_CHECK(r.align >= 1, Span{}) << "field \"align\" is below 1";
  }
  r.default_ms = optional_number(m, "default_ms", -1);
  r.tuned_ms = optional_number(m, "tuned_ms", -1);
  TESSEL_USER_CHECK(r.default_ms > 0 && r.tuned_ms > 0, Span{}) << "a check's time is not a positive number";
  TESSEL_USER_CHECK(m.contains("kept") && m["kept"].is_boolean(), Span{})
      << "field \"kept\" is not true or false";
  r.kept = m["kept"].get<bool>();
  return r;
}

}  // namespace

std::string to_line(const InModelRecord& r) {
  json m = r.is_layout()
               ? json{{"conv", r.conv}, {"form", r.form}, {"align", r.align}}
               : json{{"task", r.task}, {"trace", r.trace.empty() ? json::object() : json::parse(r.trace)}};
  m["default_ms"] = r.default_ms;
  m["tuned_ms"] = r.tuned_ms;
  m["kept"] = r.kept;
  return json{{"in_model", m}, {"target", r.target}, {"version", r.compiler_version}}.dump();
}

InModelRecord in_model_record_from_line(const std::string& line) {
  return in_model_record_from_json(parse_object(line));
}

TuningLogWriter::TuningLogWriter(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  TESSEL_USER_CHECK(fd_ >= 0, Span{}) << "cannot open the tuning log " << path << " for appending: "
                                      << std::strerror(errno);
  // A record cut short by an interrupted write is removed, so that the next
  // one starts its own line.
  off_t size = ::lseek(fd_, 0, SEEK_END), whole = whole_lines_length(fd_);
  TESSEL_USER_CHECK(whole >= 0 && (whole == size || ::ftruncate(fd_, whole) == 0), Span{})
      << "cannot repair the cut-short last line of " << path << ": " << std::strerror(errno);
}

TuningLogWriter::~TuningLogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TuningLogWriter::append(const TuningRecord& record) { append_line(to_line(record)); }

void TuningLogWriter::append(const FusionRecord& record) { append_line(to_line(record)); }

void TuningLogWriter::append(const LayoutRecord& record) {
  append_line(to_line(record));
}

void TuningLogWriter::append(const InModelRecord& record) {
  append_line(to_line(record));
}

void TuningLogWriter::append_line(const std::string& text) {
  std::string line = text + "\n";
  TESSEL_USER_CHECK(write_all(fd_, line) && ::fsync(fd_) == 0, Span{})
      << "cannot append to the tuning log " << path_ << ": " << std::strerror(errno);
}

TuningLog read_tuning_log(const std::string& path, const std::string& target, const std::string& compiler_version,
                          bool missing_ok) {
  TuningLog log;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    TESSEL_USER_CHECK(missing_ok, Span{}) << "cannot read the tuning log " << path;
    return log;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  size_t start = 0, number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    ++number;
    if (end == std::string::npos) {  // the last line, cut short by an interrupted write
      log.dropped_partial_line = true;
      break;
    }
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    auto ours = [&](const std::string& t, const std::string& v) {
      return (target.empty() || t == target) && (compiler_version.empty() || v == compiler_version);
    };
    // A decision for this target and version is kept, another's counted.
    auto keep = [&](auto decision, auto& kept, size_t& foreign) {
      if (ours(decision.target, decision.compiler_version))
        kept.push_back(std::move(decision));
      else
        ++foreign;
    };
    try {
      json j = parse_object(line);
      if (is_fusion_decision(j)) {
        keep(fusion_record_from_json(j), log.fusion, log.foreign_fusion);
        continue;
      }
      if (j.contains("layout")) {
        keep(layout_record_from_json(j), log.layouts, log.foreign_layouts);
        continue;
      }
      if (j.contains("in_model")) {
        keep(in_model_record_from_json(j), log.in_model, log.foreign_in_model);
        continue;
      }
      TuningRecord r = record_from_json(j);
      (ours(r.target, r.compiler_version) ? log.records : log.foreign).push_back(std::move(r));
    } catch (const UserError& e) {
      TESSEL_USER_ERROR(Span{}) << path << ":" << number << ": not a tuning record: " << e.what();
    }
  }
  return log;
}

}  // namespace tessel::tune
