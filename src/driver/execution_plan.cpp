// build_execution_plan: buffer slots for every value the kernels and loops
// touch, liveness of the intermediates, and the arena layout.
//
// A Scan's body values are tied to the outer graph's by its loop: a state is
// one buffer (the body's input, which the initial value is copied into, the
// next state copied back, and the Scan's final output); a capture is the
// outer value itself; a scan input or output slice is a buffer of its own,
// copied from or to the stacked tensor around each iteration.
#include "src/driver/execution_plan.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "ir/core/diagnostics.h"
#include "ir/graph/scan.h"
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

using ValueMap = std::unordered_map<const graph::Value*, const graph::Value*>;

// The value whose buffer v shares (v itself when none).
const graph::Value* canonical(const ValueMap& alias, const graph::Value* v) {
  for (auto it = alias.find(v); it != alias.end(); it = alias.find(v)) v = it->second;
  return v;
}

// A state is its body input's buffer; a capture is the outer value's.
ValueMap scan_aliases(const std::vector<ScanRegion>& regions) {
  ValueMap alias;
  for (const ScanRegion& r : regions) {
    const graph::Node& n = *r.scan;
    const graph::Graph& body = *n.body;
    graph::ScanLayout l = graph::scan_layout(n);
    for (size_t j = 0; j < l.num_states; ++j) alias[n.outputs[j]] = body.inputs()[j];
    for (size_t k = 0; k < l.num_captures; ++k) alias[body.inputs()[l.capture(k)]] = n.inputs[l.capture(k)];
  }
  return alias;
}

// Where each buffer is touched: steps, and a loop's copies at its first and last step.
class Liveness {
 public:
  void touch(const graph::Value* v, size_t step) {
    auto [it, fresh] = span_.try_emplace(v, std::pair{step, step});
    it->second.first = std::min(it->second.first, step);
    it->second.second = std::max(it->second.second, step);
    if (fresh) order_.push_back(v);
  }
  // A buffer live across the loop's span stays live over all of it: the
  // iterations come back to its steps.
  void cover_loop(size_t first, size_t last) {
    for (auto& [v, span] : span_) {
      bool inside = span.first <= last && span.second >= first;
      if (inside && (span.first < first || span.second > last))
        span = {std::min(span.first, first), std::max(span.second, last)};
    }
  }
  const std::vector<const graph::Value*>& order() const { return order_; }
  std::pair<size_t, size_t> span(const graph::Value* v) const { return span_.at(v); }

 private:
  std::unordered_map<const graph::Value*, std::pair<size_t, size_t>> span_;
  std::vector<const graph::Value*> order_;
};

class PlanBuilder {
 public:
  PlanBuilder(ExecutionPlan& out, ValueMap alias) : out_(out), alias_(std::move(alias)) {}

  const graph::Value* resolve(const graph::Value* v) const { return canonical(alias_, v); }

  uint32_t slot(rt::Storage storage, uint32_t index, uint64_t offset, uint64_t bytes) {
    out_.plan.buffers.push_back(rt::BufferSlot{storage, index, offset, bytes});
    return uint32_t(out_.plan.buffers.size() - 1);
  }
  bool has_slot(const graph::Value* v) const { return slots_.count(resolve(v)) != 0; }
  void set_slot(const graph::Value* v, uint32_t id) { slots_[resolve(v)] = id; }

  // The slot of a value, made on first use for weights.
  uint32_t slot_of(const graph::Value* v) {
    v = resolve(v);
    if (auto it = slots_.find(v); it != slots_.end()) return it->second;
    TESSEL_ICHECK(v->is_constant()) << "%" << v->name << " is read before any kernel writes it";
    std::vector<uint8_t>& w = out_.weights;
    size_t offset = (w.size() + 63) / 64 * 64;
    const Tensor& t = *v->constant;
    w.resize(offset + t.nbytes());
    if (t.nbytes()) std::memcpy(w.data() + offset, t.raw(), t.nbytes());
    return slots_[v] = slot(rt::Storage::kWeight, 0, offset, t.nbytes());
  }

