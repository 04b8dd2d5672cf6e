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
    double share = p.end_to_end.median_ms > 0 ? 100 * p.outside_kernels_ms() / p.end_to_end.median_ms : 0;
    if (p.adds_up()) continue;
    if (share > 0)
      lines.push_back("Fusion " + p.policy + ": " + fixed(share, 1) + "% of the end-to-end median (" +
                      fixed(p.outside_kernels_ms(), 3) + " ms, " + fixed(p.per_dispatch_us(), 2) +
                      " us per dispatch) went outside the kernels: the runtime between them (argument binding, "
                      "the timing of each kernel, waking the thread pool) and copies of outputs.");
    else
      lines.push_back("Fusion " + p.policy + ": the kernels' medians add up to more than the end-to-end median (by " +
                      fixed(-share, 1) + "%): kernel times vary from run to run, and medians of parts need not add "
                      "up to the median of the whole; compare with more --repeat.");
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
