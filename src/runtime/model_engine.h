// What runs a model library's plan behind the C ABI (model_abi.cpp): the
// host kernels the library holds (model_engine_cpu.cpp, in every CPU model)
// or a GPU program (gpu/model_engine_gpu.cpp, in every GPU model). Each model
// runtime archive defines load_model_engine for its kind.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::rt {

class ModelEngine {
 public:
  virtual ~ModelEngine() = default;
  virtual const Plan& plan() const = 0;
  // What tessel_model_device returns.
  virtual const std::string& device() const = 0;

  // What one context's runs use (an arena, device buffers).
  struct Context {
    virtual ~Context() = default;
    // The extents of the outputs of data-dependent extent (plan.data_dependent)
    // as of the last successful run; empty before one.
    std::vector<int64_t> data_dependent_sizes;
  };
  virtual std::unique_ptr<Context> new_context() const = 0;
  // One run, as PlanExecutor::run, the data-dependent extents written to the
  // context; throws StatusError.
  virtual void run(Context& context, const tessel_tensor* inputs, int32_t num_inputs, tessel_tensor* outputs,
                   int32_t num_outputs, double* kernel_seconds) const = 0;
  // One run on device memory (tessel_context_run_device); an engine whose
  // kernels run on the host throws TESSEL_ERR_UNSUPPORTED_DEVICE.
  virtual void run_device(Context& context, const tessel_tensor* inputs, int32_t num_inputs,
                          tessel_tensor* outputs, int32_t num_outputs, void* stream) const;
};

// The engine over the symbols the compiler embedded (kernel_abi.h):
// corruption first (the plan's and the weights' checksums, the plan's
// structure), then whether this machine can run the kernels.
std::unique_ptr<ModelEngine> load_model_engine();

}  // namespace tessel::rt
