// The two ways out of compile_graph: model.so and the JIT.
#include "src/driver/compile_model.h"

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <optional>

#include "ir/core/diagnostics.h"
#include "ir/tensor/printer.h"
#include "src/driver/link_library.h"
#include "src/driver/targets.h"
#include "src/runtime/checksum.h"
#include "src/runtime/cpu_features.h"
#include "src/runtime/gpu/gpu_plan_executor.h"
#include "src/runtime/kernel_abi.h"
#include "src/runtime/kernel_error.h"
#include "src/runtime/plan_executor.h"
#include "src/runtime/runtime_symbols.h"
#include "src/runtime/thread_pool.h"
#include "src/runtime/tracer.h"

namespace tessel::driver {

ScheduleKind parse_schedule_kind(std::string_view name) {
  if (name == "none") return ScheduleKind::kNone;
  TESSEL_USER_CHECK(name == "default", Span{}) << "unknown schedule '" << name << "' (available: default, none)";
  return ScheduleKind::kDefault;
}

std::string_view schedule_kind_name(ScheduleKind kind) {
  return kind == ScheduleKind::kNone ? "none" : "default";
}

std::string kernel_text(const CompiledKernel& kernel) {
  return tir::to_string(kernel.flat);
}

void export_shared_library(CompiledGraph compiled, const std::string& output_path, const StageOptions& stages) {
  StageTimer timer("export", stages);
  // What tessel_model_load checks: the weights' checksum, the CPU features the kernels need.
  compiled.plan.weights_checksum = rt::checksum64(compiled.weights.data(), compiled.weights.size());
  compiled.plan.cpu_features = rt::required_cpu_features(compiled.target.cpu.features);
  std::vector<uint8_t> plan_bytes = rt::serialize_plan(compiled.plan);
  codegen::ModelData data{plan_bytes, compiled.weights, {}};
  for (const CompiledKernel& k : compiled.kernels) data.kernel_order.push_back(k.symbol);
  namespace fs = std::filesystem;
  fs::path object = fs::temp_directory_path() / ("tessel_" + std::to_string(getpid()) + "_" +
                                                 fs::path(output_path).filename().string() + ".o");
  compiled.module->export_object(data, object.string());
  try {
    link_model_library(
        {object.string()}, output_path,
        compiled.target.kind == codegen::TargetKind::kCuda ? ModelRuntime::kGpu : ModelRuntime::kCpu);
  } catch (...) {
    fs::remove(object);
    throw;
  }
  fs::remove(object);
}

// The plan on host memory through the kernels' entries, or, for a GPU
// module, on device memory through its runner.
struct JitModel::Executor {
  std::optional<rt::PlanExecutor> host;
  std::optional<rt::GpuPlanExecutor> gpu;
  std::unique_ptr<rt::GpuPlanExecutor::Workspace> gpu_workspace;
};

namespace {

std::vector<size_t> gpu_functions(rt::GpuRunner& runner, const std::vector<CompiledKernel>& kernels) {
  std::vector<size_t> out;
  for (const CompiledKernel& k : kernels) out.push_back(runner.index(k.symbol));
  return out;
}

}  // namespace

JitModel::JitModel(CompiledGraph compiled)
    : plan_(std::move(compiled.plan)),
      weights_(DType::kU8, {int64_t(compiled.weights.size())}),
      kernels_(std::move(compiled.kernels)) {
  check_runs_here(compiled.target);
  if (!compiled.weights.empty()) std::memcpy(weights_.raw(), compiled.weights.data(), compiled.weights.size());
  code_ = compiled.module->load(codegen::runtime_symbols(rt::kernel_runtime_symbols()));
  executor_ = std::make_unique<Executor>();
  if (rt::GpuRunner* runner = code_->gpu_runner()) {
    try {
      executor_->gpu.emplace(plan_, *runner, gpu_functions(*runner, kernels_), weights_.raw());
      executor_->gpu_workspace = executor_->gpu->workspace();
    } catch (const rt::StatusError& e) {
      TESSEL_USER_ERROR(Span{}) << e.what();
    }
    return;
  }
  std::vector<tessel_kernel_fn> table;
  for (const CompiledKernel& k : kernels_) table.push_back(code_->lookup(k.symbol));
  executor_->host.emplace(plan_, std::move(table), weights_.raw());
  arena_storage_.resize(size_t(plan_.arena_bytes) + 64);
}

JitModel::~JitModel() = default;

// The in-process pool is the process's one (as a model.so has its own).
void JitModel::set_num_threads(int threads) { rt::set_num_threads(threads); }
int JitModel::num_threads() const { return rt::get_num_threads(); }

std::string JitModel::device() const {
  rt::GpuRunner* runner = code_->gpu_runner();
  return runner ? "cuda: " + runner->device().name() : "cpu";
}

std::vector<KernelInfo> JitModel::kernels() const {
  std::vector<KernelInfo> out;
  for (const rt::Step& s : plan_.steps) {
    const codegen::KernelUsage& u = kernels_.at(s.kernel).usage;
    out.push_back({s.name, s.flops, s.bytes, u.max_registers, u.spill_bytes, u.shared_bytes});
  }
  return out;
}

std::vector<Tensor> JitModel::run_kernel(size_t i, const std::vector<Tensor>& inputs) const {
  const tir::PrimFunc& f = kernels_.at(i).flat;
  TESSEL_ICHECK(inputs.size() == f->inputs.size()) << "kernel " << kernels_[i].symbol << " takes "
                                                   << f->inputs.size() << " inputs";
  std::vector<Tensor> outputs;
  for (const tir::Buffer& b : f->outputs) outputs.emplace_back(b->dtype, b->shape);
  std::vector<void*> args;
  for (const Tensor& t : inputs) args.push_back(const_cast<void*>(t.raw()));
  for (Tensor& t : outputs) args.push_back(t.raw());
  int32_t status = code_->call(kernels_[i].symbol, args.data());
  if (status != 0) {
    std::string why = rt::take_kernel_error();
    TESSEL_USER_ERROR(Span{}) << "kernel " << kernels_[i].symbol << " failed with status " << status
                              << (why.empty() ? "" : ": " + why);
  }
  return outputs;
}

std::vector<Tensor> JitModel::run(const std::vector<Tensor>& inputs, std::vector<double>* kernel_seconds) {
  std::vector<tessel_tensor> in, out;
  for (const Tensor& t : inputs)
    in.push_back({const_cast<void*>(t.raw()), tessel_dtype(t.dtype()), int32_t(t.rank()), t.shape().data()});
  std::vector<Tensor> outputs;
  for (const rt::TensorSpec& spec : plan_.outputs) outputs.emplace_back(DType(spec.dtype), spec.shape);
  for (Tensor& t : outputs) out.push_back({t.raw(), tessel_dtype(t.dtype()), int32_t(t.rank()), t.shape().data()});
  auto base = reinterpret_cast<uintptr_t>(arena_storage_.data());
  void* arena = reinterpret_cast<void*>((base + 63) / 64 * 64);
  if (kernel_seconds) kernel_seconds->assign(plan_.steps.size(), 0.0);
  std::vector<int64_t> sizes(plan_.data_dependent.size());
  try {
    double* seconds = kernel_seconds ? kernel_seconds->data() : nullptr;
    if (executor_->gpu)
      executor_->gpu->run(*executor_->gpu_workspace, in.data(), int32_t(in.size()), out.data(),
                          int32_t(out.size()), seconds, sizes.data());
    else
      executor_->host->run(in.data(), int32_t(in.size()), out.data(), int32_t(out.size()), arena, seconds,
                           sizes.data());
  } catch (const rt::StatusError& e) {
    TESSEL_USER_CHECK(false, Span{}) << e.what();
  }
  for (size_t k = 0; k < sizes.size(); ++k) {
    const rt::DataDependentDim& d = plan_.data_dependent[k];
    std::vector<int64_t> shape = plan_.outputs[d.output].shape;
    shape[d.axis] = sizes[k];
    outputs[d.output] = cut_to_shape(std::move(outputs[d.output]), shape);
  }
  return outputs;
}

std::vector<Tensor> JitModel::run_traced(const std::vector<Tensor>& inputs, TracedRun& trace) {
  std::vector<Tensor> outputs;
  trace.spans = record_spans(plan_.steps.size() * 8, [&](tessel_trace_span* spans, int32_t capacity, int32_t* count) {
    TESSEL_USER_CHECK(rt::Tracer::begin(spans, capacity), Span{}) << "another traced run is in progress";
    try {
      outputs = run(inputs, &trace.kernel_seconds);
    } catch (...) {
      rt::Tracer::end();
      throw;
    }
    *count = rt::Tracer::end();
  });
  return outputs;
}

}  // namespace tessel::driver
