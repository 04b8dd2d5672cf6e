// The checks of a plan's loops: nesting, sibling order and the copies, so
// that a corrupt plan never makes the runtime copy outside a buffer or write
// a weight or an input.
#include <cstdint>
#include <string>

#include "src/runtime/plan.h"

namespace tessel::rt {

namespace {

void fail(const std::string& message) {
  throw PlanError("invalid model plan: " + message);
}

void check_destination(const Plan& plan, const std::string& name, uint32_t to) {
  Storage s = plan.buffers[to].storage;
  if (s == Storage::kWeight || s == Storage::kInput)
    fail(name + ": copies into buffer " + std::to_string(to) + ", a " +
         (s == Storage::kWeight ? "weight" : "model input"));
}

void check_copies(const Plan& plan, const Loop& loop, const std::string& name) {
  auto in_range = [&](uint32_t id) {
    if (id >= plan.buffers.size())
      fail(name + ": copy of buffer id " + std::to_string(id) + " out of range (" +
           std::to_string(plan.buffers.size()) + " buffers)");
    return plan.buffers[id].bytes;
  };
  for (const auto* copies : {&loop.init, &loop.carry})
    for (const LoopCopy& c : *copies) {
      if (in_range(c.from) != in_range(c.to) || c.reverse)
        fail(name + ": copy from buffer " + std::to_string(c.from) + " to " + std::to_string(c.to) +
             " of different sizes");
      check_destination(plan, name, c.to);
    }
  for (const auto* copies : {&loop.slice_in, &loop.slice_out})
    for (const LoopCopy& c : *copies) {
      bool in = copies == &loop.slice_in;
      uint64_t whole = in_range(in ? c.from : c.to), slice = in_range(in ? c.to : c.from);
      if (slice > kMaxPlanBytes || slice * loop.count != whole)
        fail(name + ": buffer of " + std::to_string(whole) + " bytes is not " + std::to_string(loop.count) +
             " slices of " + std::to_string(slice));
      check_destination(plan, name, c.to);
    }
}

}  // namespace

void validate_loops(const Plan& plan) {
  const std::vector<Loop>& loops = plan.loops;
  std::vector<uint32_t> last_end(loops.size() + 1, 0);  // per parent: where its previous child ended
  for (size_t i = 0; i < loops.size(); ++i) {
    const Loop& l = loops[i];
    std::string name = "loop " + std::to_string(i);
    if (l.parent < -1 || l.parent >= int32_t(i))
      fail(name + ": parent " + std::to_string(l.parent) + " is not an earlier loop");
    uint32_t lo = l.parent < 0 ? 0 : loops[size_t(l.parent)].begin;
    uint32_t hi = l.parent < 0 ? uint32_t(plan.steps.size()) : loops[size_t(l.parent)].end;
    if (l.begin > l.end || l.begin < lo || l.end > hi)
      fail(name + ": steps [" + std::to_string(l.begin) + ", " + std::to_string(l.end) + ") outside [" +
           std::to_string(lo) + ", " + std::to_string(hi) + ")");
    size_t parent = l.parent < 0 ? loops.size() : size_t(l.parent);
    if (l.begin < std::max(last_end[parent], lo))
      fail(name + ": begins at step " + std::to_string(l.begin) + ", inside the loop before it");
    last_end[parent] = l.end;
    // A while loop without slices may be bounded by nothing but its condition.
    bool unsliced_while = l.while_condition != kNoCondition && l.slice_in.empty() && l.slice_out.empty();
    if (l.count < 1 || (l.count > kMaxLoopCount && !(unsliced_while && l.count <= uint64_t(INT64_MAX))))
      fail(name + ": " + std::to_string(l.count) +
           " iterations (1 to 2^32, or to 2^63 - 1 for a while loop " + "without slices)");
    check_copies(plan, l, name);
    for (uint32_t cond : {l.condition, l.while_condition})
      if (cond != kNoCondition && (cond >= plan.buffers.size() || plan.buffers[cond].bytes != 1))
        fail(name + ": condition buffer " + std::to_string(cond) + " is not a bool of this plan");
  }
}

std::vector<uint64_t> calls_per_step(const Plan& plan) {
  std::vector<uint64_t> calls(plan.steps.size(), 1);
  for (const Loop& l : plan.loops)  // a step's enclosing loops multiply
    for (uint32_t s = l.begin; s < l.end && s < calls.size(); ++s)
      calls[s] *= l.while_condition == kNoCondition ? l.count : 1;  // a while loop's count: once
  return calls;
}

uint64_t dispatches_per_run(const Plan& plan) {
  uint64_t total = 0;
  for (uint64_t c : calls_per_step(plan)) total += c;
  return total;
}

std::vector<std::vector<uint32_t>> loop_children(const Plan& plan) {
  std::vector<std::vector<uint32_t>> children(plan.loops.size() + 1);
  for (size_t i = 0; i < plan.loops.size(); ++i) {
    int32_t p = plan.loops[i].parent;
    children[p < 0 ? plan.loops.size() : size_t(p)].push_back(uint32_t(i));
  }
  return children;
}

}  // namespace tessel::rt
