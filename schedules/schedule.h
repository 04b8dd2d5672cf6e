// Schedule: a PrimFunc being scheduled, the handles that address its blocks
// and loops, a seeded random source for sampling, and the Trace of everything
// applied. Each primitive checks, builds, replaces, updates the handles and
// appends an instruction to the trace; an illegal request throws
// ScheduleError and leaves the schedule as it was.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/tensor/function.h"
#include "schedules/schedule_error.h"
#include "schedules/trace.h"

namespace tessel::sched {

// A Schedule is a value: a copy forks the function, handles, trace and random
// state. A handle that was not made by this schedule is "handle.invalid"; one
// whose loop or block a primitive replaced or removed is "handle.stale".
class Schedule {
 public:
  explicit Schedule(tir::PrimFunc func, uint64_t seed = 0);

  const tir::PrimFunc& func() const { return func_; }
  const Trace& trace() const { return trace_; }

  // ---- Lookup (recorded in the trace too, so that replays find the same handles)
  BlockRV get_block(const std::string& name);
  std::vector<LoopRV> get_loops(BlockRV block);  // outermost first
  std::vector<BlockRV> get_producers(BlockRV block);
  std::vector<BlockRV> get_consumers(BlockRV block);
  std::string block_name(BlockRV block) const;
  // The loop a handle denotes now; the reference lives as long as the
  // current function, i.e. until the next primitive.
  const tir::ForNode& loop(LoopRV loop) const;
  int64_t value(IntRV v) const;  // a sampled value

  // ---- Loop transformations
  // One factor may be -1 (inferred). Non-exact splits add a predicate to the
  // blocks below; exact=true rejects factors whose product differs from the extent.
  std::vector<LoopRV> split(LoopRV loop, const std::vector<Factor>& factors, bool exact = false);
  LoopRV fuse(const std::vector<LoopRV>& loops);
  void reorder(const std::vector<LoopRV>& order);
  void parallel(LoopRV loop);
  void vectorize(LoopRV loop);
  void unroll(LoopRV loop);
  void bind(LoopRV loop, const std::string& thread_tag);
  void annotate(LoopRV loop, const std::string& key, int64_t value);
  void annotate(BlockRV block, const std::string& key, int64_t value);

  // ---- Block transformations (schedules/primitives/block_primitives.h)
  BlockRV cache_read(BlockRV consumer, int read_index, tir::MemScope scope);
  BlockRV cache_write(BlockRV producer, int write_index, tir::MemScope scope);
  // A `loop` that sample_compute_location drew as "the root" (possible after a
  // decision was mutated in a replay) leaves the block where it is.
  void compute_at(BlockRV block, LoopRV loop);
  void reverse_compute_at(BlockRV block, LoopRV loop);
  void compute_inline(BlockRV block);
  void reverse_compute_inline(BlockRV block);
  BlockRV rfactor(LoopRV loop, int factor_axis);
  BlockRV decompose_reduction(BlockRV block, LoopRV loop);
  void storage_align(BlockRV block, int buffer_index, int axis, int64_t factor, int64_t offset);
  void prefetch(BlockRV block, int read_index, LoopRV at);

  // ---- Sampling. A given decision is used instead of drawing (replay).
  // n factors whose product is the loop's extent, the innermost at most max_innermost.
  std::vector<IntRV> sample_perfect_tile(LoopRV loop, int n, int64_t max_innermost,
                                         std::optional<std::vector<int64_t>> decision = {});
  IntRV sample_categorical(const std::vector<int64_t>& candidates, const std::vector<double>& probs,
                           std::optional<int64_t> decision = {});
  // A loop at which compute_at(block, loop) is legal (legal_compute_locations,
  // the decision indexes it), or std::nullopt for "leave it at the root"
  // (decision -1); each is equally likely.
  std::optional<LoopRV> sample_compute_location(BlockRV block, std::optional<int64_t> decision = {});

 private:
  // A loop handle names the loop's variable, so that it survives rewrites
  // that keep the loop (parallel, reorder, compute_at of another block). A
  // compute location "at the root" is a handle with no variable.
  struct LoopSlot {
    tir::Var var;
    bool root = false;
  };
  const tir::ForNode& resolve(LoopRV loop) const;  // ScheduleError handle.stale / handle.invalid
  bool is_root_location(LoopRV loop) const;
  std::string resolve(BlockRV block) const;
  LoopRV new_loop(tir::Var var, bool root = false);
  BlockRV new_block(std::string name);
  IntRV new_int(int64_t value);
  int64_t factor_value(const Factor& f) const;
  // Commits a primitive's result: the new function and the instruction.
  void commit(tir::PrimFunc func, Instruction inst);

  tir::PrimFunc func_;
  Trace trace_;
  std::mt19937_64 rng_;
  std::vector<LoopSlot> loops_;
  std::vector<std::string> blocks_;
  std::vector<int64_t> ints_;
};

}  // namespace tessel::sched
