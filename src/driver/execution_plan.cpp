// build_execution_plan: buffer slots for every value the kernels touch,
// liveness of the intermediates, and the arena layout.
#include "src/driver/execution_plan.h"

#include <cstring>
#include <unordered_map>

#include "ir/core/diagnostics.h"
#include "src/driver/compile_model.h"
#include "src/runtime/memory_planner.h"

namespace tessel::driver {

namespace {

static_assert(int(DType::kF32) == 0 && int(DType::kBool) == 8, "DType values are the ABI's tessel_dtype values");

rt::TensorSpec spec_of(const graph::Value& v) {
  TESSEL_USER_CHECK(v.type.rank_known && v.type.is_static(), Span{})
      << "value '" << v.name << "' has type " << v.type.str() << ": compiling needs static shapes (--input-shape)";
  return rt::TensorSpec{v.name, uint8_t(v.type.dtype), v.type.static_dims()};
}

uint64_t bytes_of(const graph::Value& v) {
  return uint64_t(*v.type.numel()) * dtype_size(v.type.dtype);
}

class PlanBuilder {
 public:
  explicit PlanBuilder(ExecutionPlan& out) : out_(out) {}

  uint32_t slot(rt::Storage storage, uint32_t index, uint64_t offset, uint64_t bytes) {
    out_.plan.buffers.push_back(rt::BufferSlot{storage, index, offset, bytes});
    return uint32_t(out_.plan.buffers.size() - 1);
  }

  // The slot of a value, made on first use for weights.
  uint32_t slot_of(const graph::Value* v) {
    if (auto it = slots_.find(v); it != slots_.end()) return it->second;
    TESSEL_ICHECK(v->is_constant()) << "%" << v->name << " is read before any kernel writes it";
    std::vector<uint8_t>& w = out_.weights;
    size_t offset = (w.size() + 63) / 64 * 64;
    const Tensor& t = *v->constant;
    w.resize(offset + t.nbytes());
    if (t.nbytes()) std::memcpy(w.data() + offset, t.raw(), t.nbytes());
    return slots_[v] = slot(rt::Storage::kWeight, 0, offset, t.nbytes());
  }

  std::unordered_map<const graph::Value*, uint32_t> slots_;

 private:
  ExecutionPlan& out_;
};

}  // namespace

ExecutionPlan build_execution_plan(const graph::Graph& g, const std::vector<CompiledKernel>& kernels) {
  ExecutionPlan out;
  rt::Plan& plan = out.plan;
  plan.model_name = "model";
  PlanBuilder b(out);
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const graph::Value* v = g.inputs()[i];
    plan.inputs.push_back(spec_of(*v));
    b.slots_[v] = b.slot(rt::Storage::kInput, uint32_t(i), 0, bytes_of(*v));
  }
  for (size_t j = 0; j < g.outputs().size(); ++j) {
    const graph::Value* v = g.outputs()[j];
    plan.outputs.push_back(spec_of(*v));
    if (!b.slots_.count(v) && !v->is_constant()) b.slots_[v] = b.slot(rt::Storage::kOutput, uint32_t(j), 0, bytes_of(*v));
  }
  // Intermediates: produced by one step, live until their last reader.
  std::vector<rt::BufferLifetime> lifetimes;
  std::vector<uint32_t> arena_slots;
  std::unordered_map<const graph::Value*, size_t> lifetime_of;
  for (size_t s = 0; s < kernels.size(); ++s) {
    for (const graph::Value* v : kernels[s].group.inputs)
      if (auto it = lifetime_of.find(v); it != lifetime_of.end()) lifetimes[it->second].last_step = s;
    for (const graph::Value* v : kernels[s].group.outputs) {
      if (b.slots_.count(v)) continue;
      lifetime_of[v] = lifetimes.size();
      lifetimes.push_back(rt::BufferLifetime{bytes_of(*v), s, s});
      arena_slots.push_back(b.slot(rt::Storage::kArena, 0, 0, bytes_of(*v)));
      b.slots_[v] = arena_slots.back();
    }
  }
  rt::MemoryPlan memory = rt::plan_memory(lifetimes);
  for (size_t i = 0; i < arena_slots.size(); ++i) plan.buffers[arena_slots[i]].offset = memory.offsets[i];
  plan.arena_bytes = memory.peak_bytes;
  out.unshared_arena_bytes = memory.naive_bytes;

  for (size_t s = 0; s < kernels.size(); ++s) {
    const CompiledKernel& k = kernels[s];
    rt::Step step{uint32_t(s), k.group.group.name, {}, k.flops, k.bytes};
    for (const graph::Value* v : k.group.inputs) step.args.push_back(b.slot_of(v));
    for (const graph::Value* v : k.group.outputs) step.args.push_back(b.slot_of(v));
    plan.steps.push_back(std::move(step));
  }
  for (const graph::Value* v : g.outputs()) plan.output_buffers.push_back(b.slot_of(v));
  plan.weights_bytes = out.weights.size();
  return out;
}

}  // namespace tessel::driver