 private:
  ExecutionPlan& out_;
  ValueMap alias_;
  std::unordered_map<const graph::Value*, uint32_t> slots_;
};

// The step at which a region's copies after each iteration happen: its last
// step (its position, for a loop without steps).
size_t last_step_of(const ScanRegion& r) {
  return r.end > r.begin ? r.end - 1 : r.begin;
}

// The loop of one region; its copies' buffers are slot_of's.
rt::Loop loop_of(const ScanRegion& r, PlanBuilder& b) {
  const graph::Node& n = *r.scan;
  const graph::Graph& body = *n.body;
  graph::ScanLayout l = graph::scan_layout(n);
  rt::Loop loop{r.parent, uint32_t(r.begin), uint32_t(r.end), uint64_t(l.length), {}, {}, {}, {}};
  if (l.run_when != 0) {
    loop.condition = b.slot_of(n.inputs.back());
    loop.run_when_true = l.run_when > 0;
  }
  if (l.while_state >= 0) loop.while_condition = b.slot_of(body.inputs()[size_t(l.while_state)]);
  for (size_t j = 0; j < l.num_states; ++j) {
    loop.init.push_back({b.slot_of(n.inputs[j]), b.slot_of(body.inputs()[j]), false});
    uint32_t next = b.slot_of(body.outputs()[j]), state = b.slot_of(body.inputs()[j]);
    if (next != state) loop.carry.push_back({next, state, false});
  }
  for (size_t k = 0; k < l.num_scan_inputs; ++k)
    loop.slice_in.push_back({b.slot_of(n.inputs[l.scan_input(k)]), b.slot_of(body.inputs()[l.scan_input(k)]),
                             l.reverse_inputs[k]});
  for (size_t k = 0; k < l.num_scan_outputs; ++k)
    loop.slice_out.push_back({b.slot_of(body.outputs()[l.scan_output(k)]),
                              b.slot_of(n.outputs[l.scan_output(k)]), l.reverse_outputs[k]});
  return loop;
}

// The values a region's copies read and write, at the loop's first and last step.
void touch_loop_copies(const ScanRegion& r, const PlanBuilder& b, Liveness& live) {
  const graph::Node& n = *r.scan;
  const graph::Graph& body = *n.body;
  graph::ScanLayout l = graph::scan_layout(n);
  size_t first = r.begin, last = last_step_of(r);
  if (l.run_when != 0) live.touch(b.resolve(n.inputs.back()), first);
  for (size_t j = 0; j < l.num_states; ++j) {
    live.touch(b.resolve(n.inputs[j]), first);
    live.touch(b.resolve(body.inputs()[j]), first);
    live.touch(b.resolve(body.inputs()[j]), last);
    live.touch(b.resolve(body.outputs()[j]), last);
  }
  for (size_t k = 0; k < l.num_scan_inputs; ++k) {
    live.touch(b.resolve(n.inputs[l.scan_input(k)]), first);
    live.touch(b.resolve(body.inputs()[l.scan_input(k)]), first);
  }
  for (size_t k = 0; k < l.num_scan_outputs; ++k) {
    live.touch(b.resolve(body.outputs()[l.scan_output(k)]), last);
    live.touch(b.resolve(n.outputs[l.scan_output(k)]), first);
    live.touch(b.resolve(n.outputs[l.scan_output(k)]), last);
  }
}

}  // namespace

