#include "src/driver/tune_progress.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/core/diagnostics.h"

namespace tessel::driver {

std::string format_duration(double seconds) {
  auto s = int64_t(std::max(0.0, std::round(seconds)));
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
                  (long long)(s % 60));
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
  }
  return text;
}

TuneProgress::TuneProgress(std::ostream& out, const std::string& events_path, bool live) : out_(out), live_(live) {
  if (events_path.empty()) return;
  events_.open(events_path, std::ios::app);
  TESSEL_USER_CHECK(events_.good(), Span{}) << "cannot open the events file " << events_path;
}

TuneProgress::~TuneProgress() { finish(); }

void TuneProgress::event(const std::string& name, const std::string& json_fields) {
  if (!events_.is_open()) return;
  events_ << "{\"event\":\"" << name << "\"" << (json_fields.empty() ? "" : ",") << json_fields << "}\n";
  events_.flush();
}

void TuneProgress::round(const RoundReport& r) {
  double eta = r.session_trials > 0 ? r.elapsed_s / r.session_trials * std::max(0, r.total - r.trials) : 0;
  std::ostringstream line;
  line << std::fixed << "[" << r.trials << "/" << r.total << " trials] " << format_duration(r.elapsed_s)
       << " elapsed, ETA " << format_duration(eta) << std::setprecision(3) << " | estimated " << r.estimated_ms
       << " ms (default " << r.default_ms << ", " << std::setprecision(2)
       << (r.estimated_ms > 0 ? r.default_ms / r.estimated_ms : 0) << "x) | " << r.task_key.substr(0, 8) << " "
       << r.task_name.substr(0, 28);
  if (r.task_flops > 0 && r.task_best_ms > 0) {
    line << std::setprecision(1) << ": " << r.task_flops / (r.task_best_ms * 1e6) << " GFLOP/s (default "
         << (r.task_default_ms > 0 ? r.task_flops / (r.task_default_ms * 1e6) : 0) << ")";
  } else if (r.task_best_ms > 0) {
    line << std::setprecision(4) << ": " << r.task_best_ms << " ms (default " << r.task_default_ms << ")";
  }
  if (r.errors) line << ", " << r.errors << " errors";
  if (r.model_accuracy) line << std::setprecision(2) << " | model " << *r.model_accuracy;
  if (live_) {
    out_ << "\r\033[K" << line.str() << std::flush;
    line_open_ = true;
  } else {
    out_ << line.str() << "\n" << std::flush;
  }
  nlohmann::json j = {{"event", "round"},          {"round", r.round},
                      {"task", r.task_key},        {"name", r.task_name},
                      {"trials", r.trials},        {"total", r.total},
                      {"measured", r.measured},    {"errors", r.errors},
                      {"elapsed_s", r.elapsed_s},  {"eta_s", eta},
                      {"task_best_ms", r.task_best_ms}, {"task_default_ms", r.task_default_ms},
                      {"estimated_ms", r.estimated_ms}, {"default_ms", r.default_ms}};
  j["model_accuracy"] = r.model_accuracy ? nlohmann::json(*r.model_accuracy) : nlohmann::json(nullptr);
  if (events_.is_open()) {
    events_ << j.dump() << "\n";
    events_.flush();
  }
}

void TuneProgress::finish() {
  if (line_open_) out_ << "\n" << std::flush;
  line_open_ = false;
}

}  // namespace tessel::driver
