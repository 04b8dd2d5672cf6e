#include "src/driver/fusion_report/report_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessel::driver {

std::string fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string bound_name(const ReportKernel& k) {
  if (k.flops == 0) return "-";
  return k.place.compute_bound ? "compute" : "memory";
}

const PolicyReport* report_baseline(const FusionReport& r) {
  for (const PolicyReport& p : r.policies)
    if (p.policy == "none") return &p;
  return nullptr;
}

std::vector<const ReportKernel*> slowest_kernels(const PolicyReport& p) {
  std::vector<const ReportKernel*> out;
  for (const ReportKernel& k : p.kernels) out.push_back(&k);
  std::stable_sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->median_ms > b->median_ms; });
  return out;
}

std::vector<std::string> report_findings(const FusionReport& r) {
  std::vector<std::string> lines;
  if (r.policies.empty()) return lines;
  auto fastest = std::min_element(r.policies.begin(), r.policies.end(), [](auto& a, auto& b) {
    return a.end_to_end.median_ms < b.end_to_end.median_ms;
  });
  std::string line = "Fastest: " + fastest->policy + " at " + fixed(fastest->end_to_end.median_ms, 3) + " ms";
  if (const PolicyReport* none = report_baseline(r))
    line += ", " + fixed(none->end_to_end.median_ms / fastest->end_to_end.median_ms, 2) + "x over one kernel per node (" +
            std::to_string(none->kernels.size()) + " kernels -> " + std::to_string(fastest->kernels.size()) + ")";
  lines.push_back(line + ".");
  for (const PolicyReport& p : r.policies) {
    if (p.adds_up()) continue;
    double gap = p.end_to_end.median_ms - p.kernel_sum_ms;
    double outside = p.end_to_end.median_ms > 0 ? 100 * p.outside_kernels_ms() / p.end_to_end.median_ms : 0;
    lines.push_back("Fusion " + p.policy + ": the kernels' medians add up to " + fixed(p.kernel_sum_ms, 3) +
                    " ms, " + fixed(std::abs(gap), 3) + " ms " + (gap > 0 ? "short of" : "more than") +
                    " the end-to-end median. Of each run, " + fixed(p.outside_kernels_ms(), 3) + " ms (" +
                    fixed(outside, 1) + "%, " + fixed(p.per_dispatch_us(), 2) +
                    " us per dispatch) is spent outside the kernels (the runtime between them, copies of "
                    "outputs); the rest is time lost inside kernels in some runs and not others (the OS, other "
                    "processes, threads waiting for a core): spread that medians of parts do not see. Compare "
                    "with more --repeat on a quieter machine.");
  }
  if (!r.changes.empty()) {
    const GroupChange& c = r.changes.front();
    lines.push_back("Largest change: fusion " + c.policy + "'s " + c.kernel + " (" + c.ops + ") takes " +
                    fixed(c.fused_ms, 4) + " ms where its " + std::to_string(c.nodes) + " nodes took " +
                    fixed(c.unfused_ms, 4) + " ms as kernels of their own.");
  }
  return lines;
}

}  // namespace tessel::driver
