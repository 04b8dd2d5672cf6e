// Schedule: the block primitives (schedules/primitives/block_primitives.h)
// and sample_compute_location, wrapped with handles and recorded in the trace.
#include "schedules/primitives/block_primitives.h"
#include "schedules/primitives/loop_primitives.h"
#include "schedules/schedule.h"

namespace tessel::sched {

using namespace tir;

namespace {

Attrs scope_attrs(int index, MemScope scope) {
  return {{"index", int64_t(index)}, {"scope", std::string(mem_scope_name(scope))}};
}

}  // namespace

BlockRV Schedule::cache_read(BlockRV consumer, int read_index, MemScope scope) {
  PrimitiveResult result = sched::cache_read(func_, resolve(consumer), read_index, scope);
  BlockRV out = new_block(result.new_block);
  commit(result.func,
         {"cache_read", {operand(consumer)}, scope_attrs(read_index, scope), {operand(out)}, {}});
  return out;
}

BlockRV Schedule::cache_write(BlockRV producer, int write_index, MemScope scope) {
  PrimitiveResult result = sched::cache_write(func_, resolve(producer), write_index, scope);
  BlockRV out = new_block(result.new_block);
  commit(result.func,
         {"cache_write", {operand(producer)}, scope_attrs(write_index, scope), {operand(out)}, {}});
  return out;
}

// A location sampled as "the root" leaves the block where it is.
void Schedule::compute_at(BlockRV block, LoopRV loop) {
  Instruction inst{"compute_at", {operand(block), operand(loop)}, {}, {}, {}};
  std::string name = resolve(block);
  if (is_root_location(loop)) return commit(func_, std::move(inst));
  commit(sched::compute_at(func_, name, resolve(loop).var.get()), std::move(inst));
}

void Schedule::reverse_compute_at(BlockRV block, LoopRV loop) {
  Instruction inst{"reverse_compute_at", {operand(block), operand(loop)}, {}, {}, {}};
  std::string name = resolve(block);
  if (is_root_location(loop)) return commit(func_, std::move(inst));
  commit(sched::reverse_compute_at(func_, name, resolve(loop).var.get()), std::move(inst));
}

void Schedule::compute_inline(BlockRV block) {
  commit(sched::compute_inline(func_, resolve(block)), {"compute_inline", {operand(block)}, {}, {}, {}});
}

void Schedule::reverse_compute_inline(BlockRV block) {
  commit(sched::reverse_compute_inline(func_, resolve(block)),
         {"reverse_compute_inline", {operand(block)}, {}, {}, {}});
}

BlockRV Schedule::rfactor(LoopRV loop, int factor_axis) {
  PrimitiveResult result = sched::rfactor(func_, resolve(loop).var.get(), factor_axis);
  BlockRV out = new_block(result.new_block);
  commit(result.func,
         {"rfactor", {operand(loop)}, {{"factor_axis", int64_t(factor_axis)}}, {operand(out)}, {}});
  return out;
}

BlockRV Schedule::decompose_reduction(BlockRV block, LoopRV loop) {
  PrimitiveResult result = sched::decompose_reduction(func_, resolve(block), resolve(loop).var.get());
  BlockRV out = new_block(result.new_block);
  commit(result.func, {"decompose_reduction", {operand(block), operand(loop)}, {}, {operand(out)}, {}});
  return out;
}

void Schedule::storage_align(BlockRV block, int buffer_index, int axis, int64_t factor, int64_t offset) {
  commit(sched::storage_align(func_, resolve(block), buffer_index, axis, factor, offset),
         {"storage_align",
          {operand(block)},
          {{"buffer_index", int64_t(buffer_index)},
           {"axis", int64_t(axis)},
           {"factor", factor},
           {"offset", offset}},
          {},
          {}});
}

void Schedule::prefetch(BlockRV block, int read_index, LoopRV at) {
  commit(sched::prefetch(func_, resolve(block), read_index, resolve(at).var.get()),
         {"prefetch", {operand(block), operand(at)}, {{"read_index", int64_t(read_index)}}, {}, {}});
}

std::optional<LoopRV> Schedule::sample_compute_location(BlockRV block, std::optional<int64_t> decision) {
  std::vector<const VarNode*> locations = legal_compute_locations(func_, resolve(block));
  int64_t count = int64_t(locations.size());
  if (decision && (*decision < -1 || *decision >= count)) {
    throw ScheduleError("sample.invalid_decision",
                        "sample_compute_location: decision " + std::to_string(*decision) + " for block " +
                            blocks_[block.id] + ", which has " + std::to_string(count) +
                            " legal locations (-1: the root)");
  }
  // The root and each legal loop are equally likely.
  int64_t index = decision ? *decision : int64_t(uniform_below(rng_, uint64_t(count) + 1)) - 1;
  LoopRV out = index < 0 ? new_loop({}, /*root=*/true) : new_loop(Var(locations[index]));
  trace_.append(
      {"sample_compute_location", {operand(block)}, {}, {operand(out)}, std::vector<int64_t>{index}});
  if (index < 0) return std::nullopt;
  return out;
}

}  // namespace tessel::sched
