// What the cost model sees of a candidate: a fixed-length vector extracted
// from its scheduled and flattened tensor IR. Per store: its arithmetic by
// kind, the loops around it (extents, vector lanes, unrolling, parallelism,
// a GPU's threads per block and blocks),
// and for its busiest accesses the bytes they touch, the distinct bytes
// (what the loops' reuse leaves), the stride along the innermost loop and
// the memory scope; then pooled over the program's stores (sum and max),
// with the program's totals: FLOPs, bytes, arithmetic intensity, local,
// global and shared allocations, bytes prefetched. Counts enter as log2(1 + x), so that sizes compare by
// ratio.
//
//   for i in 0..64 parallel: for j in 0..64 vectorized: C[i, j] = A[i, j] + B[j]
//     -> store C: 4096 float adds, lanes 64, parallel 64; A and C stride 1,
//        B stride 1 reused 64 times (4096 touches, 64 distinct)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/tensor/function.h"

namespace tessel::tune {

// The per-store part, in order (the index of each name is its position).
const std::vector<std::string>& store_feature_names();
// The whole vector: "sum.<store feature>", "max.<store feature>", then the program's own.
const std::vector<std::string>& feature_names();
size_t feature_count();

// The candidate's features; `f` is flattened (no blocks: tir_passes::flatten_blocks).
std::vector<float> extract_features(const tir::PrimFunc& f);

// The per-store parts before pooling (raw counts, not log-scaled), for tests and reports.
std::vector<std::vector<double>> store_features(const tir::PrimFunc& f);

}  // namespace tessel::tune
