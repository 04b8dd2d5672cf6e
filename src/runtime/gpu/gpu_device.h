// A GPU as the runtime drives it, with one program's kernels loaded: device
// memory, copies, launches and timing events. Implemented by the CUDA driver
// (cuda_driver.h, a real GPU) and by the CUDA emulator (the generated C run
// on this CPU, src/codegen/cuda/cuda_emulator.h), so that everything above
// this seam (gpu_runner.h, gpu_plan_executor.h) is the same for both and is
// tested where there is no GPU. Failures throw StatusError with the device's
// own message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/runtime/gpu/gpu_program.h"

namespace tessel::rt {

using DevicePtr = uint64_t;  // CUdeviceptr on a GPU, a host address under emulation

class GpuDevice {
 public:
  virtual ~GpuDevice() = default;
  virtual std::string name() const = 0;

  // Device memory, at least 256-byte aligned; TESSEL_ERR_OUT_OF_MEMORY when there is none.
  virtual DevicePtr alloc(uint64_t bytes) = 0;
  virtual void release(DevicePtr ptr) = 0;
  virtual void upload(DevicePtr dst, const void* src, uint64_t bytes) = 0;
  virtual void download(void* dst, DevicePtr src, uint64_t bytes) = 0;
  virtual void copy(DevicePtr dst, DevicePtr src, uint64_t bytes) = 0;
  virtual void zero(DevicePtr dst, uint64_t bytes) = 0;

  // The loaded program's kernel of that name; a StatusError when absent.
  virtual void* kernel(const std::string& name) = 0;
  // Queues a launch on `stream` (a CUstream; null: the default stream);
  // params[i] points to the i-th argument's value, as cuLaunchKernel takes them.
  virtual void launch(void* kernel, const GpuLaunch& dims, void** params, void* stream = nullptr) = 0;
  // Queued on `stream` after what is there: zeroing, a copy between device buffers.
  virtual void zero_on(void* stream, DevicePtr dst, uint64_t bytes) = 0;
  virtual void copy_on(void* stream, DevicePtr dst, DevicePtr src, uint64_t bytes) = 0;
  // Waits for every queued launch and copy; for what is queued on `stream`.
  virtual void synchronize() = 0;
  virtual void synchronize_stream(void* stream) = 0;

  // Timing: events recorded in the queue, and the seconds between two
  // (which waits for the second).
  virtual void* create_event() = 0;
  virtual void destroy_event(void* event) = 0;
  virtual void record_event(void* event) = 0;
  virtual double seconds_between(void* start_event, void* end_event) = 0;
};

// Events destroyed when they go out of scope.
class DeviceEvents {
 public:
  DeviceEvents(GpuDevice& device, size_t count) : device_(device) {
    while (events_.size() < count) events_.push_back(device.create_event());
  }
  ~DeviceEvents() {
    for (void* e : events_) device_.destroy_event(e);
  }
  DeviceEvents(const DeviceEvents&) = delete;
  DeviceEvents& operator=(const DeviceEvents&) = delete;
  void record(size_t i) { device_.record_event(events_.at(i)); }
  double seconds(size_t from, size_t to) { return device_.seconds_between(events_.at(from), events_.at(to)); }

 private:
  GpuDevice& device_;
  std::vector<void*> events_;
};

// Device memory freed when it goes out of scope.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(GpuDevice& device, uint64_t bytes) : device_(&device), ptr_(device.alloc(bytes)) {}
  ~DeviceBuffer() {
    if (device_ && ptr_) device_->release(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : device_(o.device_), ptr_(o.ptr_) { o.ptr_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(device_, o.device_);
    std::swap(ptr_, o.ptr_);
    return *this;
  }
  DevicePtr get() const { return ptr_; }

 private:
  GpuDevice* device_ = nullptr;
  DevicePtr ptr_ = 0;
};

}  // namespace tessel::rt
