// A compiled model as the commands run it, whether it was loaded from a
// model.so (ModelLibrary) or compiled in this process (JitModel): named,
// typed inputs and outputs, runs with optional per-kernel times, and the
// kernels' names, FLOPs and bytes for profiles.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ir/core/tensor.h"
#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::driver {

struct KernelInfo {
  std::string name;
  double flops = 0;
  double bytes = 0;
  // A GPU kernel compiled in this process: what its launches use (a
  // library's kernels do not say).
  int registers = 0;
  int64_t spill_bytes = 0, shared_bytes = 0;
};

// A traced run's kernel times and spans (tessel_trace_span: each step on the
// calling thread, each parallel chunk on its thread, seconds from the run's start).
struct TracedRun {
  std::vector<double> kernel_seconds;
  std::vector<tessel_trace_span> spans;
};

class CompiledModel {
 public:
  virtual ~CompiledModel() = default;
  virtual const std::vector<rt::TensorSpec>& inputs() const = 0;
  virtual const std::vector<rt::TensorSpec>& outputs() const = 0;
  virtual std::vector<KernelInfo> kernels() const = 0;
  virtual int64_t arena_bytes() const = 0;
  // "cpu", or "cuda: " and the GPU's name (tessel_model_device).
  virtual std::string device() const = 0;
  // Inputs in the model's order; a wrong count, dtype or shape is a UserError naming the input.
  virtual std::vector<Tensor> run(const std::vector<Tensor>& inputs, std::vector<double>* kernel_seconds = nullptr) = 0;
  // As run, recording the run's spans (a user error while another traced run
  // is in progress in this process).
  virtual std::vector<Tensor> run_traced(const std::vector<Tensor>& inputs, TracedRun& trace) = 0;
  virtual void set_num_threads(int threads) = 0;
  virtual int num_threads() const = 0;
};

// An output allocated at its bound, cut to the shape a run gave it (the run
// left its data dense in the front): outputs of data-dependent extent.
inline Tensor cut_to_shape(Tensor bound, const std::vector<int64_t>& shape) {
  if (bound.shape() == shape) return bound;
  Tensor cut(bound.dtype(), shape);
  if (cut.nbytes()) std::memcpy(cut.raw(), bound.raw(), cut.nbytes());
  return cut;
}

// Loads a model.so written by `tessel compile`. A file that is missing, not a
// shared library, or not a Tessel model is a UserError saying which.
std::unique_ptr<CompiledModel> load_model_library(const std::string& path);

// Calls run(spans, capacity, &count) with room for the spans, once more with
// room for all when the first run had more; the spans recorded.
template <typename Run>
std::vector<tessel_trace_span> record_spans(size_t expected, Run run) {
  std::vector<tessel_trace_span> spans(std::max<size_t>(expected, 1024));
  int32_t count = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    run(spans.data(), int32_t(spans.size()), &count);
    if (size_t(count) <= spans.size()) break;
    spans.resize(size_t(count) * 2);
  }
  spans.resize(std::min(spans.size(), size_t(count)));
  return spans;
}

}  // namespace tessel::driver
