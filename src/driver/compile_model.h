// The CPU compiler, end to end: a graph grouped by a fusion policy, each group
// lowered, scheduled (default CPU schedules), flattened and compacted, all
// kernels compiled by LLVM into one module, and the execution plan (kernel
// order, buffers, static memory plan, weights). The result either becomes a
// model.so (export_shared_library) or runs in this process (JitModel).
//
//   CompiledGraph c = compile_graph(g, {.fusion = "simple"});
//   export_shared_library(std::move(c), "model.so");
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/core/tensor.h"
#include "ir/graph/graph.h"
#include "src/codegen/llvm/llvm_module.h"
#include "src/driver/compiled_model.h"
#include "src/lower/lower_group.h"
#include "src/runtime/kernel_abi.h"
#include "src/runtime/plan.h"

namespace tessel::driver {

struct CompileOptions {
  std::string fusion = "simple";  // the grouping policy: "none" | "simple"
  std::string schedule = "default";  // "default": hand-written CPU schedules; "none": as lowered
  codegen::CodegenOptions codegen;
};

struct CompiledKernel {
  std::string symbol;
  lower::LoweredGroup group;
  tir::PrimFunc scheduled;  // after the schedule, before flattening
  tir::PrimFunc flat;       // what the backend compiled
  double flops = 0;
  double bytes = 0;         // of its parameters, each once
};

struct CompiledGraph {
  std::vector<CompiledKernel> kernels;  // in plan order
  rt::Plan plan;
  std::vector<uint8_t> weights;  // the plan's weight slots point into this
  codegen::LlvmModule module;
};

// First runs the graph passes that depend on the target and schedule on g
// itself (pack_matmul_weights): its outputs stay the same, its constants and
// nodes may not, and the kernels' groups point into it.
CompiledGraph compile_graph(graph::Graph& g, const CompileOptions& options);

// Writes model.so: the module with the plan and weights embedded, as an
// object file linked with the model runtime (src/runtime/).
void export_shared_library(CompiledGraph compiled, const std::string& output_path);

// A compiled graph run in this process: the JIT's kernels driven by the
// runtime's PlanExecutor and thread pool, as model.so would run them.
class JitModel final : public CompiledModel {
 public:
  explicit JitModel(CompiledGraph compiled);
  ~JitModel() override;

  const std::vector<rt::TensorSpec>& inputs() const override { return plan_.inputs; }
  const std::vector<rt::TensorSpec>& outputs() const override { return plan_.outputs; }
  std::vector<KernelInfo> kernels() const override;
  int64_t arena_bytes() const override { return int64_t(plan_.arena_bytes); }
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, std::vector<double>* kernel_seconds = nullptr) override;
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
  std::unique_ptr<codegen::JitModule> jit_;
  std::vector<tessel_kernel_fn> table_;
  struct Executor;
  std::unique_ptr<Executor> executor_;
  std::vector<uint8_t> arena_storage_;
};

}  // namespace tessel::driver
