// GpuPlanExecutor: device memory for the plan's slots, the steps queued, the
// error slots read back.
#include "src/runtime/gpu/gpu_plan_executor.h"

#include <algorithm>
#include <optional>
#include <string>

#include "src/runtime/data_dependent.h"
#include "src/runtime/plan_executor.h"

namespace tessel::rt {

namespace {

// Device allocations of zero bytes still get an address no kernel reads.
uint64_t at_least_one(uint64_t bytes) {
  return std::max<uint64_t>(bytes, 1);
}

}  // namespace

GpuPlanExecutor::GpuPlanExecutor(Plan plan, GpuRunner& runner, std::vector<size_t> kernel_functions,
                                 const void* weights)
    : plan_(std::move(plan)), runner_(runner), kernel_functions_(std::move(kernel_functions)) {
  validate_plan(plan_, uint32_t(kernel_functions_.size()), plan_.weights_bytes);
  if (plan_.weights_bytes > 0 && !weights) throw PlanError("invalid model plan: the weights are NULL");
  if (!plan_.loops.empty())
    throw StatusError(TESSEL_ERR_INVALID_ARGUMENT,
                      "the GPU runtime does not run loops (Scan, LSTM, GRU, RNN) yet");
  check_steps();
  weights_ = DeviceBuffer(runner_.device(), at_least_one(plan_.weights_bytes));
  if (plan_.weights_bytes > 0) runner_.device().upload(weights_.get(), weights, plan_.weights_bytes);
}

GpuPlanExecutor::~GpuPlanExecutor() = default;

std::unique_ptr<GpuPlanExecutor::Workspace> GpuPlanExecutor::workspace() const {
  GpuDevice& device = runner_.device();
  auto w = std::make_unique<Workspace>();
  w->arena = DeviceBuffer(device, at_least_one(plan_.arena_bytes));
  w->scratch = DeviceBuffer(device, at_least_one(runner_.scratch_bytes()));
  w->errors = DeviceBuffer(device, at_least_one(plan_.steps.size() * sizeof(GpuErrorSlot)));
  for (const TensorSpec& s : plan_.inputs) w->io.emplace_back(device, at_least_one(tensor_bytes(s)));
  for (const TensorSpec& s : plan_.outputs) w->io.emplace_back(device, at_least_one(tensor_bytes(s)));
  for (const BufferSlot& b : plan_.buffers) {
    switch (b.storage) {
      case Storage::kInput: w->buffer_ptr.push_back(w->io[b.index].get()); break;
      case Storage::kOutput: w->buffer_ptr.push_back(w->io[plan_.inputs.size() + b.index].get()); break;
      case Storage::kWeight: w->buffer_ptr.push_back(weights_.get() + b.offset); break;
      case Storage::kArena: w->buffer_ptr.push_back(w->arena.get() + b.offset); break;
    }
  }
  return w;
}

// Each step passes its function as many buffers as it takes, each as large as it uses.
void GpuPlanExecutor::check_steps() const {
  for (size_t k = 0; k < kernel_functions_.size(); ++k)
    if (kernel_functions_[k] >= runner_.program().functions.size())
      throw PlanError("invalid model plan: kernel " + std::to_string(k) + " has no GPU function");
  for (const Step& s : plan_.steps) {
    const GpuFunction& f = runner_.program().functions[kernel_functions_[s.kernel]];
    if (s.args.size() != f.param_bytes.size())
      throw PlanError("invalid model plan: step '" + s.name + "' passes " + std::to_string(s.args.size()) +
                      " buffers to " + f.symbol + ", which takes " + std::to_string(f.param_bytes.size()));
    for (size_t i = 0; i < s.args.size(); ++i)
      if (plan_.buffers[s.args[i]].bytes < f.param_bytes[i])
        throw PlanError("invalid model plan: step '" + s.name + "' passes a buffer of " +
                        std::to_string(plan_.buffers[s.args[i]].bytes) + " bytes as parameter " +
                        std::to_string(i) + " of " + f.symbol + ", which uses " +
                        std::to_string(f.param_bytes[i]));
  }
}

void GpuPlanExecutor::queue_steps(const Workspace& w, const std::vector<DevicePtr>& pointers, void* stream,
                                  DeviceEvents* events) const {
  std::vector<DevicePtr> args;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Step& step = plan_.steps[s];
    args.clear();
    for (uint32_t a : step.args) args.push_back(pointers[a]);
    if (events) events->record(s);
    runner_.enqueue(kernel_functions_[step.kernel], args.data(), w.scratch.get(),
                    w.errors.get() + s * sizeof(GpuErrorSlot), stream);
  }
  if (events) events->record(plan_.steps.size());
}