ExecutionPlan build_execution_plan(const graph::Graph& g, const std::vector<CompiledKernel>& kernels,
                                   const std::vector<ScanRegion>& regions) {
  ExecutionPlan out;
  rt::Plan& plan = out.plan;
  plan.model_name = "model";
  PlanBuilder b(out, scan_aliases(regions));
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const graph::Value* v = g.inputs()[i];
    plan.inputs.push_back(spec_of(*v));
    b.set_slot(v, b.slot(rt::Storage::kInput, uint32_t(i), 0, bytes_of(*v)));
  }
  for (size_t j = 0; j < g.num_user_outputs(); ++j) {
    const graph::Value* v = g.outputs()[j];
    plan.outputs.push_back(spec_of(*v));
    if (!b.has_slot(v) && !b.resolve(v)->is_constant() && b.resolve(v) == v)
      b.set_slot(v, b.slot(rt::Storage::kOutput, uint32_t(j), 0, bytes_of(*v)));
  }
  // Intermediates: live from their first to their last touch, a loop's
  // outer buffers over all of it.
  Liveness live;
  for (size_t s = 0; s < kernels.size(); ++s) {
    for (const graph::Value* v : kernels[s].group.inputs) live.touch(b.resolve(v), s);
    for (const graph::Value* v : kernels[s].group.outputs) live.touch(b.resolve(v), s);
  }
  for (const ScanRegion& r : regions) touch_loop_copies(r, b, live);
  // An output that is another value's buffer (a Scan's final state is its
  // body input's), and a data-dependent extent the runtime reads after the
  // steps, stays live to the end: no later kernel may reuse it.
  if (!kernels.empty())
    for (const graph::Value* v : g.outputs())
      if (!b.has_slot(v)) live.touch(b.resolve(v), kernels.size() - 1);
  for (size_t i = regions.size(); i-- > 0;)  // children first
    live.cover_loop(regions[i].begin, last_step_of(regions[i]));
  std::vector<rt::BufferLifetime> lifetimes;
  std::vector<uint32_t> arena_slots;
  for (const graph::Value* v : live.order()) {
    if (b.has_slot(v) || v->is_constant()) continue;
    auto [first, last] = live.span(v);
    lifetimes.push_back(rt::BufferLifetime{bytes_of(*v), first, last});
    arena_slots.push_back(b.slot(rt::Storage::kArena, 0, 0, bytes_of(*v)));
    b.set_slot(v, arena_slots.back());
  }
  rt::MemoryPlan memory = rt::plan_memory(lifetimes);
  for (size_t i = 0; i < arena_slots.size(); ++i) plan.buffers[arena_slots[i]].offset = memory.offsets[i];
  plan.arena_bytes = memory.peak_bytes;
  out.unshared_arena_bytes = memory.naive_bytes;

  for (size_t s = 0; s < kernels.size(); ++s) {
    const CompiledKernel& k = kernels[s];
    rt::Step step{uint32_t(s), k.group.group.name, {}, k.flops, k.bytes};
    for (const graph::Value* v : k.group.inputs) step.args.push_back(b.slot_of(v));
    for (const graph::Value* v : k.group.outputs) {
      TESSEL_ICHECK(!b.resolve(v)->is_constant())
          << "kernel " << k.symbol << " would write constant %" << v->name;
      step.args.push_back(b.slot_of(v));
    }
    plan.steps.push_back(std::move(step));
  }
  for (const ScanRegion& r : regions) {
    plan.loops.push_back(loop_of(r, b));
    // A step's FLOPs and bytes are per run of the model; a while loop's
    // iterations only a run knows, so its steps count one.
    const rt::Loop& loop = plan.loops.back();
    double runs = loop.while_condition == rt::kNoCondition ? double(loop.count) : 1.0;
    for (size_t s = r.begin; s < r.end; ++s) {
      plan.steps[s].flops *= runs;
      plan.steps[s].bytes *= runs;
    }
  }
  for (size_t j = 0; j < g.num_user_outputs(); ++j) plan.output_buffers.push_back(b.slot_of(g.outputs()[j]));
  for (size_t k = 0; k < g.data_dependent_dims.size(); ++k) {
    const graph::DataDependentDim& d = g.data_dependent_dims[k];
    uint32_t size = b.slot_of(g.outputs()[g.num_user_outputs() + k]);
    plan.data_dependent.push_back({uint32_t(d.output), uint32_t(d.axis), size});
  }
  plan.weights_bytes = out.weights.size();
  return out;
}

}  // namespace tessel::driver
