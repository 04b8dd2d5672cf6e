// PlanExecutor: runs a validated plan's kernels over the caller's tensors and
// an arena, as model.so does behind tessel_context_run and the compiler's JIT
// does in process.
#pragma once

#include <cstdint>
#include <vector>

#include "src/runtime/kernel_abi.h"
#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::rt {

// Throws StatusError unless the caller's tensors are `count` of the specs'
// dtypes and shapes, with data where they hold any bytes; kind names them
// ("input", "output") in the message.
void check_tensors(const tessel_tensor* tensors, int32_t count, const std::vector<TensorSpec>& specs,
                   const char* kind);

class PlanExecutor {
 public:
  // Validates the plan against the kernel table (PlanError). weights holds
  // plan.weights_bytes bytes, 64-byte aligned, and outlives the executor.
  PlanExecutor(Plan plan, std::vector<tessel_kernel_fn> kernels, const void* weights);

  // One run: checks every tensor against the plan's specs, calls the steps'
  // kernels in order and fills the outputs. arena: plan.arena_bytes bytes,
  // 64-byte aligned, used by one run at a time; kernel_seconds, when given,
  // receives each step's wall time (summed over a loop's iterations). An
  // output of data-dependent extent (plan.data_dependent) is left dense at its
  // extent, in the front of its memory; data_dependent_sizes, when given,
  // receives those extents. Throws StatusError carrying the tessel_status.
  // Const: runs with distinct arenas may overlap in time.
  void run(const tessel_tensor* inputs, int32_t num_inputs, tessel_tensor* outputs, int32_t num_outputs,
           void* arena, double* kernel_seconds = nullptr, int64_t* data_dependent_sizes = nullptr) const;

  const Plan& plan() const { return plan_; }

 private:
  struct Run;
  void run_block(Run& run, size_t parent, size_t begin, size_t end) const;
  void run_loop(Run& run, size_t loop) const;
  void run_step(Run& run, size_t s) const;

  Plan plan_;
  std::vector<std::vector<uint32_t>> loop_children_;
  std::vector<tessel_kernel_fn> kernels_;
  const uint8_t* weights_;
};

}  // namespace tessel::rt