void GpuPlanExecutor::check_error_slots(const Workspace& w) const {
  std::vector<GpuErrorSlot> slots(plan_.steps.size());
  if (!slots.empty())
    runner_.device().download(slots.data(), w.errors.get(), slots.size() * sizeof(GpuErrorSlot));
  for (size_t s = 0; s < slots.size(); ++s) {
    std::string why = runner_.error_message(slots[s]);
    if (!why.empty())
      throw StatusError(TESSEL_ERR_KERNEL_FAILED, "step " + std::to_string(s) + " '" + plan_.steps[s].name +
                                                      "' (kernel " + std::to_string(plan_.steps[s].kernel) +
                                                      ") failed: " + why);
  }
}

void GpuPlanExecutor::run(Workspace& w, const tessel_tensor* inputs, int32_t num_inputs,
                          tessel_tensor* outputs, int32_t num_outputs, double* kernel_seconds,
                          int64_t* data_dependent_sizes) const {
  check_tensors(inputs, num_inputs, plan_.inputs, "input");
  check_tensors(outputs, num_outputs, plan_.outputs, "output");
  GpuDevice& device = runner_.device();
  for (size_t i = 0; i < plan_.inputs.size(); ++i)
    if (uint64_t bytes = tensor_bytes(plan_.inputs[i])) device.upload(w.io[i].get(), inputs[i].data, bytes);
  device.zero(w.errors.get(), plan_.steps.size() * sizeof(GpuErrorSlot));
  std::optional<DeviceEvents> events;
  if (kernel_seconds) events.emplace(device, plan_.steps.size() + 1);
  queue_steps(w, w.buffer_ptr, nullptr, events ? &*events : nullptr);
  check_error_slots(w);
  for (size_t j = 0; j < plan_.outputs.size(); ++j)
    if (uint64_t bytes = tensor_bytes(plan_.outputs[j]))
      device.download(outputs[j].data, w.buffer_ptr[plan_.output_buffers[j]], bytes);
  cut_data_dependent_outputs(
      plan_,
      [&](uint32_t buffer) {
        int64_t size = 0;
        device.download(&size, w.buffer_ptr[buffer], sizeof(size));
        return size;
      },
      outputs, data_dependent_sizes);
  if (events)
    for (size_t s = 0; s < plan_.steps.size(); ++s) kernel_seconds[s] = events->seconds(s, s + 1);
}

void GpuPlanExecutor::run_device(Workspace& w, const tessel_tensor* inputs, int32_t num_inputs,
                                 tessel_tensor* outputs, int32_t num_outputs, void* stream) const {
  if (!plan_.data_dependent.empty())
    throw StatusError(TESSEL_ERR_INVALID_ARGUMENT,
                      "output '" + plan_.outputs[plan_.data_dependent[0].output].name +
                          "' has an extent the data decides, which a run on device memory cannot hand back: "
                          "use tessel_context_run");
  check_tensors(inputs, num_inputs, plan_.inputs, "input");
  check_tensors(outputs, num_outputs, plan_.outputs, "output");
  // The caller's buffers in place of the workspace's inputs and outputs,
  // where they are aligned as the kernels' vector accesses need
  // (cuda_vector.cpp); a misaligned one is staged through the workspace's.
  constexpr uintptr_t kVectorAlignment = 16;
  auto device_ptr = [](const tessel_tensor& t) { return DevicePtr(uintptr_t(t.data)); };
  GpuDevice& device = runner_.device();
  std::vector<DevicePtr> pointers = w.buffer_ptr;
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const BufferSlot& slot = plan_.buffers[b];
    const tessel_tensor* caller = slot.storage == Storage::kInput    ? &inputs[slot.index]
                                  : slot.storage == Storage::kOutput ? &outputs[slot.index]
                                                                     : nullptr;
    if (caller && device_ptr(*caller) % kVectorAlignment == 0) pointers[b] = device_ptr(*caller);
  }
  for (size_t i = 0; i < plan_.inputs.size(); ++i)
    if (uint64_t bytes = tensor_bytes(plan_.inputs[i]);
        bytes && device_ptr(inputs[i]) % kVectorAlignment != 0)
      device.copy_on(stream, w.io[i].get(), device_ptr(inputs[i]), bytes);
  device.zero_on(stream, w.errors.get(), plan_.steps.size() * sizeof(GpuErrorSlot));
  queue_steps(w, pointers, stream, nullptr);
  // An output the kernels did not write in the caller's buffer (staged, or
  // a weight, an input or another output) is copied there.
  for (size_t j = 0; j < plan_.outputs.size(); ++j) {
    DevicePtr result = pointers[plan_.output_buffers[j]];
    if (uint64_t bytes = tensor_bytes(plan_.outputs[j]); bytes && result != device_ptr(outputs[j]))
      device.copy_on(stream, device_ptr(outputs[j]), result, bytes);
  }
  device.synchronize_stream(stream);
  check_error_slots(w);
}

}  // namespace tessel::rt
