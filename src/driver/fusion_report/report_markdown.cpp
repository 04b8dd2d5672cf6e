// report.md: the policies side by side, the groups that paid, each policy's kernels.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "src/driver/fusion_report/report_text.h"
#include "src/driver/fusion_report/report_writers.h"

namespace tessel::driver {

namespace {

void policy_table(const FusionReport& r, std::ostringstream& md) {
  md << "| policy | kernels | end to end ms (median, min-max) | vs none | in kernels ms | outside kernels ms "
        "| per dispatch us | bytes between kernels MB | removed vs none MB | peak intermediate MB |\n"
     << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  const PolicyReport* none = report_baseline(r);
  for (const PolicyReport& p : r.policies) {
    md << "| " << p.policy << " | " << p.kernels.size() << " | " << fixed(p.end_to_end.median_ms, 3) << " ("
       << fixed(p.end_to_end.min_ms, 3) << "-" << fixed(p.end_to_end.max_ms, 3) << ") | "
       << (none ? fixed(none->end_to_end.median_ms / p.end_to_end.median_ms, 2) + "x" : "-") << " | "
       << fixed(p.kernel_sum_ms, 3) << " | " << fixed(p.outside_kernels_ms(), 3) << " | "
       << fixed(p.per_dispatch_us(), 2) << " | " << fixed(p.bytes_between_kernels / 1e6, 2) << " | "
       << (none ? fixed((none->bytes_between_kernels - p.bytes_between_kernels) / 1e6, 2) : "-") << " | "
       << fixed(double(p.arena_bytes) / 1e6, 2) << " |\n";
  }
  md << "\n";
  for (const std::string& line : report_findings(r)) md << "- " << line << "\n";
  md << "\n";
}

void changes_table(const FusionReport& r, std::ostringstream& md) {
  if (r.changes.empty()) return;
  md << "## Fused groups against one kernel per node (largest differences)\n\n"
     << "| policy | kernel | ops | nodes | fused ms | unfused ms | saved ms |\n|---|---|---|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < r.changes.size() && i < kShownChanges; ++i) {
    const GroupChange& c = r.changes[i];
    md << "| " << c.policy << " | " << c.kernel << " | " << c.ops << " | " << c.nodes << " | "
       << fixed(c.fused_ms, 4) << " | " << fixed(c.unfused_ms, 4) << " | " << fixed(c.saved_ms(), 4) << " |\n";
  }
  md << "\n";
}

void kernel_tables(const FusionReport& r, std::ostringstream& md) {
  for (const PolicyReport& p : r.policies) {
    md << "## Kernels of fusion " << p.policy << " (slowest first)\n\n"
       << "| kernel | ops | ms | MFLOP | MB | FLOP/B | GFLOP/s | GB/s | % roofline | bound |\n"
       << "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
    std::vector<const ReportKernel*> slowest = slowest_kernels(p);
    for (size_t i = 0; i < slowest.size() && i < kShownKernels; ++i) {
      const ReportKernel& k = *slowest[i];
      md << "| " << k.name << " | " << k.ops << " | " << fixed(k.median_ms, 4) << " | " << fixed(k.flops / 1e6, 2)
         << " | " << fixed(k.bytes / 1e6, 3) << " | " << fixed(k.place.intensity, 2) << " | " << fixed(k.gflops(), 2)
         << " | " << fixed(k.gbps(), 2) << " | " << fixed(k.place.percent, 1) << " | " << bound_name(k) << " |\n";
    }
    if (slowest.size() > kShownKernels)
      md << "\n" << slowest.size() - kShownKernels << " more kernels in report.json.\n";
    md << "\n";
  }
}

}  // namespace

std::string fusion_report_markdown(const FusionReport& r) {
  std::ostringstream md;
  md << "# Fusion report: " << r.model << "\n\n"
     << "Machine " << r.machine << ", " << r.threads << (r.threads == 1 ? " thread" : " threads")
     << "; roofline " << fixed(r.roof.gflops, 1) << " GFLOP/s, " << fixed(r.roof.gbps, 1) << " GB/s, ridge "
     << fixed(r.roof.ridge(), 2) << " FLOP/byte (L2 cache " << fixed(r.roof.cache_gbps, 1)
     << " GB/s: a kernel whose bytes stay in cache can pass 100% of the roof). Medians of " << (r.policies.empty() ? 0 : r.policies[0].end_to_end.runs)
     << " profiled runs per policy, the same inputs for all.\n\n";
  policy_table(r, md);
  changes_table(r, md);
  kernel_tables(r, md);
  return md.str();
}

}  // namespace tessel::driver
