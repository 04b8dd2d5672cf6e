// The block primitives as functions on a PrimFunc: each checks its
// preconditions (a ScheduleError naming what and why when they fail), builds
// the new subtree and returns the new function; the input is never changed.
// Blocks are addressed by name, loops by their variable. The Schedule
// (schedules/schedule.h) wraps these with handles and the trace.
//
// Error kinds are "<primitive>.<reason>"; every primitive may throw
// `.no_block` / `.no_loop` for a name or loop not in the function. The other
// reasons are listed with each primitive.
#pragma once

#include <string>
#include <vector>

#include "ir/tensor/function.h"
#include "schedules/schedule_error.h"

namespace tessel::sched {

struct PrimitiveResult {
  tir::PrimFunc func;
  std::string new_block;  // the block the primitive created, when it creates one
};

// A new block "<buffer>_<scope>" copying the whole read_index-th read buffer
// of `consumer` into a new buffer in `scope` (a root allocation), placed at the
// root right after the last nest writing the buffer (first, for a function
// input); only `consumer` then reads the copy. compute_at narrows the copy.
// Errors: bad_index, reads_own_output (the buffer is the block's accumulator),
// producer_in_consumer_nest (apply cache_read before compute_at).
PrimitiveResult cache_read(const tir::PrimFunc& func, const std::string& consumer, int read_index,
                           tir::MemScope scope);
// The block writes (and, for a reduction, reads) a new buffer in `scope`; a
// new block "<buffer>_<scope>" right after its root nest copies it to the original.
// Errors: bad_index, multiple_writers, consumer_in_nest (a reader shares the nest).
PrimitiveResult cache_write(const tir::PrimFunc& func, const std::string& producer, int write_index,
                            tir::MemScope scope);

// Moves the producer block under `loop` (an ancestor of all its consumers):
// its nest is removed and regenerated at the start of the loop's body (after
// any of its own producers there), with one loop per iteration variable
// covering the region of its outputs the consumers read below `loop`
// (relaxed by tir/int_set.h; the whole domain where that cannot be bounded;
// for a shared buffer also over the threadIdx loops above, since all threads
// of the block see it), guarded by a predicate where the region leaves the domain. Reduction
// variables always get their whole domain.
// Errors: loop_in_own_nest, output_block (it writes a function output),
// multiple_writers, write_not_trivial (not written at plain iteration
// variables), no_consumer, consumer_outside_loop, dependence.
tir::PrimFunc compute_at(const tir::PrimFunc& func, const std::string& block, const tir::VarNode* loop);
// Moves the consumer block under `loop` (a loop of its producers), after the
// producers there, iterating exactly over the elements they write below that
// loop. A dimension the consumer reads at an index computed from its
// variables (a flat row read back as a plane, h * W' + w) must be written
// whole below the loop; the variables only it uses run over their whole domain.
// Errors: loop_in_own_nest, multiple_writers (a buffer it writes is read here and written by another block
// too), producer_outside_loop, inside_reduction (the loop is a reduction loop of a producer: its results are
// partial there), read_not_trivial (a read of a range, at a constant index, or at computed indices alone or
// not written whole), reduction_split (the consumer's reduction would be cut into pieces), unbounded_region,
// inexact_region, dependence.
tir::PrimFunc reverse_compute_at(const tir::PrimFunc& func, const std::string& block,
                                 const tir::VarNode* loop);

// Inlines a complete, injective producer (`B[v...] = expr`, v distinct
// iteration variables) into all its consumers and removes it and its buffer.
// Errors: not_complete (a reduction), body_not_store, predicated,
// not_injective, output_block (not an intermediate), multiple_writers, reads_own_output.
tir::PrimFunc compute_inline(const tir::PrimFunc& func, const std::string& block);
// Inlines a complete consumer that reads its only producer's buffer at exactly
// its own iteration variables, over the whole buffer, into that producer
// (which then writes the consumer's output); removes the consumer and the buffer.
// Errors: not_complete, body_not_store, predicated, not_injective,
// producer_count, output_block, multiple_writers, other_consumers,
// partial_read, producer_not_complete, dependence.
tir::PrimFunc reverse_compute_inline(const tir::PrimFunc& func, const std::string& block);

// Factors the reduction over `loop` (a reduction loop of one block) into a
// new block "<block>_rf" computing partial results into "<buffer>_rf", which
// has a new dimension (the loop's extent) at `factor_axis`; the original block
// then reduces over that dimension, in a new nest right after.
// Errors: no_block / multiple_blocks (the loop must bind exactly one block),
// not_reduction_loop, unknown_combiner (init = identity, body B = B op value
// with op +, *, max, min), predicated, bad_factor_axis, mixed_loop,
// non_constant_loop, shared_nest (apply rfactor before compute_at).
PrimitiveResult rfactor(const tir::PrimFunc& func, const tir::VarNode* loop, int factor_axis);
// Splits the block's init into its own block "<block>_init" placed before
// `loop` (a loop of the block), over copies of the spatial loops at and below
// `loop`; the block keeps only its update.
// Errors: not_reduction, loop_not_ancestor, reduce_loop_above, mixed_loop,
// predicated, init_uses_reduction, dependence.
PrimitiveResult decompose_reduction(const tir::PrimFunc& func, const std::string& block,
                                    const tir::VarNode* loop);

// Pads the stride of dimension `axis` of the block's buffer_index-th write
// buffer (an intermediate) to the smallest s >= its dense stride with
// s % factor == offset; outer strides grow to match.
// Errors: bad_index, not_intermediate, bad_axis, bad_factor.
tir::PrimFunc storage_align(const tir::PrimFunc& func, const std::string& block, int buffer_index, int axis,
                            int64_t factor, int64_t offset);

// At the start of `at`'s body, a prefetch of the next slice of the read_index-th
// read of `block` (a dense parameter read one slice of its first dimension at
// a time: a weight panel), the slice's lines spread evenly over the iterations
// of the loops from below the slice's loop down to `at` (each asks for one
// step's share, rounded up to whole lines); the last slice asks for itself.
// Errors: bad_index, not_parameter, not_sliced (a range of slices read at
// once), no_loop (`at` is not above the block), no_slice_loop (one slice
// only), slice_varies (`at` is not inside the slice's loop), dynamic_extent.
tir::PrimFunc prefetch(const tir::PrimFunc& func, const std::string& block, int read_index,
                       const tir::VarNode* at);
// The position among the block's loops (outermost first) of the innermost
// loop the read's slice index uses, or -1 (a range of slices, or one slice).
int prefetch_slice_loop(const tir::PrimFunc& func, const std::string& block, int read_index);

// Where a block may be computed: the loops of its (first) consumer's nest at
// which compute_at is legal (outermost first). The tuner samples from these.
std::vector<const tir::VarNode*> legal_compute_locations(const tir::PrimFunc& func, const std::string& block);

}  // namespace tessel::sched
