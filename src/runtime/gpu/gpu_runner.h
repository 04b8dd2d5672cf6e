// GpuRunner: a GpuProgram's functions run on a GpuDevice. A function's
// launches are queued in order on device pointers to its parameters, with
// scratch (its intermediates; scratch_bytes() serves every function) and an
// error slot the caller supplies, so that callers with their own may run at
// once; after the queue drains, a slot whose state is set names the failed
// run-time check.
//
//   GpuRunner runner(program, std::move(device));
//   runner.call_host(runner.index("k0"), args);   // host arrays, as a CPU kernel
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/runtime/gpu/gpu_device.h"

namespace tessel::rt {

class GpuRunner {
 public:
  GpuRunner(GpuProgram program, std::unique_ptr<GpuDevice> device);

  GpuDevice& device() { return *device_; }
  const GpuProgram& program() const { return program_; }
  // The function's number; a StatusError when the program has none of that name.
  size_t index(const std::string& symbol) const;

  // The scratch the largest function needs.
  uint64_t scratch_bytes() const { return scratch_bytes_; }
  // Queues function f's launches on `stream` (GpuDevice::launch; those with
  // no thread to run are skipped).
  void enqueue(size_t f, const DevicePtr* params, DevicePtr scratch, DevicePtr error_slot,
               void* stream = nullptr);
  // The failed check an error slot holds, as a message; empty if none.
  std::string error_message(const GpuErrorSlot& slot) const;

  // As a CPU kernel runs: args[i] the host array of parameter i (inputs,
  // then outputs). Uploads the inputs, runs, downloads the outputs; returns
  // 0, or 1 with the message left by set_kernel_error.
  int32_t call_host(size_t f, void* const* args);
  // The median seconds of `repeat` runs of f (after one warm-up run) on
  // device copies of args, measured with the device's events.
  double time_host(size_t f, void* const* args, int repeat);

 private:
  GpuProgram program_;
  std::unique_ptr<GpuDevice> device_;
  std::vector<void*> kernels_;  // per function, per launch, flattened
  std::vector<size_t> first_kernel_;
  uint64_t scratch_bytes_ = 0;
};

// A function's host arguments held on the device for runs one after
// another: the inputs uploaded once, so that timed runs (the tuner's
// measurements) count the kernels alone.
//
//   ResidentCall call(runner, f, args);
//   double s = call.timed_run();
//   call.check();                // a failed run-time check throws
//   call.download_outputs(args);
class ResidentCall {
 public:
  ResidentCall(GpuRunner& runner, size_t f, void* const* args);

  // Queues one run.
  void enqueue();
  // Seconds of one run between events; waits for the run.
  double timed_run();
  // Waits for the queued runs; a StatusError with the message of the run-time check that failed.
  void check();
  // The outputs copied into their host arrays, args as given to the constructor.
  void download_outputs(void* const* args);

 private:
  GpuRunner& runner_;
  size_t f_;
  std::vector<DeviceBuffer> buffers_;
  std::vector<DevicePtr> pointers_;
  DeviceBuffer scratch_, error_;
  DeviceEvents events_;
};

}  // namespace tessel::rt
