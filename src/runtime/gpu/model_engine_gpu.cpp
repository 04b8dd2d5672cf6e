// The engine of a GPU model library: its GPU program (tessel_model_gpu_program)
// on the first GPU through the CUDA driver, or, in a library built for the
// emulator, on the emulated kernels linked into it (tessel_emu_kernels); the
// weights uploaded once, a device workspace per context.
#include "src/runtime/gpu/cuda_driver.h"
#include "src/runtime/gpu/emulated_device.h"
#include "src/runtime/gpu/gpu_plan_executor.h"
#include "src/runtime/kernel_abi.h"
#include "src/runtime/model_engine.h"

extern "C" {
extern const uint8_t tessel_model_gpu_program[];
extern const uint64_t tessel_model_gpu_program_size;
// Defined only by the emulated kernels of a library built for the emulator.
__attribute__((weak)) extern const unsigned char tessel_emu_kernels[];
__attribute__((weak)) extern const unsigned tessel_emu_kernel_count;
}

namespace tessel::rt {

namespace {

struct WorkspaceContext final : ModelEngine::Context {
  std::unique_ptr<GpuPlanExecutor::Workspace> workspace;
};

class GpuEngine final : public ModelEngine {
 public:
  GpuEngine(Plan plan, GpuProgram program, std::unique_ptr<GpuDevice> device)
      : runner_(std::move(program), std::move(device)),
        executor_(std::move(plan), runner_, kernel_functions(runner_.program()), tessel_model_weights),
        device_("cuda: " + runner_.device().name()) {}
  const Plan& plan() const override { return executor_.plan(); }
  const std::string& device() const override { return device_; }
  std::unique_ptr<Context> new_context() const override {
    auto c = std::make_unique<WorkspaceContext>();
    c->workspace = executor_.workspace();
    return c;
  }
  void run(Context& context, const tessel_tensor* inputs, int32_t num_inputs, tessel_tensor* outputs,
           int32_t num_outputs, double* kernel_seconds) const override {
    context.data_dependent_sizes.clear();
    std::vector<int64_t> sizes(plan().data_dependent.size());
    executor_.run(*static_cast<WorkspaceContext&>(context).workspace, inputs, num_inputs, outputs,
                  num_outputs, kernel_seconds, sizes.data());
    context.data_dependent_sizes = std::move(sizes);
  }
  void run_device(Context& context, const tessel_tensor* inputs, int32_t num_inputs, tessel_tensor* outputs,
                  int32_t num_outputs, void* stream) const override {
    executor_.run_device(*static_cast<WorkspaceContext&>(context).workspace, inputs, num_inputs, outputs,
                         num_outputs, stream);
  }

 private:
  // The compiler writes the program's functions in the order of the plan's kernel table.
  static std::vector<size_t> kernel_functions(const GpuProgram& p) {
    std::vector<size_t> out;
    for (size_t i = 0; i < p.functions.size(); ++i) out.push_back(i);
    return out;
  }

  GpuRunner runner_;
  GpuPlanExecutor executor_;
  std::string device_;
};

}  // namespace

std::unique_ptr<ModelEngine> load_model_engine() {
  Plan plan = deserialize_plan(tessel_model_plan, size_t(tessel_model_plan_size));
  verify_weights_checksum(plan, tessel_model_weights, tessel_model_weights_size);
  GpuProgram program =
      deserialize_gpu_program(tessel_model_gpu_program, size_t(tessel_model_gpu_program_size));
  validate_plan(plan, uint32_t(program.functions.size()), tessel_model_weights_size);
  std::unique_ptr<GpuDevice> device =
      tessel_emu_kernels ? open_emulated_device({tessel_emu_kernels, tessel_emu_kernel_count})
                         : open_cuda_device(program.image);
  return std::make_unique<GpuEngine>(std::move(plan), std::move(program), std::move(device));
}

}  // namespace tessel::rt
