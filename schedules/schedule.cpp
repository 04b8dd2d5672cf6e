// Schedule: handles, lookups, the loop primitives and sampling, each recorded
// in the trace. The block primitives' wrappers are in schedule_block.cpp.
#include "schedules/schedule.h"

#include <functional>

#include "schedules/primitives/block_primitives.h"
#include "schedules/primitives/loop_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

Schedule::Schedule(PrimFunc func, uint64_t seed) : func_(std::move(func)), rng_(seed) {}

// ---- Handles

const ForNode& Schedule::resolve(LoopRV rv) const {
  if (rv.id < 0 || size_t(rv.id) >= loops_.size()) {
    throw ScheduleError("handle.invalid",
                        "loop handle " + std::to_string(rv.id) + " was not made by this schedule");
  }
  const LoopSlot& slot = loops_[rv.id];
  if (slot.root) {
    throw ScheduleError("handle.root",
                        "loop handle " + std::to_string(rv.id) + " is the root compute location, not a loop");
  }
  Stmt loop = find_loop(func_, slot.var.get());
  if (!loop.defined()) {
    throw ScheduleError("handle.stale", "loop handle " + std::to_string(rv.id) + " (loop " + slot.var->name +
                                            ") names a loop an earlier primitive replaced");
  }
  return static_cast<const ForNode&>(*loop);
}

bool Schedule::is_root_location(LoopRV rv) const {
  return rv.id >= 0 && size_t(rv.id) < loops_.size() && loops_[rv.id].root;
}

std::string Schedule::resolve(BlockRV rv) const {
  if (rv.id < 0 || size_t(rv.id) >= blocks_.size()) {
    throw ScheduleError("handle.invalid",
                        "block handle " + std::to_string(rv.id) + " was not made by this schedule");
  }
  const std::string& name = blocks_[rv.id];
  if (!find_block(func_, name).defined()) {
    throw ScheduleError("handle.stale", "block handle " + std::to_string(rv.id) + " (block " + name +
                                            ") names a block an earlier primitive removed");
  }
  return name;
}

LoopRV Schedule::new_loop(Var var, bool root) {
  loops_.push_back({std::move(var), root});
  return {int(loops_.size() - 1)};
}

BlockRV Schedule::new_block(std::string name) {
  blocks_.push_back(std::move(name));
  return {int(blocks_.size() - 1)};
}

IntRV Schedule::new_int(int64_t value) {
  ints_.push_back(value);
  return {int(ints_.size() - 1)};
}

int64_t Schedule::factor_value(const Factor& f) const {
  return f.is_rv() ? value(f.rv) : f.constant;
}

void Schedule::commit(PrimFunc func, Instruction inst) {
  func_ = std::move(func);
  trace_.append(std::move(inst));
}

std::string Schedule::block_name(BlockRV block) const {
  return resolve(block);
}
const ForNode& Schedule::loop(LoopRV loop) const {
  return resolve(loop);
}

int64_t Schedule::value(IntRV v) const {
  if (v.id < 0 || size_t(v.id) >= ints_.size()) {
    throw ScheduleError("handle.invalid",
                        "integer handle " + std::to_string(v.id) + " was not made by this schedule");
  }
  return ints_[v.id];
}

// ---- Lookups

BlockRV Schedule::get_block(const std::string& name) {
  if (!find_block(func_, name).defined()) {
    throw ScheduleError("get_block.not_found", "get_block: no block " + name + " in " + func_->name);
  }
  BlockRV rv = new_block(name);
  trace_.append({"get_block", {}, {{"name", name}}, {operand(rv)}, {}});
  return rv;
}

std::vector<LoopRV> Schedule::get_loops(BlockRV block) {
  Stmt b = find_block(func_, resolve(block));
  std::vector<LoopRV> out;
  Instruction inst{"get_loops", {operand(block)}, {}, {}, {}};
  for (const Stmt& l : loops_above(func_, b.get())) {
    out.push_back(new_loop(static_cast<const ForNode&>(*l).var));
    inst.outputs.push_back(operand(out.back()));
  }
  trace_.append(std::move(inst));
  return out;
}

namespace {

template <typename Query>
std::vector<BlockRV> related_blocks(const PrimFunc& func, const std::string& name, Query query,
                                    const std::function<BlockRV(std::string)>& make) {
  Stmt b = find_block(func, name);
  std::vector<BlockRV> out;
  for (const Stmt& s : query(func, static_cast<const BlockNode&>(*b))) {
    out.push_back(make(static_cast<const BlockNode&>(*s).name));
  }
  return out;
}

}  // namespace

std::vector<BlockRV> Schedule::get_producers(BlockRV block) {
  std::string name = resolve(block);
  Instruction inst{"get_producers", {operand(block)}, {}, {}, {}};
  std::vector<BlockRV> out =
      related_blocks(func_, name, producers_of, [&](std::string n) { return new_block(n); });
  for (BlockRV rv : out) inst.outputs.push_back(operand(rv));
  trace_.append(std::move(inst));
  return out;
}

