// GpuRunner: launch arguments from the table, error slots read back, host calls.
#include "src/runtime/gpu/gpu_runner.h"

#include <algorithm>

#include "src/runtime/kernel_abi.h"
#include "src/runtime/kernel_error.h"
#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::rt {

GpuRunner::GpuRunner(GpuProgram program, std::unique_ptr<GpuDevice> device)
    : program_(std::move(program)), device_(std::move(device)) {
  for (const GpuFunction& f : program_.functions) {
    first_kernel_.push_back(kernels_.size());
    for (const GpuLaunch& l : f.launches) kernels_.push_back(device_->kernel(l.kernel));
    scratch_bytes_ = std::max(scratch_bytes_, f.scratch_bytes);
  }
}

size_t GpuRunner::index(const std::string& symbol) const {
  for (size_t i = 0; i < program_.functions.size(); ++i)
    if (program_.functions[i].symbol == symbol) return i;
  throw StatusError(TESSEL_ERR_INVALID_ARGUMENT, "the GPU program has no function " + symbol);
}

void GpuRunner::enqueue(size_t f, const DevicePtr* params, DevicePtr scratch, DevicePtr error_slot,
                        void* stream) {
  const GpuFunction& fn = program_.functions.at(f);
  std::vector<DevicePtr> values;
  std::vector<void*> pointers;
  for (size_t l = 0; l < fn.launches.size(); ++l) {
    const GpuLaunch& launch = fn.launches[l];
    uint64_t threads = uint64_t(launch.grid[0]) * launch.grid[1] * launch.grid[2] * launch.block[0] *
                       launch.block[1] * launch.block[2];
    if (threads == 0) continue;
    values.clear();
    for (const GpuArg& a : launch.args)
      values.push_back(a.kind == GpuArg::Kind::kParam ? params[a.value] : scratch + a.value);
    values.push_back(error_slot);
    pointers.clear();
    for (DevicePtr& v : values) pointers.push_back(&v);
    device_->launch(kernels_[first_kernel_[f] + l], launch, pointers.data(), stream);
  }
}

std::string GpuRunner::error_message(const GpuErrorSlot& slot) const {
  if (slot.state == 0) return "";
  if (slot.id < 0 || size_t(slot.id) >= program_.asserts.size())
    return "a GPU kernel failed with the unknown check " + std::to_string(slot.id);
  const GpuAssert& a = program_.asserts[size_t(slot.id)];
  tessel_rt_kernel_error(a.format.c_str(), slot.values, std::min(a.values, 4));
  return take_kernel_error();
}

ResidentCall::ResidentCall(GpuRunner& runner, size_t f, void* const* args)
    : runner_(runner), f_(f), events_(runner.device(), 2) {
  const GpuFunction& fn = runner.program().functions.at(f);
  GpuDevice& device = runner.device();
  for (size_t i = 0; i < fn.param_bytes.size(); ++i) {
    buffers_.emplace_back(device, std::max<uint64_t>(fn.param_bytes[i], 1));
    pointers_.push_back(buffers_.back().get());
    if (i < fn.num_inputs && fn.param_bytes[i] > 0) device.upload(pointers_[i], args[i], fn.param_bytes[i]);
  }
  scratch_ = DeviceBuffer(device, std::max<uint64_t>(fn.scratch_bytes, 1));
  error_ = DeviceBuffer(device, sizeof(GpuErrorSlot));
  device.zero(error_.get(), sizeof(GpuErrorSlot));
}

void ResidentCall::enqueue() {
  runner_.enqueue(f_, pointers_.data(), scratch_.get(), error_.get());
}

double ResidentCall::timed_run() {
  events_.record(0);
  enqueue();
  events_.record(1);
  return events_.seconds(0, 1);
}

void ResidentCall::check() {
  GpuErrorSlot slot;
  runner_.device().download(&slot, error_.get(), sizeof slot);  // waits for the launches
  if (slot.state != 0) throw StatusError(TESSEL_ERR_KERNEL_FAILED, runner_.error_message(slot));
}

void ResidentCall::download_outputs(void* const* args) {
  const GpuFunction& fn = runner_.program().functions.at(f_);
  for (size_t i = fn.num_inputs; i < fn.param_bytes.size(); ++i)
    if (fn.param_bytes[i] > 0) runner_.device().download(args[i], pointers_[i], fn.param_bytes[i]);
}

int32_t GpuRunner::call_host(size_t f, void* const* args) {
  try {
    ResidentCall call(*this, f, args);
    call.enqueue();
    call.check();
    call.download_outputs(args);
    return 0;
  } catch (const StatusError& e) {
    set_kernel_error(e.what());
    return 1;
  }
}

double GpuRunner::time_host(size_t f, void* const* args, int repeat) {
  ResidentCall call(*this, f, args);
  call.enqueue();
  std::vector<double> seconds;
  for (int r = 0; r < repeat; ++r) seconds.push_back(call.timed_run());
  try {
    call.check();
  } catch (const StatusError& e) {
    throw StatusError(TESSEL_ERR_KERNEL_FAILED, program_.functions.at(f).symbol + " failed: " + e.what());
  }
  std::nth_element(seconds.begin(), seconds.begin() + long(seconds.size() / 2), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace tessel::rt
