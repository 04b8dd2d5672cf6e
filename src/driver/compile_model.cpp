// compile_graph: lowering, schedules and code generation of every group, and
// the execution plan; the two ways out (model.so, the JIT).
#include "src/driver/compile_model.h"

#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>
#include <unistd.h>

#include "ir/core/diagnostics.h"
#include "ir/graph/op_registry.h"
#include "ir/tensor/verifier.h"
#include "schedules/defaults/cpu_defaults.h"
#include "schedules/schedule.h"
#include "src/driver/execution_plan.h"
#include "src/driver/link_library.h"
#include "src/lower/compact_buffers.h"
#include "src/lower/flatten_blocks.h"
#include "src/lower/partition_loops.h"
#include "src/passes/pack_matmul_weights.h"
#include "src/runtime/kernel_abi.h"
#include "src/runtime/kernel_error.h"
#include "src/runtime/plan_executor.h"
#include "src/runtime/thread_pool.h"

namespace tessel::driver {

namespace {

std::string kernel_symbol(size_t index, const std::string& group_name) {
  std::string name = lower::identifier_of(group_name);
  if (name.size() > 48) name.resize(48);
  return "tessel_k" + std::to_string(index) + "_" + name;
}

double group_flops(const lower::NodeGroup& group) {
  double flops = 0;
  for (const graph::Node* n : group.nodes) flops += double(graph::node_flops(*n));
  return flops;
}

double param_bytes(const tir::PrimFunc& f) {
  double bytes = 0;
  for (const tir::Buffer& b : f->params()) bytes += double(b->num_elements()) * double(dtype_size(b->dtype));
  return bytes;
}

// The default schedule's options for the target (nullopt: schedule "none"),
// worked out once per compile: the vector width asks LLVM for a target machine.
std::optional<sched::CpuScheduleOptions> cpu_schedule_options(const CompileOptions& options) {
  if (options.schedule == "none") return std::nullopt;
  TESSEL_USER_CHECK(options.schedule == "default", Span{})
      << "unknown schedule '" << options.schedule << "' (available: default, none)";
  sched::CpuScheduleOptions cpu;
  cpu.num_threads = int(std::max(1u, std::thread::hardware_concurrency()));
  cpu.vector_lanes = codegen::vector_register_bits(options.codegen.target) / 32;
  return cpu;
}

tir::PrimFunc schedule_group(const tir::PrimFunc& func, const std::optional<sched::CpuScheduleOptions>& cpu) {
  sched::Schedule sch(func);
  if (cpu) sched::apply_default_cpu_schedule(sch, *cpu);
  return sch.func();
}

}  // namespace

CompiledGraph compile_graph(graph::Graph& g, const CompileOptions& options) {
  std::optional<sched::CpuScheduleOptions> cpu = cpu_schedule_options(options);
  // B's panels as wide as the default matmul tile. Not without fusion, where
  // the unpacking would be kernels of their own.
  if (cpu && options.fusion != "none")
    passes::pack_matmul_weights(g, [lanes = cpu->vector_lanes](int64_t rows, int64_t columns) {
      return sched::matmul_tile_columns(rows, columns, lanes);
    });
  std::vector<lower::LoweredGroup> groups = lower::lower_graph(g, *lower::make_grouping_policy(options.fusion));
  std::vector<CompiledKernel> kernels;
  std::vector<codegen::KernelSource> sources;
  for (size_t i = 0; i < groups.size(); ++i) {
    CompiledKernel k;
    k.symbol = kernel_symbol(i, groups[i].group.name);
    k.scheduled = schedule_group(groups[i].func, cpu);
    k.flat = lower::partition_vector_loops(lower::compact_buffers(lower::flatten_blocks(k.scheduled)));
    tir::verify(k.flat);
    k.flops = group_flops(groups[i].group);
    k.bytes = param_bytes(k.flat);
    k.group = std::move(groups[i]);
    sources.push_back({k.symbol, k.flat});
    kernels.push_back(std::move(k));
  }
  ExecutionPlan plan = build_execution_plan(g, kernels);
  codegen::LlvmModule module = codegen::LlvmModule::build(sources, options.codegen);
  return CompiledGraph{std::move(kernels), std::move(plan.plan), std::move(plan.weights), std::move(module)};
}

void export_shared_library(CompiledGraph compiled, const std::string& output_path) {
  std::vector<uint8_t> plan_bytes = rt::serialize_plan(compiled.plan);
  std::vector<std::string> order;
  for (const CompiledKernel& k : compiled.kernels) order.push_back(k.symbol);
  compiled.module.add_model_data(plan_bytes, compiled.weights, order);
  namespace fs = std::filesystem;
  fs::path object = fs::temp_directory_path() / ("tessel_" + std::to_string(getpid()) + "_" +
                                                 fs::path(output_path).filename().string() + ".o");
  compiled.module.write_object(object.string());
  try {
    link_model_library({object.string()}, output_path);
  } catch (...) {
    fs::remove(object);
    throw;
  }
  fs::remove(object);
}

struct JitModel::Executor {
  rt::PlanExecutor executor;
};

JitModel::JitModel(CompiledGraph compiled)
    : plan_(std::move(compiled.plan)),
      weights_(DType::kU8, {int64_t(compiled.weights.size())}),
      kernels_(std::move(compiled.kernels)) {
  if (!compiled.weights.empty()) std::memcpy(weights_.raw(), compiled.weights.data(), compiled.weights.size());
  jit_ = codegen::JitModule::create(std::move(compiled.module),
                                    {{"tessel_rt_parallel_for", reinterpret_cast<void*>(&tessel_rt_parallel_for)},
                                     {"tessel_rt_kernel_error", reinterpret_cast<void*>(&tessel_rt_kernel_error)}});
  for (const CompiledKernel& k : kernels_) table_.push_back(jit_->lookup(k.symbol));
  executor_ = std::make_unique<Executor>(Executor{rt::PlanExecutor(plan_, table_, weights_.raw())});
  arena_storage_.resize(size_t(plan_.arena_bytes) + 64);
}

JitModel::~JitModel() = default;

// The in-process pool is the process's one (as a model.so has its own).
void JitModel::set_num_threads(int threads) { rt::set_num_threads(threads); }
int JitModel::num_threads() const { return rt::get_num_threads(); }

std::vector<KernelInfo> JitModel::kernels() const {
  std::vector<KernelInfo> out;
  for (const rt::Step& s : plan_.steps) out.push_back({s.name, s.flops, s.bytes});
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
  int32_t status = table_[i](args.data());
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
  try {
    executor_->executor.run(in.data(), int32_t(in.size()), out.data(), int32_t(out.size()), arena,
                            kernel_seconds ? kernel_seconds->data() : nullptr);
  } catch (const rt::StatusError& e) {
    TESSEL_USER_CHECK(false, Span{}) << e.what();
  }
  return outputs;
}

}  // namespace tessel::driver
