// CudaBackend: build = generate_cuda (+ NVRTC unless emulated); load = the
// GPU runtime's runner on the emulator, or on a GPU through the CUDA driver.
#include "src/codegen/cuda/cuda_backend.h"

#include "ir/core/diagnostics.h"
#include "src/codegen/cuda/cuda_codegen.h"
#include "src/codegen/cuda/cuda_emulator.h"
#include "src/codegen/cuda/cuda_model_object.h"
#include "src/codegen/cuda/nvrtc_compile.h"
#include "src/codegen/cuda/nvrtc_library.h"
#include "src/runtime/gpu/cuda_driver.h"
#include "src/runtime/gpu/gpu_runner.h"
#include "src/runtime/plan.h"

namespace tessel::codegen {

namespace {

// The program's functions on a GPU or the emulator, through the GPU runtime.
class CudaLoaded final : public LoadedModule {
 public:
  explicit CudaLoaded(std::unique_ptr<rt::GpuRunner> runner) : runner_(std::move(runner)) {}
  KernelFn lookup(const std::string& symbol) const override {
    TESSEL_ICHECK(false) << symbol << " runs on " << runner_->device().name() << ", not in this process";
    return nullptr;
  }
  int32_t call(const std::string& symbol, void* const* args) const override {
    return runner_->call_host(index(symbol), args);
  }
  double time_function(const std::string& symbol, void* const* args, int repeat) const override {
    TESSEL_ICHECK(repeat >= 1) << "time_function needs at least one run";
    try {
      return runner_->time_host(index(symbol), args, repeat);
    } catch (const rt::StatusError& e) {
      TESSEL_USER_ERROR(Span{}) << e.what();
    }
    return 0;
  }
  rt::GpuRunner* gpu_runner() const override { return runner_.get(); }

 private:
  size_t index(const std::string& symbol) const {
    try {
      return runner_->index(symbol);
    } catch (const rt::StatusError& e) {
      TESSEL_ICHECK(false) << e.what();
    }
    return 0;
  }
  std::unique_ptr<rt::GpuRunner> runner_;
};

// The device that runs the program: the emulator, or the first GPU; a user error saying why not.
std::unique_ptr<rt::GpuDevice> open_device(const Target& target, const CudaProgram& program,
                                           const rt::CudaImage& image) {
  if (target.gpu.emulated) return open_emulated_device(program.source);
  try {
    return rt::open_cuda_device(image);
  } catch (const rt::StatusError& e) {
    TESSEL_USER_ERROR(Span{}) << e.what() << "; --target cuda-emulated runs the generated CUDA C on this CPU";
  }
  return nullptr;
}

std::string dims(const int64_t (&d)[3]) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

class CudaBuilt final : public Module {
 public:
  CudaBuilt(const Target& target, CudaProgram program) : target_(target), program_(std::move(program)) {
    if (!target_.gpu.emulated)
      nvrtc_ = nvrtc_compile(program_.source, "tessel_kernels.cu", target_.gpu.sm, target_.gpu.fast_math);
  }
  // The text opens with each launch's grid, block and shared memory, and,
  // compiled for a GPU, what ptxas reported of its kernel.
  std::string source_text() const override {
    std::string head = nvrtc_.resources.empty() ? "// launches:\n"
                                                : "// launches, with ptxas's report for sm_" +
                                                      std::to_string(target_.gpu.sm) + ":\n";
    for (const CudaFunction& f : program_.functions)
      for (const CudaLaunch& l : f.launches) {
        head += "//   " + l.kernel + ": grid " + dims(l.grid) + ", block " + dims(l.block) + ", " +
                std::to_string(l.shared_bytes) + " bytes shared";
        if (auto it = nvrtc_.resources.find(l.kernel); it != nvrtc_.resources.end())
          head += ", " + std::to_string(it->second.registers) + " registers, " +
                  std::to_string(it->second.spill_store_bytes + it->second.spill_load_bytes) +
                  " bytes spilled";
        head += "\n";
      }
    return head + program_.source;
  }
  KernelUsage usage(const std::string& symbol) const override {
    KernelUsage u;
    for (const CudaFunction& f : program_.functions) {
      if (!symbol.empty() && f.symbol != symbol) continue;
      for (const CudaLaunch& l : f.launches) {
        u.shared_bytes = std::max(u.shared_bytes, l.shared_bytes);
        auto it = nvrtc_.resources.find(l.kernel);
        if (it == nvrtc_.resources.end()) continue;
        u.max_registers = std::max(u.max_registers, it->second.registers);
        u.spill_bytes += it->second.spill_store_bytes + it->second.spill_load_bytes;
      }
    }
    return u;
  }
  // The emulator's library holds the kernels compiled for this host; a GPU's, the CUBIN and PTX.
  void export_object(const ModelData& data, const std::string& path) override {
    rt::GpuProgram program = in_kernel_order(gpu_program(program_), data.kernel_order);
    if (!target_.gpu.emulated) program.image = image();
    write_cuda_model_object(program, target_.gpu.emulated ? program_.source : "", data, path);
  }
  std::unique_ptr<LoadedModule> load(const std::vector<RuntimeSymbol>&) override {
    std::unique_ptr<rt::GpuDevice> device = open_device(target_, program_, image());
    try {
      return std::make_unique<CudaLoaded>(
          std::make_unique<rt::GpuRunner>(gpu_program(program_), std::move(device)));
    } catch (const rt::StatusError& e) {
      TESSEL_USER_ERROR(Span{}) << "loading the CUDA program: " << e.what();
    }
    return nullptr;
  }

 private:
  rt::CudaImage image() const {
    return {target_.gpu.sm, std::string(nvrtc_.cubin.begin(), nvrtc_.cubin.end()), nvrtc_.ptx};
  }

  Target target_;
  CudaProgram program_;
  NvrtcResult nvrtc_;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const Target& target) : target_(target) {}
  const Target& target() const override { return target_; }
  std::unique_ptr<Module> build(const std::vector<KernelSource>& kernels) const override {
    return std::make_unique<CudaBuilt>(target_, generate_cuda(kernels, target_.gpu));
  }

 private:
  Target target_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const Target& target) {
  if (!target.gpu.emulated) {
    std::string why = cuda_target_unavailable_reason();
    TESSEL_USER_CHECK(why.empty(), Span{}) << "target cuda is unavailable: " << why;
  }
  return std::make_unique<CudaBackend>(target);
}

}  // namespace tessel::codegen
