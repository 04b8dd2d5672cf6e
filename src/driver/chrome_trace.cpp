#include "src/driver/chrome_trace.h"

#include <algorithm>
#include <set>
#include <string>

namespace tessel::driver {

namespace {

constexpr double kGapBetweenRunsUs = 50;

nlohmann::json slice(const std::string& name, const char* category, int32_t thread, double begin_us, double end_us,
                     nlohmann::json args) {
  return {{"name", name}, {"cat", category}, {"ph", "X"},      {"pid", 0},
          {"tid", thread}, {"ts", begin_us}, {"dur", std::max(0.0, end_us - begin_us)}, {"args", std::move(args)}};
}

}  // namespace

nlohmann::json chrome_trace(const std::vector<KernelInfo>& kernels, const std::vector<TracedRun>& runs) {
  nlohmann::json events = nlohmann::json::array();
  std::set<int32_t> threads;
  double offset_us = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    double run_end_us = 0;
    for (const tessel_trace_span& s : runs[r].spans) {
      if (s.step < 0 || size_t(s.step) >= kernels.size()) continue;
      const KernelInfo& k = kernels[size_t(s.step)];
      double begin = offset_us + s.begin_seconds * 1e6, end = offset_us + s.end_seconds * 1e6;
      run_end_us = std::max(run_end_us, end);
      threads.insert(s.thread);
      if (s.kind == TESSEL_TRACE_STEP) {
        double seconds = s.end_seconds - s.begin_seconds;
        events.push_back(slice(k.name, "kernel", s.thread, begin, end,
                               {{"run", r}, {"step", s.step}, {"flops", k.flops}, {"bytes", k.bytes},
                                {"gflops_per_s", seconds > 0 ? k.flops / seconds / 1e9 : 0.0}}));
      } else {
        events.push_back(slice(k.name + " (chunk)", "chunk", s.thread, begin, end, {{"run", r}, {"step", s.step}}));
      }
    }
    offset_us = std::max(offset_us, run_end_us) + kGapBetweenRunsUs;
  }
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "tessel model"}}}});
  for (int32_t t : threads)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", t},
                      {"args", {{"name", t == 0 ? std::string("caller (thread 0)") : "worker " + std::to_string(t)}}}});
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace tessel::driver
