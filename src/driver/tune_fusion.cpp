#include "src/driver/tune_fusion.h"

#include <cstdint>
#include <map>
#include <set>

#include "src/driver/tuned_schedules.h"

namespace tessel::driver {

namespace {

// The tasks of `kernels` not yet in out, as alternative-only tasks.
void add_alternative_tasks(std::vector<TuningTask> found, SessionTasks& out) {
  std::set<std::string> known;
  for (const TuningTask& t : out.tasks) known.insert(t.key);
  for (TuningTask& t : found) {
    if (known.count(t.key)) continue;
    out.tasks.push_back(std::move(t));
    out.alternative_only.push_back(true);
  }
}

}  // namespace

SessionTasks session_tasks(const std::string& model_path, const PipelineOptions& pipeline,
                           const CompileOptions& options, bool search_layouts) {
  bool tuned = options.fusion == passes::FusionPolicy::kTuned;
  CompileOptions base = options;
  if (tuned) base.fusion = passes::FusionPolicy::kDefault;
  SessionTasks out;
  {
    graph::Graph g = load_graph(model_path, pipeline);
    CompiledGraph compiled = compile_graph(g, base);
    out.tasks = extract_tasks(compiled);
    out.kernels = compiled.kernels.size();
    if (search_layouts) add_layout_variants(compiled.kernels, out.tasks, out.layouts);
  }
  out.alternative_only.assign(out.tasks.size(), false);
  if (tuned) {
    CompileOptions alternative = options;
    alternative.fuse_every_region = true;
    graph::Graph g = load_graph(model_path, pipeline);
    CompiledGraph compiled = compile_graph(g, alternative);
    out.regions = compiled.fusion_regions;
    add_alternative_tasks(extract_tasks(compiled), out);
  }
  // Each compile moves every conv to its next candidate layout, until no
  // conv has one.
  for (int alternative = 1; search_layouts; ++alternative) {
    CompileOptions variant = base;
    variant.layout_alternative = alternative;
    graph::Graph g = load_graph(model_path, pipeline);
    CompiledGraph compiled = compile_graph(g, variant);
    std::vector<TuningTask> found = extract_tasks(compiled);
    if (add_layout_variants(compiled.kernels, found, out.layouts) == 0) break;
    add_alternative_tasks(std::move(found), out);
  }
  return out;
}

std::vector<tune::FusionRecord> decide_fusion(const std::vector<FusionRegionChoice>& regions,
                                              const std::vector<TunedTask>& tasks, const std::string& target,
                                              const std::string& version) {
  std::map<std::string, double> applied;
  for (const TunedTask& t : tasks)
    if (t.default_ms > 0) applied[t.key] = t.applied_ms();
  auto side_ms = [&](const std::vector<std::string>& keys) {
    double total = 0;
    for (const std::string& k : keys) {
      auto it = applied.find(k);
      if (it == applied.end()) return 0.0;
      total += it->second;
    }
    return total;
  };
  std::vector<tune::FusionRecord> out;
  std::map<std::string, size_t> decided;  // a subgraph repeated in the model is one region key
  for (const FusionRegionChoice& r : regions) {
    if (auto it = decided.find(r.key); it != decided.end()) {
      if (it->second < out.size()) ++out[it->second].runs;
      continue;
    }
    decided[r.key] = SIZE_MAX;
    double base_ms = side_ms(r.base_tasks), alternative_ms = side_ms(r.alternative_tasks);
    if (base_ms <= 0 || alternative_ms <= 0) continue;
    tune::FusionRecord f;
    f.target = target;
    f.compiler_version = version;
    f.base = r.base_tasks;
    f.alternative = r.alternative_tasks;
    f.base_ms = base_ms;
    f.alternative_ms = alternative_ms;
    // The base's groups stay unless the alternative is clearly faster, as a
    // default schedule stays unless a candidate is.
    f.take_alternative = applied_time(base_ms, alternative_ms) == alternative_ms;
    f.base_ops = r.base_ops;
    f.alternative_ops = r.alternative_ops;
    decided[r.key] = out.size();
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tessel::driver
