// The loop primitives and the sampling rules as functions on a PrimFunc: each
// checks its preconditions (a ScheduleError naming what and why when they
// fail), builds the new loop nest and returns the new function; the input is
// never changed. Loops are addressed by their variable, blocks by name. The
// Schedule (schedules/schedule.h) wraps these with handles and the trace.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/tensor/function.h"
#include "schedules/schedule_error.h"

namespace tessel::sched {

struct SplitResult {
  tir::PrimFunc func;
  std::vector<tir::Var> loops;  // the new loops, outermost first
};
// Splits `loop` (serial, constant extent) into factors.size() nested loops of
// those extents. One factor may be -1: it becomes ceildiv(extent, product of
// the others). The old variable becomes the linear combination of the new
// ones in everything below; when the product exceeds the extent (allowed
// unless exact) every block below gets the predicate `combination < extent`.
// The new loops are serial and carry no annotations.
//   for i in 0..64: block C(vi = i)   --split(i, [4, 16])-->
//   for i_0 in 0..4: for i_1 in 0..16: block C(vi = i_0 * 16 + i_1)
SplitResult split(const tir::PrimFunc& func, const tir::VarNode* loop, const std::vector<int64_t>& factors,
                  bool exact);

struct FuseResult {
  tir::PrimFunc func;
  tir::Var loop;  // the fused loop
};
// Fuses directly nested serial loops (outermost first, each the only child of
// the one before) into one loop over the product of their extents; each old
// variable becomes a floordiv/floormod of the new one. The fused loop is
// serial and carries no annotations.
FuseResult fuse(const tir::PrimFunc& func, const std::vector<const tir::VarNode*>& loops);

// Permutes loops of one chain (ancestors of one block, each the only child of
// the loop above it from the outermost listed to the innermost listed): the
// positions the listed loops occupy get them in the given order.
tir::PrimFunc reorder(const tir::PrimFunc& func, const std::vector<const tir::VarNode*>& order);

// Loop kinds. parallel: a serial loop that no block below binds to a
// reduction variable. vectorize: additionally innermost (inner loops that
// are unrolled with constant extents allowed) with a constant extent. unroll: any loop not bound to a thread. bind: a serial loop, to a
// thread tag no enclosing or enclosed loop uses, with spatial bindings only.
tir::PrimFunc parallel(const tir::PrimFunc& func, const tir::VarNode* loop);
tir::PrimFunc vectorize(const tir::PrimFunc& func, const tir::VarNode* loop);
tir::PrimFunc unroll(const tir::PrimFunc& func, const tir::VarNode* loop);
tir::PrimFunc bind(const tir::PrimFunc& func, const tir::VarNode* loop, const std::string& thread_tag);

// Sets annotation `key` of a loop or a block to value (replacing an old one).
tir::PrimFunc annotate_loop(const tir::PrimFunc& func, const tir::VarNode* loop, const std::string& key,
                            int64_t value);
tir::PrimFunc annotate_block(const tir::PrimFunc& func, const std::string& block, const std::string& key,
                             int64_t value);

// ---- Sampling. The distributions are computed here from raw 64-bit draws,
// so that a seed gives the same samples on every platform.

// A uniform integer in [0, n), n > 0 (rejection sampling, no modulo bias).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n);
// A uniform double in [0, 1) from the top 53 bits of one draw.
double uniform_unit(std::mt19937_64& rng);

// Every way to write `extent` as an ordered product of n positive factors
// (outermost first) whose innermost is at most max_innermost.
std::vector<std::vector<int64_t>> perfect_tilings(int64_t extent, int n, int64_t max_innermost);
// One of perfect_tilings(extent of loop, n, max_innermost), uniformly;
// ScheduleError when the loop's extent is not constant or no tiling exists.
std::vector<int64_t> sample_perfect_tile(const tir::PrimFunc& func, const tir::VarNode* loop, int n,
                                         int64_t max_innermost, std::mt19937_64& rng);
// ScheduleError "sample.invalid_decision" unless `decision` is one of those tilings.
void check_perfect_tile(const tir::PrimFunc& func, const tir::VarNode* loop, int n, int64_t max_innermost,
                        const std::vector<int64_t>& decision);
// An index drawn with the given (non-negative, not all zero) weights.
int64_t sample_categorical_index(const std::vector<double>& probs, std::mt19937_64& rng);
// ScheduleError unless candidates and probs are a valid distribution.
void check_categorical(const std::vector<int64_t>& candidates, const std::vector<double>& probs);

// The constant extent of `loop`, or ScheduleError `<primitive>.non_constant_extent`.
int64_t constant_extent(const tir::ForNode& loop, const std::string& primitive);

}  // namespace tessel::sched
