// PlanExecutor::run: tensor checks, buffer resolution, the kernel calls and
// the output copies. Kernels assume 64-byte aligned, non-aliasing parameters,
// so a caller's tensor that is misaligned or overlaps another goes through an
// aligned staging copy.
#include "src/runtime/plan_executor.h"

#include "src/runtime/tracer.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "src/runtime/data_dependent.h"
#include "src/runtime/kernel_error.h"

namespace tessel::rt {

namespace {

constexpr uintptr_t kAlignment = 64;
// Where a zero-byte tensor points: kernels get a non-NULL aligned pointer they never dereference.
alignas(kAlignment) unsigned char zero_bytes_target[kAlignment];

std::string shape_str(const int64_t* shape, int32_t rank) {
  if (rank < 0 || rank > 32) return "(rank " + std::to_string(rank) + ")";
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dtype_str(int dtype) {
  return dtype >= 0 && dtype_bytes(uint8_t(dtype)) != 0 ? dtype_name(uint8_t(dtype))
                                                        : "dtype " + std::to_string(dtype);
}

struct Range {
  uintptr_t begin, end;
  bool overlaps(const Range& o) const { return begin < o.end && o.begin < end; }
};

// The pointers the kernels see for the caller's tensors, with the staging
// memory behind those that need it.
class TensorBinding {
 public:
  TensorBinding(const Plan& plan, const tessel_tensor* inputs, tessel_tensor* outputs) {
    std::vector<Range> ranges;
    for (size_t i = 0; i < plan.inputs.size(); ++i)
      add(inputs[i].data, tensor_bytes(plan.inputs[i]), ranges, false);
    for (size_t j = 0; j < plan.outputs.size(); ++j)
      add(outputs[j].data, tensor_bytes(plan.outputs[j]), ranges, true);
    if (staging_bytes_ == 0) return;
    staging_.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlignment, staging_bytes_)));
    if (!staging_) throw StatusError(TESSEL_ERR_OUT_OF_MEMORY, "out of memory staging misaligned tensors");
    for (size_t k = 0; k < bound_.size(); ++k) {
      if (!bound_[k].staged) continue;
      bound_[k].ptr = staging_.get() + bound_[k].staging_offset;
      if (k < plan.inputs.size()) std::memcpy(bound_[k].ptr, bound_[k].user, bound_[k].bytes);
    }
  }

  void* input(size_t i) const { return bound_[i].ptr; }
  void* output(size_t j, size_t num_inputs) const { return bound_[num_inputs + j].ptr; }

  void copy_out_staged(size_t num_inputs) const {
    for (size_t k = num_inputs; k < bound_.size(); ++k)
      if (bound_[k].staged) std::memcpy(bound_[k].user, bound_[k].ptr, bound_[k].bytes);
  }

 private:
  struct Bound {
    void* user;
    void* ptr;
    uint64_t bytes;
    bool staged = false;
    uint64_t staging_offset = 0;
  };

  void add(void* data, uint64_t bytes, std::vector<Range>& ranges, bool is_output) {
    Bound b{data, data, bytes};
    Range r{reinterpret_cast<uintptr_t>(data), reinterpret_cast<uintptr_t>(data) + bytes};
    if (bytes == 0) {
      b.ptr = zero_bytes_target;
    } else {
      bool aliased = false;
      for (const Range& o : ranges) aliased = aliased || (is_output && r.overlaps(o));
      if (aliased || r.begin % kAlignment != 0) {
        b.staged = true;
        b.staging_offset = staging_bytes_;
        staging_bytes_ += (bytes + kAlignment - 1) / kAlignment * kAlignment;
      }
      ranges.push_back(r);
    }
    bound_.push_back(b);
  }

  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::vector<Bound> bound_;
  uint64_t staging_bytes_ = 0;
  std::unique_ptr<uint8_t, Free> staging_;
};

}  // namespace

