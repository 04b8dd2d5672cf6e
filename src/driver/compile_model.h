// A compiled graph and its two ways out: a model.so (export_shared_library)
// or a run in this process (JitModel). compile_graph, the pipeline from a
// graph to kernels, execution plan and module, is in pipeline.cpp: a graph
// grouped by a fusion policy, each group lowered, scheduled (default CPU
// schedules), flattened and compacted, all kernels built by the target's
// backend into one module, and the plan (kernel order, buffers, static memory
// plan, weights).
//
//   CompiledGraph c = compile_graph(g, {.fusion = passes::FusionPolicy::kSimple});
//   export_shared_library(std::move(c), "model.so");
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/core/tensor.h"
#include "ir/graph/graph.h"
#include "schedules/defaults/cpu_defaults.h"
#include "schedules/defaults/gpu_defaults.h"
#include "src/codegen/backend.h"
#include "src/driver/compiled_model.h"
#include "src/driver/pipeline.h"
#include "src/driver/tuned_fusion.h"
#include "src/driver/tuned_schedules.h"
#include "src/lower/lower_group.h"
#include "src/passes/channels_last.h"
#include "src/runtime/kernel_abi.h"
#include "src/runtime/plan.h"

namespace tessel::driver {

// default: the hand-written schedules of the target (CPU or GPU); none: the loops as lowered.
enum class ScheduleKind { kDefault, kNone };
ScheduleKind parse_schedule_kind(std::string_view name);  // a user error listing the kinds
std::string_view schedule_kind_name(ScheduleKind kind);

struct CompileOptions {
  passes::FusionPolicy fusion = passes::FusionPolicy::kDefault;
  // Which activations a CPU target's kernels keep channels-last between them
  // (passes::store_channels_last).
  passes::ChannelsLastPolicy channels_last = passes::ChannelsLastPolicy::kDepthwise;
  ScheduleKind schedule = ScheduleKind::kDefault;
  codegen::Target target = codegen::default_target();
  StageOptions stages;
  // Tuned schedules (`--tuning-log`) replacing the default ones of the kernels
  // they are for, and the decisions fusion tuned takes.
  std::shared_ptr<const TunedSchedules> tuned;
  // Fusion tuned with aggressive's groups in every region, whatever the log
  // says: the alternatives a tuning session measures.
  bool fuse_every_region = false;
  // Each default-scheduled kernel's knobs drawn from the tuner's search space
  // with this seed (plus its index), instead of the default's picks: tests
  // that every point of the space compiles and computes what it should.
  std::optional<uint64_t> knob_seed;
  // > 0: each conv computed in its candidate layout of this index, where it
  // has one (sched::searched_cpu_layouts): the alternatives a tuning session measures.
  int layout_alternative = 0;
};

// The layout decisions the compute definitions get for these options: for
// an llvm target the default CPU schedule's (sched::default_cpu_layouts),
// except where the tuning log decided otherwise or a layout alternative is
// asked for (sched::searched_cpu_layouts); the direct forms without a
// schedule or for another target.
lower::LayoutChoices layout_choices(const CompileOptions& options);

// The default CPU schedule's options for these options' target (nullopt: schedule none).
std::optional<sched::CpuScheduleOptions> cpu_schedule_options(const CompileOptions& options);
// The default GPU schedule's options for a cuda target (nullopt: schedule none, or a CPU target).
std::optional<sched::GpuScheduleOptions> gpu_schedule_options(const CompileOptions& options);

struct CompiledKernel {
  std::string symbol;
  lower::LoweredGroup group;
  tir::PrimFunc scheduled;  // after the schedule, before flattening
  tir::PrimFunc flat;       // what the backend built
  double flops = 0;
  double bytes = 0;         // of its parameters, each once
  // The convolutions it computes (lower::conv_key) and the layout of each.
  std::vector<std::pair<std::string, lower::ConvLayout>> conv_layouts;
  codegen::KernelUsage usage;  // a GPU kernel's registers, spills and shared memory
};

// The kernel's tensor IR as the backend built it (scheduled and flattened).
std::string kernel_text(const CompiledKernel& kernel);

struct CompiledGraph {
  codegen::Target target;
  std::vector<CompiledKernel> kernels;  // in plan order
  rt::Plan plan;
  std::vector<uint8_t> weights;  // the plan's weight slots point into this
  std::unique_ptr<codegen::Module> module;
  size_t tuned_kernels = 0;  // scheduled from CompileOptions::tuned
  std::vector<FusionRegionChoice> fusion_regions;  // fusion tuned: what it decided where
};

// First runs the graph passes that depend on the target and schedule on g
// itself (pack_matmul_weights): its outputs stay the same, its constants and
// nodes may not, and the kernels' groups point into it. A target the
// backends cannot serve is a user error.
CompiledGraph compile_graph(graph::Graph& g, const CompileOptions& options);

// Writes model.so: the module with the plan and weights embedded, as an
// object file linked with the model runtime (src/runtime/).
// The pipeline's last stage, "export" (timed with stages.time_to).
void export_shared_library(CompiledGraph compiled, const std::string& output_path, const StageOptions& stages = {});

// A compiled graph run in this process: the JIT's kernels driven by the
// runtime's PlanExecutor and thread pool, as model.so would run them.
class JitModel final : public CompiledModel {
 public:
  // A user error when this CPU lacks a feature the target's code uses.
  explicit JitModel(CompiledGraph compiled);
  ~JitModel() override;

  const std::vector<rt::TensorSpec>& inputs() const override { return plan_.inputs; }
  const std::vector<rt::TensorSpec>& outputs() const override { return plan_.outputs; }
  std::vector<KernelInfo> kernels() const override;
  int64_t arena_bytes() const override { return int64_t(plan_.arena_bytes); }
  std::string device() const override;
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, std::vector<double>* kernel_seconds = nullptr) override;
  std::vector<Tensor> run_traced(const std::vector<Tensor>& inputs, TracedRun& trace) override;
  void set_num_threads(int threads) override;
  int num_threads() const override;

  // The kernels one by one, for checks of each against the reference:
  // runs kernel i on tensors of its group's inputs and returns its outputs.
  const std::vector<CompiledKernel>& compiled_kernels() const { return kernels_; }
  std::vector<Tensor> run_kernel(size_t i, const std::vector<Tensor>& inputs) const;
  const rt::Plan& plan() const { return plan_; }

 private:
  rt::Plan plan_;
  Tensor weights_;  // u8, 64-byte aligned as kernels assume
  std::vector<CompiledKernel> kernels_;
  std::unique_ptr<codegen::LoadedModule> code_;
  struct Executor;
  std::unique_ptr<Executor> executor_;
  std::vector<uint8_t> arena_storage_;
};

}  // namespace tessel::driver
