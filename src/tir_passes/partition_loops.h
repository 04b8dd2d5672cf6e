// partition_vector_loops: a vectorized loop whose body tests its variable
// against constants (the guard of a padded read: 0 <= i - 1 < 112) is split
// where those tests change, into at most three loops: before, where every
// test holds, after. Each is simplified on its own range, so in the middle
// the guards fold to true and the clamped indices of guarded reads
// (max(min(i - 1, 111), 0)) to plain affine ones.
//
// Why: LLVM's loop vectorizer does not vectorize the guarded form (the
// guards of a row become a switch, clamped indices would be gathers). A pad
// stage ran scalar; partitioned, its middle is a vector copy (TVM's
// LoopPartition does the same for the same reason).
//
//   for i in 0..114 vectorized:                         P[0] = 0.0f
//     P[i] = select(i - 1 >= 0 && i - 1 < 112,    ->    for i in 1..113 vectorized: P[i] = X[i - 1]
//                   X[max(min(i - 1, 111), 0)], 0.0f)   P[113] = 0.0f
//
// A serial loop is split the same way by the tests of its variable inside
// the vectorized loops it holds: the reduction over an inlined Concat's
// channels (select(k < 256, A[k], B[k - 256])) becomes one loop per input.
//
// Tests of the form (a * i + rest) op (constant), a a nonzero constant, op
// one of < <= > >=, in select and if conditions (conjunctions split), are
// used, rest an expression of the loops around i and inside it: the middle
// is where the test holds for every value rest takes (a stride phase's
// guard, 0 <= 2 * i + p - 1 < 56 for p in [0, 2), holds for i in [1, 28)).
// A test decided over the whole loop is ignored; each part is cut again
// where the tests still changing in it change (a Concat of four inputs read
// along the loop: four loops). The parts are simplified with every
// enclosing loop's range known. A loop whose middle would be shorter than
// min_middle iterations is left whole.
// Guarantees: the same stores in the same order.
#pragma once

#include <cstdint>

#include "ir/tensor/function.h"

namespace tessel::tir_passes {

tir::PrimFunc partition_vector_loops(const tir::PrimFunc& func, int64_t min_middle = 4);

}  // namespace tessel::tir_passes
