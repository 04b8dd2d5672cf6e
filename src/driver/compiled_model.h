// A compiled model as the commands run it, whether it was loaded from a
// model.so (ModelLibrary) or compiled in this process (JitModel): named,
// typed inputs and outputs, runs with optional per-kernel times, and the
// kernels' names, FLOPs and bytes for profiles.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/core/tensor.h"
#include "src/runtime/plan.h"

namespace tessel::driver {

struct KernelInfo {
  std::string name;
  double flops = 0;
  double bytes = 0;
};

class CompiledModel {
 public:
  virtual ~CompiledModel() = default;
  virtual const std::vector<rt::TensorSpec>& inputs() const = 0;
  virtual const std::vector<rt::TensorSpec>& outputs() const = 0;
  virtual std::vector<KernelInfo> kernels() const = 0;
  virtual int64_t arena_bytes() const = 0;
  // Inputs in the model's order; a wrong count, dtype or shape is a UserError naming the input.
  virtual std::vector<Tensor> run(const std::vector<Tensor>& inputs, std::vector<double>* kernel_seconds = nullptr) = 0;
  virtual void set_num_threads(int threads) = 0;
  virtual int num_threads() const = 0;
};

// Loads a model.so written by `tessel compile`. A file that is missing, not a
// shared library, or not a Tessel model is a UserError saying which.
std::unique_ptr<CompiledModel> load_model_library(const std::string& path);

}  // namespace tessel::driver
