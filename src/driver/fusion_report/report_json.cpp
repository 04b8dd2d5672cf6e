// report.json and writing the three files.
#include <filesystem>
#include <fstream>

#include "ir/core/diagnostics.h"
#include "src/driver/fusion_report/report_writers.h"

namespace tessel::driver {

namespace {

nlohmann::json kernel_json(const ReportKernel& k) {
  return {{"name", k.name},
          {"nodes", k.nodes},
          {"ops", k.ops},
          {"flops", k.flops},
          {"bytes", k.bytes},
          {"median_ms", k.median_ms},
          {"gflops", k.gflops()},
          {"gbps", k.gbps()},
          {"intensity", k.place.intensity},
          {"roofline_bound_gflops", k.place.bound_gflops},
          {"roofline_percent", k.place.percent},
          {"bound", k.flops == 0 ? "none" : k.place.compute_bound ? "compute" : "memory"}};
}

nlohmann::json policy_json(const PolicyReport& p) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const ReportKernel& k : p.kernels) kernels.push_back(kernel_json(k));
  return {{"policy", p.policy},
          {"kernels_per_inference", p.kernels.size()},
          {"dispatches", p.dispatches},
          {"end_to_end_ms",
           {{"median", p.end_to_end.median_ms},
            {"min", p.end_to_end.min_ms},
            {"max", p.end_to_end.max_ms},
            {"runs", p.end_to_end.runs}}},
          {"kernel_sum_ms", p.kernel_sum_ms},
          {"outside_kernels_ms", p.outside_kernels_ms()},
          {"per_dispatch_us", p.per_dispatch_us()},
          {"adds_up", p.adds_up()},
          {"bytes_between_kernels", p.bytes_between_kernels},
          {"peak_intermediate_bytes", p.arena_bytes},
          {"kernels", kernels}};
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  TESSEL_USER_CHECK(out.good(), Span{}) << "cannot write " << path.string();
}

}  // namespace

nlohmann::json fusion_report_json(const FusionReport& r) {
  nlohmann::json policies = nlohmann::json::array(), changes = nlohmann::json::array();
  for (const PolicyReport& p : r.policies) policies.push_back(policy_json(p));
  for (const GroupChange& c : r.changes)
    changes.push_back({{"policy", c.policy}, {"kernel", c.kernel}, {"ops", c.ops}, {"nodes", c.nodes},
                       {"fused_ms", c.fused_ms}, {"unfused_ms", c.unfused_ms}, {"saved_ms", c.saved_ms()}});
  return {{"model", r.model},
          {"machine", r.machine},
          {"threads", r.threads},
          {"roofline",
           {{"gflops", r.roof.gflops}, {"gbps", r.roof.gbps}, {"ridge", r.roof.ridge()}, {"cache_gbps", r.roof.cache_gbps}}},
          {"policies", policies},
          {"group_changes", changes}};
}

void write_fusion_report(const FusionReport& report, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  TESSEL_USER_CHECK(!ec, Span{}) << "cannot create " << dir << ": " << ec.message();
  std::filesystem::path base(dir);
  write_text(base / "report.json", fusion_report_json(report).dump(2) + "\n");
  write_text(base / "report.md", fusion_report_markdown(report));
  write_text(base / "report.html", fusion_report_html(report));
}

}  // namespace tessel::driver
