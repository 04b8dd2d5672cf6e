// LlvmBackend: Backend, Module and LoadedModule over LlvmModule and JitModule.
#include "src/codegen/llvm/llvm_backend.h"

#include <algorithm>
#include <chrono>

#include "ir/core/diagnostics.h"
#include "src/codegen/llvm/llvm_module.h"

namespace tessel::codegen {

namespace {

class LlvmLoaded final : public LoadedModule {
 public:
  explicit LlvmLoaded(std::unique_ptr<JitModule> jit) : jit_(std::move(jit)) {}
  KernelFn lookup(const std::string& symbol) const override { return jit_->lookup(symbol); }

  double time_function(const std::string& symbol, void* const* args, int repeat) const override {
    return median_call_seconds(lookup(symbol), symbol, args, repeat);
  }

 private:
  std::unique_ptr<JitModule> jit_;
};

class LlvmBuilt final : public Module {
 public:
  explicit LlvmBuilt(LlvmModule module) : module_(std::move(module)) {}
  std::string source_text() const override { return module_.ir_text(); }
  void export_object(const ModelData& data, const std::string& path) override {
    module_.add_model_data(data.plan, data.weights, data.kernel_order);
    module_.write_object(path);
  }
  std::unique_ptr<LoadedModule> load(const std::vector<RuntimeSymbol>& runtime_symbols) override {
    return std::make_unique<LlvmLoaded>(JitModule::create(std::move(module_), runtime_symbols));
  }

 private:
  LlvmModule module_;
};

class LlvmBackend final : public Backend {
 public:
  explicit LlvmBackend(const Target& target) : target_(target) { options_.target = target.cpu; }
  const Target& target() const override { return target_; }
  std::unique_ptr<Module> build(const std::vector<KernelSource>& kernels) const override {
    return std::make_unique<LlvmBuilt>(LlvmModule::build(kernels, options_));
  }

 private:
  Target target_;
  CodegenOptions options_;
};

}  // namespace

std::unique_ptr<Backend> make_llvm_backend(const Target& target) {
  return std::make_unique<LlvmBackend>(target);
}

}  // namespace tessel::codegen
