// The ordered list of stages. Read it top to bottom: load_graph (import and
// the target-independent graph passes), then compile_graph (the rest).
#include "src/driver/pipeline.h"

#include <algorithm>
#include <iomanip>

#include <optional>

#include "ir/core/diagnostics.h"
#include "ir/graph/op_registry.h"
#include "ir/graph/printer.h"
#include "ir/graph/scan.h"
#include "ir/graph/verifier.h"
#include "ir/tensor/printer.h"
#include "ir/tensor/verifier.h"
#include "schedules/defaults/cpu_defaults.h"
#include "schedules/defaults/cpu_knobs.h"
#include "schedules/defaults/cpu_layouts.h"
#include "schedules/defaults/gpu_defaults.h"
#include "schedules/schedule.h"
#include "src/driver/compile_model.h"
#include "src/driver/execution_plan.h"
#include "src/driver/tuning_tasks.h"
#include "src/lower/conv_shape.h"
#include "src/lower/lower_group.h"
#include "src/passes/channels_last.h"
#include "src/passes/dead_code.h"
#include "src/passes/pack_conv_weights.h"
#include "src/passes/pack_matmul_weights.h"
#include "src/passes/pretranspose_gemm_weights.h"
#include "src/tir_passes/backend_passes.h"

namespace tessel::driver {

namespace {

void after_graph_stage(const char* stage, const graph::Graph& g, const StageOptions& o) {
  if (o.verify) graph::verify_graph(g);
  if (o.prints(stage)) *o.print_to << "// after " << stage << "\n" << graph::print_graph(g) << "\n";
}

// After a stage that rewrote the kernels' functions (lowered, scheduled or
// flattened): each verified and printed.
template <typename Get>
void after_tir_stage(const char* stage, const std::vector<CompiledKernel>& kernels, Get func,
                     const StageOptions& o) {
  for (const CompiledKernel& k : kernels) {
    if (o.verify) tir::verify(func(k), o.tir_verify);
    if (o.prints(stage)) *o.print_to << "// after " << stage << ": kernel " << k.symbol << "\n"
                                     << tir::to_string(func(k)) << "\n";
  }
}

void print_groups(const std::vector<passes::NodeGroup>& groups, std::ostream& os) {
  os << "// after fusion: " << groups.size() << " groups\n";
  for (const passes::NodeGroup& group : groups) {
    os << "group " << group.name << ":";
    for (const graph::Node* n : group.nodes) os << " " << n->name << " (" << n->op << ")";
    os << "\n";
  }
}

std::string kernel_symbol(size_t index, const std::string& group_name) {
  std::string name = lower::identifier_of(group_name);
  if (name.size() > 48) name.resize(48);
  return "tessel_k" + std::to_string(index) + "_" + name;
}

double param_bytes(const tir::PrimFunc& f) {
  double bytes = 0;
  for (const tir::Buffer& b : f->params()) bytes += double(b->num_elements()) * double(dtype_size(b->dtype));
  return bytes;
}

}  // namespace

std::optional<sched::CpuScheduleOptions> cpu_schedule_options(const CompileOptions& options) {
  if (options.schedule == ScheduleKind::kNone || options.target.kind != codegen::TargetKind::kLlvm)
    return std::nullopt;
  sched::CpuScheduleOptions cpu;
  cpu.num_threads = std::max(1, options.target.cpu.cores);
  cpu.vector_lanes = options.target.cpu.vector_bits / 32;
  if (options.target.cpu.fmas_in_flight > 0) cpu.fmas_in_flight = options.target.cpu.fmas_in_flight;
  if (options.target.cpu.l2_bytes > 0) cpu.l2_bytes = options.target.cpu.l2_bytes;
  if (options.target.cpu.min_parallel_cycles > 0)
    cpu.min_parallel_cycles = options.target.cpu.min_parallel_cycles;
  return cpu;
}

std::optional<sched::GpuScheduleOptions> gpu_schedule_options(const CompileOptions& options) {
  if (options.schedule == ScheduleKind::kNone || options.target.kind != codegen::TargetKind::kCuda)
    return std::nullopt;
  const codegen::GpuTarget& gpu = options.target.gpu;
  return sched::GpuScheduleOptions{.resident_threads = gpu.resident_threads,
                                   .max_threads_per_block = gpu.max_threads_per_block,
                                   .shared_bytes_per_block = gpu.shared_bytes_per_block};
}

namespace {

// The kernel scheduled by the trace the log gives its task, replayed on its
// function with the blocks named as the task's; false when the log has none.
bool apply_tuned_schedule(const TunedSchedules& tuned, CompiledKernel& k) {
  tir::PrimFunc canonical = with_canonical_block_names(k.group.func);
  std::string key = task_key(canonical);
  auto it = tuned.tasks.find(key);
  if (it == tuned.tasks.end()) return false;
  sched::Schedule sch(canonical);
  try {
    sched::Trace::from_json(it->second.trace).apply(sch);
  } catch (const std::exception& e) {
    TESSEL_USER_CHECK(false, Span{}) << "the schedule " << tuned.path << " holds for task " << key << " (kernel "
                                     << k.symbol << ") does not apply: " << e.what();
  }
  k.scheduled = k.flat = sch.func();
  return true;
}

// Lowers the groups in plan order; a Scan's group is its body's kernels,
// grouped by body_fusion, as one region.
void lower_groups(const graph::Graph& g, const std::vector<passes::NodeGroup>& groups,
                  const lower::LayoutChoices& layouts, passes::FusionPolicy body_fusion, int parent,
                  std::vector<CompiledKernel>& kernels, std::vector<ScanRegion>& regions) {
  for (const passes::NodeGroup& group : groups) {
    TESSEL_ICHECK(passes::is_convex(g, group)) << "group " << group.name << " is not convex";
    if (const graph::Node* scan = group.nodes.front(); scan->body) {
      int region = int(regions.size());
      regions.push_back(ScanRegion{scan, parent, kernels.size(), 0});
      std::vector<passes::NodeGroup> body_groups =
          passes::make_grouping_policy(body_fusion)->group(*scan->body);
      for (passes::NodeGroup& b : body_groups) b.name = group.name + "/" + b.name;
      lower_groups(*scan->body, body_groups, layouts, body_fusion, region, kernels, regions);
      regions[size_t(region)].end = kernels.size();
      continue;
    }
    CompiledKernel k;
    k.symbol = kernel_symbol(kernels.size(), group.name);
    lower::LayoutChoices recording{
        [&layouts, &k](const lower::ConvShape& conv) {
          lower::ConvLayout layout = layouts.conv_layout(conv);
          std::pair<std::string, lower::ConvLayout> entry{lower::conv_key(conv), layout};
          if (std::find(k.conv_layouts.begin(), k.conv_layouts.end(), entry) == k.conv_layouts.end())
            k.conv_layouts.push_back(std::move(entry));
          return layout;
        },
        layouts.vector_lanes};
    k.group = lower::lower_group_with_bindings(g, group, recording);
    for (const graph::Node* n : group.nodes) k.flops += double(graph::node_flops(*n));
    kernels.push_back(std::move(k));
  }
}

// Rewrites each kernel's `flat` function with pass, as one timed stage.
template <typename Pass>
void run_tir_pass(const char* stage, std::vector<CompiledKernel>& kernels, Pass pass, const StageOptions& o) {
  {
    StageTimer t(stage, o);
    for (CompiledKernel& k : kernels) k.flat = pass(k.flat);
  }
  after_tir_stage(stage, kernels, [](const CompiledKernel& k) { return k.flat; }, o);
}

}  // namespace

lower::LayoutChoices layout_choices(const CompileOptions& options) {
  if (options.target.kind != codegen::TargetKind::kLlvm) return {};
  std::optional<sched::CpuScheduleOptions> cpu = cpu_schedule_options(options);
  if (!cpu) return {};
  bool decided = options.tuned && !options.tuned->conv_layouts.empty();
  if (!decided && options.layout_alternative == 0) return sched::default_cpu_layouts(*cpu);
  return sched::searched_cpu_layouts(
      *cpu, decided ? options.tuned->conv_layouts : std::map<std::string, lower::ConvLayout>{},
      options.layout_alternative);
}

const std::vector<std::string>& pipeline_stages() {
  static const std::vector<std::string> stages = {"import",
                                                  "eliminate_dead_code",
                                                  "pretranspose_gemm_weights",  // load_graph
                                                  "store_channels_last",
                                                  "pack_matmul_weights",
                                                  "pack_conv_weights",
                                                  "fusion",
                                                  "lower",
                                                  "schedule",  // compile_graph
                                                  "flatten_blocks",
                                                  "compact_buffers",
                                                  "partition_vector_loops",  // tensor-IR passes
                                                  "insert_barriers",         // GPU targets
                                                  "plan",
                                                  "codegen",
                                                  "export"};
  return stages;
}

void check_stage_names(const std::set<std::string>& names) {
  const std::vector<std::string>& stages = pipeline_stages();
  for (const std::string& name : names) {
    if (name == "all" || std::find(stages.begin(), stages.end(), name) != stages.end()) continue;
    std::string list;
    for (const std::string& s : stages) list += (list.empty() ? "" : ", ") + s;
    TESSEL_USER_CHECK(false, Span{}) << "unknown stage '" << name << "' (stages: all, " << list << ")";
  }
}

StageTimer::StageTimer(const std::string& stage, const StageOptions& options)
    : stage_(stage), options_(options), start_(std::chrono::steady_clock::now()) {}

StageTimer::~StageTimer() {
  if (!options_.time_to) return;
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  *options_.time_to << "time " << std::left << std::setw(26) << stage_ << std::right << std::fixed
                    << std::setprecision(2) << std::setw(10) << ms << " ms\n"
                    << std::defaultfloat;
}

graph::Graph load_graph(const std::string& path, const PipelineOptions& options) {
  const StageOptions& o = options.stages;
  // Import infers every shape and folds constant subgraphs as it goes, so the
  // passes below see static shapes wherever the model allows them.
  graph::Graph g = [&] {
    StageTimer t("import", o);
    return onnx_frontend::import_model(path, options.import);
  }();
  after_graph_stage("import", g, o);

  {
    StageTimer t("eliminate_dead_code", o);
    graph::for_each_graph(g, passes::eliminate_dead_code);
  }
  after_graph_stage("eliminate_dead_code", g, o);

  // After import's constant folding, so a B computed from constants counts too.
  {
    StageTimer t("pretranspose_gemm_weights", o);
    graph::for_each_graph(g, passes::pretranspose_gemm_weights);
  }
  after_graph_stage("pretranspose_gemm_weights", g, o);
  return g;
}

CompiledGraph compile_graph(graph::Graph& g, const CompileOptions& options) {
  StageOptions o = options.stages;
  bool gpu = options.target.kind == codegen::TargetKind::kCuda;
  o.tir_verify = {.allow_thread_bindings = gpu, .allow_parallel = !gpu};
  std::unique_ptr<codegen::Backend> backend = codegen::make_backend(options.target);  // refuses what it cannot serve
  graph::for_each_graph(g, graph::separate_swapped_states);
  TESSEL_USER_CHECK(!gpu || !graph::has_scan(g), Span{})
      << "target cuda cannot run loops (Scan, LSTM, GRU, RNN) yet: its runtime launches each kernel once; "
         "compile for llvm";
  std::optional<sched::CpuScheduleOptions> cpu = cpu_schedule_options(options);
  const lower::LayoutChoices layouts = layout_choices(options);

  // Target graph passes. B's panels as wide as the default matmul tile, the
  // weights of convs computed channels-last packed for them; only
  // where fusion joins injective producers to their anchor (every policy but
  // none and injective): elsewhere the unpacking would be a kernel of its
  // own, run every time.
  bool joins_producers = options.fusion != passes::FusionPolicy::kNone &&
                         options.fusion != passes::FusionPolicy::kInjective;
  // Channels-last activations need the conv's packed weight and its
  // epilogue in its kernel, as the packing does.
  if (cpu && joins_producers) {
    StageTimer t("store_channels_last", o);
    graph::for_each_graph(g, [&](graph::Graph& sub) {
      passes::store_channels_last(sub, options.channels_last, cpu->vector_lanes);
    });
  }
  after_graph_stage("store_channels_last", g, o);
  if (cpu && joins_producers) {
    StageTimer t("pack_matmul_weights", o);
    graph::for_each_graph(g, [&](graph::Graph& sub) {
      passes::pack_matmul_weights(
          sub, [lanes = cpu->vector_lanes, threads = cpu->num_threads](int64_t rows, int64_t columns) {
            return sched::matmul_panel_columns(rows, columns, lanes, threads);
          });
    });
  }
  after_graph_stage("pack_matmul_weights", g, o);
  if (cpu && joins_producers) {
    StageTimer t("pack_conv_weights", o);
    auto panel = [&layouts, &cpu](const graph::Node& conv) -> int64_t {
      lower::ConvShape shape = lower::conv_shape_of(conv, /*assume_packed=*/true);
      lower::ConvLayout layout = layouts.conv_layout(shape);
      return layout.form == lower::ConvForm::kChannelsLast ? sched::channels_last_panel(shape, layout, *cpu)
                                                           : 0;
    };
    graph::for_each_graph(g, [&](graph::Graph& sub) { passes::pack_conv_weights(sub, panel); });
  }
  after_graph_stage("pack_conv_weights", g, o);

  std::vector<passes::NodeGroup> groups;
  std::vector<FusionRegionChoice> fusion_regions;
  {
    StageTimer t("fusion", o);
    if (options.fusion == passes::FusionPolicy::kTuned)
      groups = tuned_fusion_groups(g, layouts, options.tuned.get(), options.fuse_every_region,
                                   fusion_regions);
    else
      groups = passes::make_grouping_policy(options.fusion)->group(g);
  }
  if (o.prints("fusion")) print_groups(groups, *o.print_to);

  std::vector<CompiledKernel> kernels;
  std::vector<ScanRegion> regions;
  size_t tuned_kernels = 0;
  {
    StageTimer t("lower", o);
    passes::FusionPolicy body_fusion =
        options.fusion == passes::FusionPolicy::kTuned ? passes::FusionPolicy::kDefault : options.fusion;
    lower_groups(g, groups, layouts, body_fusion, -1, kernels, regions);
  }
  after_tir_stage("lower", kernels, [](const CompiledKernel& k) { return k.group.func; }, o);

  {
    StageTimer t("schedule", o);
    for (size_t i = 0; i < kernels.size(); ++i) {
      CompiledKernel& k = kernels[i];
      if (options.tuned && apply_tuned_schedule(*options.tuned, k)) {
        ++tuned_kernels;
        continue;
      }
      sched::Schedule sch(k.group.func);
      if (cpu && options.knob_seed) {
        sched::KnobChoices knobs({}, *options.knob_seed + i);
        sched::CpuScheduleOptions sampled = *cpu;
        sampled.knobs = &knobs;
        sched::apply_default_cpu_schedule(sch, sampled);
      } else if (cpu) {
        sched::apply_default_cpu_schedule(sch, *cpu);
      } else if (std::optional<sched::GpuScheduleOptions> gpu_options = gpu_schedule_options(options)) {
        std::optional<sched::KnobChoices> knobs;
        if (options.knob_seed) knobs.emplace(sched::KnobDecisions{}, *options.knob_seed + i);
        gpu_options->knobs = knobs ? &*knobs : nullptr;
        sched::apply_default_gpu_schedule(sch, *gpu_options);
      }
      k.scheduled = k.flat = sch.func();
    }
  }
  after_tir_stage("schedule", kernels, [](const CompiledKernel& k) { return k.scheduled; }, o);

  for (const tir_passes::TirPass& pass :
       gpu ? tir_passes::passes_before_gpu_backend() : tir_passes::passes_before_backend())
    run_tir_pass(pass.name, kernels, pass.run, o);
  for (CompiledKernel& k : kernels) {
    tir::verify(k.flat, o.tir_verify);  // always: the backend assumes a valid function
    k.bytes = param_bytes(k.flat);
  }

  ExecutionPlan plan = [&] {
    StageTimer t("plan", o);
    return build_execution_plan(g, kernels, regions);
  }();
  if (o.prints("plan"))
    *o.print_to << "// after plan: " << plan.plan.steps.size() << " steps, arena " << plan.plan.arena_bytes
                << " bytes (" << plan.unshared_arena_bytes << " unshared), weights " << plan.weights.size()
                << " bytes\n";

  std::unique_ptr<codegen::Module> module = [&] {
    StageTimer t("codegen", o);
    std::vector<codegen::KernelSource> sources;
    for (const CompiledKernel& k : kernels) sources.push_back({k.symbol, k.flat});
    return backend->build(sources);
  }();
  for (CompiledKernel& k : kernels) k.usage = module->usage(k.symbol);
  if (o.prints("codegen")) *o.print_to << "// after codegen\n" << module->source_text() << "\n";
  // export, when asked for, is export_shared_library's (compile_model.h).
  return CompiledGraph{options.target,        std::move(kernels), std::move(plan.plan), std::move(plan.weights),
                       std::move(module), tuned_kernels, std::move(fusion_regions)};
}

}  // namespace tessel::driver
