#include "src/driver/fusion_report/fusion_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>

#include "ir/core/diagnostics.h"
#include "src/driver/conformance.h"
#include "src/driver/run_inputs.h"

namespace tessel::driver {

namespace {

std::string ops_of(const lower::LoweredGroup& group) {
  std::string ops;
  for (const graph::Node* n : group.group.nodes) ops += (ops.empty() ? "" : "+") + n->op;
  return ops;
}

PolicyReport report_policy(const std::string& name, JitModel& model, const ModelProfile& profile,
                           const RooflinePoint& roof) {
  PolicyReport r;
  r.policy = name;
  r.end_to_end = profile.end_to_end;
  r.kernel_sum_ms = profile.kernel_sum_ms();
  r.outside_kernels = profile.outside_kernels_ms;
  r.arena_bytes = model.arena_bytes();
  r.dispatches = rt::dispatches_per_run(model.plan());
  const std::vector<CompiledKernel>& compiled = model.compiled_kernels();
  TESSEL_ICHECK(compiled.size() == profile.kernels.size())
      << compiled.size() << " kernels compiled, " << profile.kernels.size() << " profiled";
  for (size_t i = 0; i < compiled.size(); ++i) {
    const KernelProfile& p = profile.kernels[i];
    ReportKernel k;
    k.name = p.kernel.name;
    for (const graph::Node* n : compiled[i].group.group.nodes) k.nodes.push_back(n->name);
    k.ops = ops_of(compiled[i].group);
    k.flops = p.kernel.flops;
    k.bytes = p.kernel.bytes;
    k.median_ms = p.median_ms;
    k.place = place_on_roofline(roof, k.flops, k.bytes, k.median_ms / 1e3);
    r.bytes_between_kernels += k.bytes;
    r.kernels.push_back(std::move(k));
  }
  return r;
}

void check_same_outputs(const std::string& policy, const std::string& first, const std::vector<Tensor>& got,
                        const std::vector<Tensor>& want) {
  for (size_t i = 0; i < got.size(); ++i) {
    std::string diff = compare_tensors(got[i], want[i], {1e-3, 1e-5});
    TESSEL_USER_CHECK(diff.empty(), Span{}) << "fusion " << policy << " computes output " << i
                                            << " unlike fusion " << first << ": " << diff
                                            << " (please report: one of them is wrong)";
  }
}

std::vector<GroupChange> group_changes(const std::vector<PolicyReport>& policies) {
  auto none = std::find_if(policies.begin(), policies.end(), [](const PolicyReport& p) { return p.policy == "none"; });
  if (none == policies.end()) return {};
  std::map<std::string, double> node_ms;
  for (const ReportKernel& k : none->kernels)
    if (k.nodes.size() == 1) node_ms[k.nodes[0]] = k.median_ms;
  std::vector<GroupChange> changes;
  for (const PolicyReport& p : policies) {
    if (p.policy == "none") continue;
    for (const ReportKernel& k : p.kernels) {
      if (k.nodes.size() < 2) continue;
      GroupChange c{p.policy, k.name, k.ops, int(k.nodes.size()), k.median_ms, 0};
      bool known = true;
      for (const std::string& n : k.nodes) {
        auto it = node_ms.find(n);
        known = known && it != node_ms.end();
        if (known) c.unfused_ms += it->second;
      }
      if (known) changes.push_back(c);
    }
  }
  std::stable_sort(changes.begin(), changes.end(), [](const GroupChange& a, const GroupChange& b) {
    return std::abs(a.saved_ms()) > std::abs(b.saved_ms());
  });
  return changes;
}

}  // namespace

double PolicyReport::per_dispatch_us() const {
  return dispatches == 0 ? 0 : 1e3 * outside_kernels_ms() / double(dispatches);
}

bool PolicyReport::adds_up() const {
  return std::abs(end_to_end.median_ms - kernel_sum_ms) <= 0.1 * end_to_end.median_ms;
}

FusionReport make_fusion_report(const std::string& model_path, const FusionReportOptions& o, std::ostream& progress) {
  TESSEL_USER_CHECK(!o.policies.empty(), Span{}) << "--policies needs at least one policy";
  TESSEL_USER_CHECK(o.repeat >= 1, Span{}) << "--repeat must be at least 1";
  FusionReport report;
  report.model = model_path;
  Roofline roof = machine_roofline(o.target, false, progress);
  report.machine = roof.machine;
  std::vector<Tensor> first_outputs;
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < o.policies.size(); ++i) {
    std::string name(passes::fusion_policy_name(o.policies[i]));
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    progress << "[" << i + 1 << "/" << o.policies.size() << "] fusion " << name << ": compiling and profiling ("
             << int(elapsed()) << " s elapsed)\n" << std::flush;
    graph::Graph g = load_graph(model_path, o.pipeline);  // compile_graph rewrites its graph
    CompileOptions compile;
    compile.fusion = o.policies[i];
    compile.target = o.target;
    compile.tuned = o.tuned;
    JitModel model(compile_graph(g, compile));
    if (o.threads > 0) model.set_num_threads(o.threads);
    std::vector<Tensor> inputs = random_inputs(model.inputs(), o.seed);
    std::vector<Tensor> outputs = model.run(inputs);
    if (i == 0) first_outputs = outputs;
    else check_same_outputs(name, report.policies[0].policy, outputs, first_outputs);
    ModelProfile profile = profile_model(model, inputs, o.repeat);
    report.threads = profile.threads;
    report.roof = roof.at(profile.threads);
    report.policies.push_back(report_policy(name, model, profile, report.roof));
  }
  progress << "profiled " << o.policies.size() << " policies in "
           << int(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) << " s\n";
  report.changes = group_changes(report.policies);
  return report;
}

}  // namespace tessel::driver
