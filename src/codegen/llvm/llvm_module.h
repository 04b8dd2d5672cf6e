// The CPU backend's public face: flattened tensor IR kernels -> one LLVM
// module -> O3 -> an object file (export) or an ORC JIT (in-process runs).
// LLVM's headers stay behind this header.
//
//   LlvmModule m = LlvmModule::build({{"k0_conv", flat_conv}, ...}, options);
//   m.add_model_data(plan_bytes, weights, {"k0_conv", ...});   // for model.so
//   m.write_object("model.o");
//   auto jit = JitModule::create(std::move(m), {{"tessel_rt_parallel_for", &pf}});  // or in process
//   tessel_kernel_fn k0 = jit->lookup("k0_conv");
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/tensor/function.h"
#include "src/codegen/backend.h"
#include "src/codegen/llvm/host_target.h"

namespace tessel::codegen {

struct CodegenOptions {
  CpuTarget target = host_cpu_target();
  // Allocations up to this size live on the stack; larger ones on the heap.
  int64_t max_stack_bytes = 64 * 1024;
};

class LlvmModule {
 public:
  // Generates every kernel, verifies the module and runs the O3 pipeline
  // (with the target machine, so the vectorizer sees the real costs).
  static LlvmModule build(const std::vector<KernelSource>& kernels, const CodegenOptions& options);

  LlvmModule(LlvmModule&&) noexcept;
  LlvmModule& operator=(LlvmModule&&) noexcept;
  ~LlvmModule();

  // Embeds what the model runtime reads (src/runtime/kernel_abi.h): the plan,
  // the weights (64-byte aligned) and the kernel table in `kernel_order`.
  void add_model_data(std::span<const uint8_t> plan, std::span<const uint8_t> weights,
                      const std::vector<std::string>& kernel_order);

  std::string ir_text() const;                       // the optimised IR
  void write_object(const std::string& path) const;  // a PIC object file
  const CodegenOptions& options() const;

  struct Impl;
  // A module the backend generated itself (a micro-kernel), not from tensor IR.
  static LlvmModule adopt(std::unique_ptr<Impl> impl);

 private:
  explicit LlvmModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend class JitModule;
};

// Code compiled in this process. Generated code finds the C math library in
// the process and the runtime's functions (tessel_rt_parallel_for) in
// `runtime_symbols`, which the caller fills from its own runtime.
class JitModule {
 public:
  static std::unique_ptr<JitModule> create(LlvmModule module,
                                           const std::vector<RuntimeSymbol>& runtime_symbols);
  ~JitModule();
  KernelFn lookup(const std::string& symbol) const;  // an internal error when absent

  struct Impl;

 private:
  explicit JitModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::codegen
