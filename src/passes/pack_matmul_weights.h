// MatMul and Gemm with a constant B: B stored as column panels, read back
// through a Transpose and a Reshape that fusion joins to the product's kernel.
#pragma once

#include <cstdint>
#include <functional>

#include "ir/graph/graph.h"

namespace tessel::passes {

// Each MatMul or Gemm (transB=0) of static shape whose B is a constant
// f32[K, N] reads B, when panel = panel_width(M, N) is a divisor of N less
// than N, from a new constant in panel-major order instead (M: A's rows, its
// innermost dimension but K of more than one element, as the schedule sees
// them): panel p holds columns [p * panel, (p + 1) * panel) of every
// row, contiguously. Why: a register tile of `panel` columns walks B down its
// K rows; in row-major order each step is a new row, N * 4 bytes apart (a new
// page every step or two for N = 3072: the TLB, not the FMAs, sets the pace).
// Panel-major, the same walk reads consecutive bytes. The panel is the
// register tile's width, which only the target's schedule knows.
// A constant shared by several products is packed once; each product gets its
// own Transpose and Reshape, so that fusion can claim them.
// Requires: a verified graph. Guarantees: same outputs, bit for bit.
//   before: %y = MatMul(%x, %W)                      W: f32[K, N]
//   after:  %t = Transpose[perm=[1, 0, 2]](%W_p)     W_p: f32[N / panel, K, panel]
//           %w = Reshape(%t, [K, N])
//           %y = MatMul(%x, %w)
using PanelWidth = std::function<int64_t(int64_t rows, int64_t columns)>;
void pack_matmul_weights(graph::Graph& g, const PanelWidth& panel_width);

}  // namespace tessel::passes
