// GpuPlanExecutor: a model's plan run on a GPU through a GpuRunner. The
// weights are uploaded once; each workspace (one per context, so that
// contexts may run at once) holds the arena, the device copies of the inputs
// and outputs, the scratch and an error slot per step. A run uploads the
// inputs, queues every step's launches, reads the error slots (a failed
// check names its step) and downloads the outputs.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "src/runtime/gpu/gpu_runner.h"
#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::rt {

class GpuPlanExecutor {
 public:
  // kernel_functions[k]: the runner's function for kernel k of the plan's
  // table. weights: plan.weights_bytes bytes on the host. Validates the plan
  // (PlanError); the runner outlives the executor.
  GpuPlanExecutor(Plan plan, GpuRunner& runner, std::vector<size_t> kernel_functions, const void* weights);
  ~GpuPlanExecutor();

  // What one context's runs use on the device.
  struct Workspace {
    DeviceBuffer arena, scratch, errors;
    std::vector<DeviceBuffer> io;       // inputs, then outputs
    std::vector<DevicePtr> buffer_ptr;  // per plan buffer
  };
  std::unique_ptr<Workspace> workspace() const;

  // One run in a workspace of this executor, as PlanExecutor::run;
  // kernel_seconds, when given, receives each step's time between device
  // events. Throws StatusError.
  void run(Workspace& workspace, const tessel_tensor* inputs, int32_t num_inputs, tessel_tensor* outputs,
           int32_t num_outputs, double* kernel_seconds = nullptr,
           int64_t* data_dependent_sizes = nullptr) const;

  // One run on device memory: inputs[i].data and outputs[j].data are device
  // pointers, the work queued on `stream` (GpuDevice::launch), which this
  // waits for before it reads the error slots. Throws StatusError, at once for
  // a plan with data-dependent extents (they are cut on the host).
  void run_device(Workspace& workspace, const tessel_tensor* inputs, int32_t num_inputs,
                  tessel_tensor* outputs, int32_t num_outputs, void* stream) const;

  const Plan& plan() const { return plan_; }

 private:
  void check_steps() const;
  // Every step's launches queued on `stream`, buffer b at pointers[b]
  // (events, when given, recorded around each step).
  void queue_steps(const Workspace& w, const std::vector<DevicePtr>& pointers, void* stream,
                   DeviceEvents* events) const;
  // A StatusError naming the first step whose run-time check failed; waits for the launches.
  void check_error_slots(const Workspace& w) const;

  Plan plan_;
  GpuRunner& runner_;
  std::vector<size_t> kernel_functions_;
  DeviceBuffer weights_;
};

}  // namespace tessel::rt