std::vector<BlockRV> Schedule::get_consumers(BlockRV block) {
  std::string name = resolve(block);
  Instruction inst{"get_consumers", {operand(block)}, {}, {}, {}};
  std::vector<BlockRV> out =
      related_blocks(func_, name, consumers_of, [&](std::string n) { return new_block(n); });
  for (BlockRV rv : out) inst.outputs.push_back(operand(rv));
  trace_.append(std::move(inst));
  return out;
}

// ---- Loop transformations

std::vector<LoopRV> Schedule::split(LoopRV loop, const std::vector<Factor>& factors, bool exact) {
  const ForNode& l = resolve(loop);
  std::vector<int64_t> values;
  Instruction inst{"split", {operand(loop)}, {{"exact", int64_t(exact)}}, {}, {}};
  for (const Factor& f : factors) {
    values.push_back(factor_value(f));
    inst.inputs.push_back(operand(f));
  }
  SplitResult result = sched::split(func_, l.var.get(), values, exact);
  std::vector<LoopRV> out;
  for (const Var& v : result.loops) {
    out.push_back(new_loop(v));
    inst.outputs.push_back(operand(out.back()));
  }
  commit(result.func, std::move(inst));
  return out;
}

LoopRV Schedule::fuse(const std::vector<LoopRV>& loops) {
  std::vector<const VarNode*> vars;
  Instruction inst{"fuse", {}, {}, {}, {}};
  for (LoopRV rv : loops) {
    vars.push_back(resolve(rv).var.get());
    inst.inputs.push_back(operand(rv));
  }
  FuseResult result = sched::fuse(func_, vars);
  LoopRV out = new_loop(result.loop);
  inst.outputs.push_back(operand(out));
  commit(result.func, std::move(inst));
  return out;
}

void Schedule::reorder(const std::vector<LoopRV>& order) {
  std::vector<const VarNode*> vars;
  Instruction inst{"reorder", {}, {}, {}, {}};
  for (LoopRV rv : order) {
    vars.push_back(resolve(rv).var.get());
    inst.inputs.push_back(operand(rv));
  }
  commit(sched::reorder(func_, vars), std::move(inst));
}

void Schedule::parallel(LoopRV loop) {
  commit(sched::parallel(func_, resolve(loop).var.get()), {"parallel", {operand(loop)}, {}, {}, {}});
}

void Schedule::vectorize(LoopRV loop) {
  commit(sched::vectorize(func_, resolve(loop).var.get()), {"vectorize", {operand(loop)}, {}, {}, {}});
}

void Schedule::unroll(LoopRV loop) {
  commit(sched::unroll(func_, resolve(loop).var.get()), {"unroll", {operand(loop)}, {}, {}, {}});
}

void Schedule::bind(LoopRV loop, const std::string& thread_tag) {
  commit(sched::bind(func_, resolve(loop).var.get(), thread_tag),
         {"bind", {operand(loop)}, {{"thread", thread_tag}}, {}, {}});
}

void Schedule::annotate(LoopRV loop, const std::string& key, int64_t value) {
  commit(annotate_loop(func_, resolve(loop).var.get(), key, value),
         {"annotate", {operand(loop)}, {{"key", key}, {"value", value}}, {}, {}});
}

void Schedule::annotate(BlockRV block, const std::string& key, int64_t value) {
  commit(annotate_block(func_, resolve(block), key, value),
         {"annotate", {operand(block)}, {{"key", key}, {"value", value}}, {}, {}});
}

// ---- Sampling

std::vector<IntRV> Schedule::sample_perfect_tile(LoopRV loop, int n, int64_t max_innermost,
                                                 std::optional<std::vector<int64_t>> decision) {
  const VarNode* var = resolve(loop).var.get();
  if (decision) {
    check_perfect_tile(func_, var, n, max_innermost, *decision);
  } else {
    decision = sched::sample_perfect_tile(func_, var, n, max_innermost, rng_);
  }
  Instruction inst{"sample_perfect_tile",
                   {operand(loop)},
                   {{"n", int64_t(n)}, {"max_innermost", max_innermost}},
                   {},
                   decision};
  std::vector<IntRV> out;
  for (int64_t f : *decision) {
    out.push_back(new_int(f));
    inst.outputs.push_back(operand(out.back()));
  }
  trace_.append(std::move(inst));
  return out;
}

IntRV Schedule::sample_categorical(const std::vector<int64_t>& candidates, const std::vector<double>& probs,
                                   std::optional<int64_t> decision) {
  check_categorical(candidates, probs);
  if (decision && (*decision < 0 || *decision >= int64_t(candidates.size()))) {
    throw ScheduleError("sample.invalid_decision", "sample_categorical: decision " +
                                                       std::to_string(*decision) + " is not an index into " +
                                                       std::to_string(candidates.size()) + " candidates");
  }
  int64_t index = decision ? *decision : sample_categorical_index(probs, rng_);
  IntRV out = new_int(candidates[index]);
  trace_.append({"sample_categorical",
                 {},
                 {{"candidates", candidates}, {"probs", probs}},
                 {operand(out)},
                 std::vector<int64_t>{index}});
  return out;
}

}  // namespace tessel::sched