// Checks one caller tensor against its spec.
static void check_tensor(const tessel_tensor& t, const TensorSpec& spec, const char* kind) {
  std::string name = std::string(kind) + " '" + spec.name + "'";
  if (int(t.dtype) != int(spec.dtype))
    throw StatusError(TESSEL_ERR_DTYPE_MISMATCH, name + ": expected dtype " + dtype_str(spec.dtype) +
                                                     ", got " + dtype_str(int(t.dtype)));
  if (t.rank < 0)
    throw StatusError(TESSEL_ERR_INVALID_ARGUMENT, name + ": negative rank " + std::to_string(t.rank));
  if (t.rank > 0 && !t.shape) throw StatusError(TESSEL_ERR_INVALID_ARGUMENT, name + ": shape is NULL");
  bool same = size_t(t.rank) == spec.shape.size();
  for (int32_t i = 0; same && i < t.rank; ++i) same = t.shape[i] == spec.shape[size_t(i)];
  if (!same)
    throw StatusError(TESSEL_ERR_SHAPE_MISMATCH,
                      name + ": expected shape " + shape_str(spec.shape.data(), int32_t(spec.shape.size())) +
                          ", got " + shape_str(t.shape, t.rank));
  if (!t.data && tensor_bytes(spec) > 0)
    throw StatusError(TESSEL_ERR_INVALID_ARGUMENT, name + ": data is NULL");
}

void check_tensors(const tessel_tensor* tensors, int32_t count, const std::vector<TensorSpec>& specs,
                   const char* kind) {
  if (count < 0 || size_t(count) != specs.size())
    throw StatusError(TESSEL_ERR_INVALID_ARGUMENT, "expected " + std::to_string(specs.size()) + " " + kind +
                                                       "s, got " + std::to_string(count));
  if (count > 0 && !tensors)
    throw StatusError(TESSEL_ERR_INVALID_ARGUMENT,
                      std::string(kind) + "s is NULL with a count of " + std::to_string(count));
  for (int32_t i = 0; i < count; ++i) check_tensor(tensors[i], specs[size_t(i)], kind);
}

PlanExecutor::PlanExecutor(Plan plan, std::vector<tessel_kernel_fn> kernels, const void* weights)
    : plan_(std::move(plan)), kernels_(std::move(kernels)), weights_(static_cast<const uint8_t*>(weights)) {
  validate_plan(plan_, uint32_t(kernels_.size()), plan_.weights_bytes);
  loop_children_ = loop_children(plan_);
  for (size_t i = 0; i < kernels_.size(); ++i)
    if (!kernels_[i]) throw PlanError("invalid model plan: kernel " + std::to_string(i) + " is NULL");
  if (plan_.weights_bytes > 0 && (!weights_ || reinterpret_cast<uintptr_t>(weights_) % kAlignment != 0))
    throw PlanError("invalid model plan: the weights are NULL or not 64-byte aligned");
}

struct PlanExecutor::Run {
  const std::vector<void*>& ptr;
  std::vector<void*> args;
  double* kernel_seconds;
  bool traced;
};

