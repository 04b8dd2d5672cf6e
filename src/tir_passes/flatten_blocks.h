// flatten_blocks: the first pass after scheduling. Blocks become plain code so
// that backends read only loops, stores, allocations, ifs and barriers:
// bindings are substituted into the body, a reduction's init runs under the
// condition "every reduction variable is at the start of its domain", a
// predicate becomes an if around the whole, and alloc_buffers become Allocate
// statements around the block's code (the root block's around the body).
//
//   for i, k:                                   allocate ... (root intermediates)
//     block C(vi = i, vk: reduce = k):    ->    for i, k:
//       init: C[vi] = 0                           if k == 0: C[i] = 0
//       C[vi] = C[vi] + A[vi, vk]                 C[i] = C[i] + A[i, k]
//
// Guarantees: the result computes what the scheduled function computes (the
// interpreter gives the same outputs) and contains no BlockNode.
#pragma once

#include "ir/tensor/function.h"

namespace tessel::tir_passes {

tir::PrimFunc flatten_blocks(const tir::PrimFunc& func);

}  // namespace tessel::tir_passes
