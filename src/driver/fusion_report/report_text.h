// What the writers of the fusion report share: number formatting, the
// findings in words, the order kernels are shown in.
#pragma once

#include <string>
#include <vector>

#include "src/driver/fusion_report/fusion_report.h"

namespace tessel::driver {

inline constexpr size_t kShownKernels = 25;
inline constexpr size_t kShownChanges = 15;

std::string fixed(double value, int digits);
std::string bound_name(const ReportKernel& k);  // "compute", "memory", "-" (no FLOPs)
const PolicyReport* report_baseline(const FusionReport& r);  // policy none, if profiled
std::vector<const ReportKernel*> slowest_kernels(const PolicyReport& p);

// Sentences: the fastest policy and by how much, where time went outside the
// kernels (a policy whose kernels do not add up to within 10% of the
// end-to-end median says where the rest went), the group that paid most.
std::vector<std::string> report_findings(const FusionReport& r);

}  // namespace tessel::driver
