// CudaBackend: build = generate_cuda (+ NVRTC unless emulated); load = the
// emulator's library, or, for a real GPU, the CUDA driver.
#include "src/codegen/cuda/cuda_backend.h"

#include <dlfcn.h>

#include "ir/core/diagnostics.h"
#include "src/codegen/cuda/cuda_codegen.h"
#include "src/codegen/cuda/cuda_emulator.h"
#include "src/codegen/cuda/nvrtc_compile.h"
#include "src/codegen/cuda/nvrtc_library.h"

namespace tessel::codegen {

namespace {

class EmulatedLoaded final : public LoadedModule {
 public:
  EmulatedLoaded(const std::string& source, KernelErrorReporter report) : library_(source, report) {}
  KernelFn lookup(const std::string& symbol) const override { return library_.entry(symbol); }
  double time_function(const std::string& symbol, void* const* args, int repeat) const override {
    return median_call_seconds(lookup(symbol), symbol, args, repeat);
  }

 private:
  EmulatedCudaLibrary library_;
};

KernelErrorReporter kernel_error_reporter(const std::vector<RuntimeSymbol>& symbols) {
  for (const RuntimeSymbol& s : symbols)
    if (s.name == "tessel_rt_kernel_error") return reinterpret_cast<KernelErrorReporter>(s.address);
  TESSEL_ICHECK(false) << "loading CUDA code needs the runtime's tessel_rt_kernel_error";
  return nullptr;
}

class CudaBuilt final : public Module {
 public:
  CudaBuilt(const Target& target, CudaProgram program) : target_(target), program_(std::move(program)) {
    if (!target_.gpu.emulated) nvrtc_ = nvrtc_compile(program_.source, "tessel_kernels.cu", target_.gpu.sm);
  }
  // Compiled for a GPU, the text opens with what ptxas reported of each kernel.
  std::string source_text() const override {
    if (nvrtc_.resources.empty()) return program_.source;
    std::string head = "// ptxas, sm_" + std::to_string(target_.gpu.sm) + ", per kernel:\n";
    for (const CudaFunction& f : program_.functions)
      for (const CudaLaunch& l : f.launches) {
        auto it = nvrtc_.resources.find(l.kernel);
        if (it == nvrtc_.resources.end()) continue;
        const KernelResources& r = it->second;
        head += "//   " + l.kernel + ": " + std::to_string(r.registers) + " registers, " +
                std::to_string(r.spill_store_bytes + r.spill_load_bytes) + " bytes spilled, " +
                std::to_string(l.shared_bytes) + " bytes shared, grid " + std::to_string(l.grid[0]) + "x" +
                std::to_string(l.grid[1]) + "x" + std::to_string(l.grid[2]) + ", block " +
                std::to_string(l.block[0]) + "x" + std::to_string(l.block[1]) + "x" +
                std::to_string(l.block[2]) + "\n";
      }
    return head + program_.source;
  }
  void export_object(const ModelData&, const std::string& path) override {
    TESSEL_USER_ERROR(Span{})
        << "writing " << path << ": a model library for target cuda is not built yet; "
        << "compile for llvm, or run the CUDA C on this CPU with --target cuda-emulated";
  }
  std::unique_ptr<LoadedModule> load(const std::vector<RuntimeSymbol>& runtime_symbols) override {
    if (target_.gpu.emulated)
      return std::make_unique<EmulatedLoaded>(program_.source, kernel_error_reporter(runtime_symbols));
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    const char* why = driver ? nullptr : dlerror();
    TESSEL_USER_CHECK(driver != nullptr, Span{})
        << "no CUDA driver (libcuda.so.1: " << (why ? why : "not found") << "): this machine cannot run CUDA "
        << "code; --target cuda-emulated runs the generated CUDA C on this CPU";
    dlclose(driver);
    TESSEL_USER_ERROR(Span{}) << "running compiled CUDA on the GPU is not part of this Tessel yet; "
                              << "--target cuda-emulated runs the generated CUDA C on this CPU";
    return nullptr;
  }

 private:
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
