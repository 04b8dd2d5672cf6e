// compact_buffers: after flatten_blocks, every allocated buffer shrinks to the
// region its accesses cover and its allocation moves down to the lowest
// statement enclosing them (TVM's CompactBufferAllocation). A cache that
// cache_read/cache_write made full-sized and compute_at placed in a tile
// becomes a tile-sized buffer allocated in the tile's loop:
//
//   allocate acc: local f32[32, 16]              for i0 in 0..4:
//   for i0 in 0..4:                                allocate acc: local f32[8, 16]
//     for i1, j: acc[i0*8 + i1, j] = 0.0f   ->      for i1, j: acc[i1, j] = 0.0f
//     ...                                            ...
//     for i1, j: C[i0*8 + i1, j] = acc[i0*8 + i1, j]  for i1, j: C[i0*8 + i1, j] = acc[i1, j]
//
// Placement: the lowest common ancestor of the buffer's loads and stores; for
// a shared buffer never inside a threadIdx loop (one copy per thread block):
// it is allocated around the outermost one, with the region below that
// ancestor, every thread's accesses in it (a tile staged per step of a loop
// inside the threads is one step's tile).
// Region: the union of the accesses with the loops below the placement relaxed
// over their ranges (branch conditions ignored: over-approximated); its min
// may depend on the loops above, its extent is their constant upper bound, and
// a dimension without one (an index read from memory, say) keeps its full
// extent. The compacted buffer is row-major (storage_align strides are kept
// only where nothing shrinks); a buffer that is never accessed is dropped.
//
// Requires: no BlockNode (run flatten_blocks first). Guarantees: the result
// computes the same outputs in every thread order, and every access stays in
// the bounds of its (new) buffer whenever it did in the old one.
#pragma once

#include "ir/tensor/function.h"

namespace tessel::tir_passes {

tir::PrimFunc compact_buffers(const tir::PrimFunc& func);

}  // namespace tessel::tir_passes