void PlanExecutor::run_step(Run& r, size_t s) const {
  const Step& step = plan_.steps[s];
  r.args.clear();
  for (uint32_t a : step.args) r.args.push_back(r.ptr[a]);
  if (r.traced) Tracer::set_step(int32_t(s));
  double traced_start = r.traced ? Tracer::now() : 0;
  auto start = std::chrono::steady_clock::now();
  int32_t status = kernels_[step.kernel](r.args.data());
  if (r.kernel_seconds)
    r.kernel_seconds[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (r.traced) Tracer::record(TESSEL_TRACE_STEP, 0, traced_start, Tracer::now());
  if (status != 0) {
    std::string why = take_kernel_error();
    throw StatusError(TESSEL_ERR_KERNEL_FAILED, "step " + std::to_string(s) + " '" + step.name +
                                                    "' (kernel " + std::to_string(step.kernel) +
                                                    ") failed with status " + std::to_string(status) +
                                                    (why.empty() ? "" : ": " + why));
  }
}

// Steps [begin, end) with the child loops of `parent` (loops.size(): the top level) in place.
void PlanExecutor::run_block(Run& r, size_t parent, size_t begin, size_t end) const {
  const std::vector<uint32_t>& children = loop_children_[parent];
  size_t next = 0;
  while (next < children.size() && plan_.loops[children[next]].begin < begin) ++next;
  for (size_t s = begin;;) {
    while (next < children.size() && plan_.loops[children[next]].begin == s) {
      run_loop(r, children[next]);
      s = plan_.loops[children[next++]].end;
    }
    if (s >= end) break;
    run_step(r, s++);
  }
}

void PlanExecutor::run_loop(Run& r, size_t index) const {
  const Loop& loop = plan_.loops[index];
  auto bytes = [&](uint32_t id) { return plan_.buffers[id].bytes; };
  auto at = [&](uint32_t id, size_t offset = 0) { return static_cast<uint8_t*>(r.ptr[id]) + offset; };
  for (const LoopCopy& c : loop.init) std::memmove(at(c.to), at(c.from), bytes(c.to));
  uint64_t count = loop.count;
  if (loop.condition != kNoCondition && (*at(loop.condition) != 0) != loop.run_when_true) count = 0;
  for (uint64_t t = 0; t < count; ++t) {
    if (loop.while_condition != kNoCondition && *at(loop.while_condition) == 0) break;
    auto slice = [&](const LoopCopy& c, uint64_t slice_bytes) {
      return size_t((c.reverse ? loop.count - 1 - t : t) * slice_bytes);
    };
    for (const LoopCopy& c : loop.slice_in)
      std::memmove(at(c.to), at(c.from, slice(c, bytes(c.to))), bytes(c.to));
    run_block(r, index, loop.begin, loop.end);
    for (const LoopCopy& c : loop.slice_out)
      std::memmove(at(c.to, slice(c, bytes(c.from))), at(c.from), bytes(c.from));
    for (const LoopCopy& c : loop.carry)
      if (r.ptr[c.from] != r.ptr[c.to]) std::memmove(at(c.to), at(c.from), bytes(c.to));
  }
}

void PlanExecutor::run(const tessel_tensor* inputs, int32_t num_inputs, tessel_tensor* outputs,
                       int32_t num_outputs, void* arena, double* kernel_seconds,
                       int64_t* data_dependent_sizes) const {
  check_tensors(inputs, num_inputs, plan_.inputs, "input");
  check_tensors(outputs, num_outputs, plan_.outputs, "output");
  if (plan_.arena_bytes > 0 && (!arena || reinterpret_cast<uintptr_t>(arena) % kAlignment != 0))
    throw StatusError(TESSEL_ERR_INVALID_ARGUMENT, "the arena is NULL or not 64-byte aligned");
  TensorBinding binding(plan_, inputs, outputs);
  const size_t n_in = plan_.inputs.size();

  std::vector<void*> ptr(plan_.buffers.size());
  for (size_t id = 0; id < ptr.size(); ++id) {
    const BufferSlot& b = plan_.buffers[id];
    switch (b.storage) {
      case Storage::kInput: ptr[id] = binding.input(b.index); break;
      case Storage::kOutput: ptr[id] = binding.output(b.index, n_in); break;
      case Storage::kWeight: ptr[id] = const_cast<uint8_t*>(weights_) + b.offset; break;
      case Storage::kArena: ptr[id] = static_cast<uint8_t*>(arena) + b.offset; break;
    }
    if (b.bytes == 0) ptr[id] = zero_bytes_target;
  }

  Run r{ptr, {}, kernel_seconds, Tracer::on()};
  if (kernel_seconds) std::fill(kernel_seconds, kernel_seconds + plan_.steps.size(), 0.0);
  run_block(r, plan_.loops.size(), 0, plan_.steps.size());

  // Outputs held elsewhere; those copied from another output after that one is final.
  for (int round = 0; round < 2; ++round) {
    for (size_t j = 0; j < plan_.outputs.size(); ++j) {
      const BufferSlot& src = plan_.buffers[plan_.output_buffers[j]];
      bool own = src.storage == Storage::kOutput && src.index == j;
      bool from_output = src.storage == Storage::kOutput;
      if (own || src.bytes == 0 || from_output != (round == 1)) continue;
      std::memmove(binding.output(j, n_in), ptr[plan_.output_buffers[j]], src.bytes);
    }
  }
  binding.copy_out_staged(n_in);
  cut_data_dependent_outputs(
      plan_,
      [&](uint32_t buffer) {
        int64_t size = 0;
        std::memcpy(&size, ptr[buffer], sizeof(size));
        return size;
      },
      outputs, data_dependent_sizes);
}

}  // namespace tessel::rt
