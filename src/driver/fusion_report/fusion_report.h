// `tessel fusion-report`: one model compiled once per fusion policy, each
// profiled on the same inputs, and what the granularity did: kernels and
// dispatches, end-to-end time and where it went (kernels, the runtime
// between them), bytes moved between kernels, intermediate memory, every
// kernel on the machine's roofline, and the fused groups that gained or lost
// time against one kernel per node. Written as report.md, report.json and a
// self-contained report.html (report_writers.h).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "src/driver/compile_model.h"
#include "src/driver/pipeline.h"
#include "src/driver/roofline.h"
#include "src/driver/run_compiled.h"

namespace tessel::driver {

struct FusionReportOptions {
  std::vector<passes::FusionPolicy> policies = {passes::FusionPolicy::kNone, passes::FusionPolicy::kInjective,
                                                passes::FusionPolicy::kSimple, passes::FusionPolicy::kDefault,
                                                passes::FusionPolicy::kAggressive};
  PipelineOptions pipeline;
  codegen::Target target = codegen::default_target();
  int threads = 0;  // 0: the runtime's default (TESSEL_NUM_THREADS, else every core)
  int repeat = 30;  // profiled runs per policy
  uint64_t seed = 0;
  // Tuned schedules for every policy's kernels the log has tasks for, and
  // the decisions of policy tuned (`--tuning-log`).
  std::shared_ptr<const TunedSchedules> tuned;
};

struct ReportKernel {
  std::string name;
  std::vector<std::string> nodes;  // the graph nodes it computes
  std::string ops;                 // "Conv+Sigmoid+Mul"
  double flops = 0, bytes = 0, median_ms = 0;
  RooflinePlace place;
  double gflops() const { return median_ms > 0 ? flops / (median_ms * 1e6) : 0; }
  double gbps() const { return median_ms > 0 ? bytes / (median_ms * 1e6) : 0; }
};

struct PolicyReport {
  std::string policy;
  std::vector<ReportKernel> kernels;  // one dispatch each per inference, or one per iteration of its loops
  uint64_t dispatches = 0;            // kernel calls per inference
  Latency end_to_end;
  double kernel_sum_ms = 0;       // the kernels' medians added
  double outside_kernels = 0;     // ms: the median of each run's time outside its kernels
  double bytes_between_kernels = 0;  // every kernel's compulsory bytes (parameters, each once)
  int64_t arena_bytes = 0;           // peak intermediate memory
  double outside_kernels_ms() const { return outside_kernels; }
  double per_dispatch_us() const;
  // Whether the kernels' medians add up to within 10% of the end-to-end
  // median (they need not: a run slowed by the OS is slowed in some kernel,
  // and medians of parts are not parts of the median).
  bool adds_up() const;
};

// A fused group of a policy against the same nodes as one kernel each.
struct GroupChange {
  std::string policy, kernel, ops;
  int nodes = 0;
  double fused_ms = 0, unfused_ms = 0;
  double saved_ms() const { return unfused_ms - fused_ms; }
};

struct FusionReport {
  std::string model;
  std::string machine;
  int threads = 1;
  RooflinePoint roof;
  std::vector<PolicyReport> policies;  // in the order asked for
  std::vector<GroupChange> changes;    // largest |saved| first; empty without policy none
};

// Compiles and profiles the model once per policy (progress on `progress`:
// one line per policy, with elapsed time); every policy's outputs are
// checked against the first one's (a user error naming the policy if they
// differ: a report on wrong code would mislead).
FusionReport make_fusion_report(const std::string& model_path, const FusionReportOptions& options,
                                std::ostream& progress);

}  // namespace tessel::driver
