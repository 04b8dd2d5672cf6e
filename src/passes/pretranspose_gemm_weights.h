// Gemm with a constant, transposed B: the transpose done once, at compile time.
#pragma once

#include "ir/graph/graph.h"

namespace tessel::passes {

// A Gemm whose B is a constant read with transB=1 reads a new constant B^T
// with transB=0 instead (the old constant stays while other nodes read it).
// Why: kernels vectorize along the output columns, which B^T lays out
// contiguously; transB=1 would make every vector load a gather.
// Requires: a verified graph. Guarantees: same outputs, bit for bit.
//   before: %y = Gemm[transB=1](%x, %W)        W: f32[N, K]
//   after:  %y = Gemm[transB=0](%x, %W_t)      W_t: f32[K, N], W_t[k, n] = W[n, k]
void pretranspose_gemm_weights(graph::Graph& g);

}  // namespace tessel::passes
