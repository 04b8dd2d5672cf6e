// The seam every backend plugs into: build a list of flattened tensor-IR
// functions for a Target into a module, export the module (with a model's
// plan and weights) as an object file, or load it into this process and
// call or time one function. The LLVM backend implements it; the compile
// pipeline, `tessel check` and the tuner's measurements go through it.
//
//   std::unique_ptr<Backend> b = make_backend(target);
//   std::unique_ptr<Module> m = b->build({{"k0", flat_func}});
//   std::unique_ptr<LoadedModule> code = m->load(runtime_symbols);
//   double s = code->time_function("k0", args, 10);
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/core/diagnostics.h"
#include "ir/tensor/function.h"
#include "src/codegen/target.h"

namespace tessel::rt {
class GpuRunner;
}  // namespace tessel::rt

namespace tessel::codegen {

// One function: `func` has been through flatten_blocks (no blocks remain);
// `symbol` names its entry `int32_t symbol(void* const* args)`, args[i] the
// i-th parameter buffer (inputs, then outputs); it returns 0 on success.
struct KernelSource {
  std::string symbol;
  tir::PrimFunc func;
};

using KernelFn = int32_t (*)(void* const* args);

// A function of the host process that generated code calls by name
// (tessel_rt_parallel_for), supplied by whoever loads the module.
struct RuntimeSymbol {
  std::string name;
  void* address;
};

// Symbols of any kind with a name and an address (rt::kernel_runtime_symbols)
// as load() takes them.
template <typename Symbols>
std::vector<RuntimeSymbol> runtime_symbols(const Symbols& symbols) {
  std::vector<RuntimeSymbol> out;
  for (const auto& s : symbols) out.push_back({s.name, s.address});
  return out;
}

// What a model.so embeds beside its kernels (src/runtime/kernel_abi.h).
struct ModelData {
  std::span<const uint8_t> plan;
  std::span<const uint8_t> weights;  // 64-byte aligned in the object
  std::vector<std::string> kernel_order;
};

class LoadedModule {
 public:
  virtual ~LoadedModule() = default;
  // The entry of `symbol` in this process; an internal error when the module
  // has none or its functions run elsewhere (a GPU's: call, gpu_runner).
  virtual KernelFn lookup(const std::string& symbol) const = 0;
  // Runs `symbol` on host arrays as its entry would: 0, or non-zero with the
  // message left for rt::take_kernel_error.
  virtual int32_t call(const std::string& symbol, void* const* args) const { return lookup(symbol)(args); }
  // The runner of a module whose functions run on a GPU (or its emulation),
  // which a plan runs through on device memory; null for host code.
  virtual rt::GpuRunner* gpu_runner() const { return nullptr; }
  // The median wall time in seconds of `repeat` calls (after one warm-up
  // call) of `symbol` on args; a non-zero status is a user error.
  virtual double time_function(const std::string& symbol, void* const* args, int repeat) const = 0;
};

// What time_function measures, for any backend's entry: one warm-up call,
// then the median wall time of `repeat` calls.
inline double median_call_seconds(KernelFn fn, const std::string& symbol, void* const* args, int repeat) {
  TESSEL_ICHECK(repeat >= 1) << "time_function needs at least one run";
  TESSEL_USER_CHECK(fn(args) == 0, Span{}) << "function " << symbol << " failed";
  std::vector<double> seconds;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    int32_t status = fn(args);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    TESSEL_USER_CHECK(status == 0, Span{}) << "function " << symbol << " failed with status " << status;
  }
  std::nth_element(seconds.begin(), seconds.begin() + long(seconds.size() / 2), seconds.end());
  return seconds[seconds.size() / 2];
}

// What a function's GPU launches use: the most registers a thread of one
// uses and the bytes they spill to local memory (as ptxas reported them;
// zeros where nothing was reported: host code, the emulator), and the most
// shared memory one asks for.
struct KernelUsage {
  int max_registers = 0;
  int64_t spill_bytes = 0;
  int64_t shared_bytes = 0;
};

class Module {
 public:
  virtual ~Module() = default;
  // The code as text: the optimised LLVM IR, or the CUDA C.
  virtual std::string source_text() const = 0;
  // Of the function `symbol`'s launches (empty: every function's).
  virtual KernelUsage usage(const std::string& /*symbol*/) const { return {}; }
  // A relocatable object with the kernels, the model data and the table of
  // kernels in data.kernel_order, to link with the model runtime.
  virtual void export_object(const ModelData& data, const std::string& path) = 0;
  // The module's code in this process; the module is consumed.
  virtual std::unique_ptr<LoadedModule> load(const std::vector<RuntimeSymbol>& runtime_symbols) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const Target& target() const = 0;
  virtual std::unique_ptr<Module> build(const std::vector<KernelSource>& kernels) const = 0;
};

// The backend of target.kind; a user error naming why when this build or
// machine cannot serve it.
std::unique_ptr<Backend> make_backend(const Target& target);

}  // namespace tessel::codegen
