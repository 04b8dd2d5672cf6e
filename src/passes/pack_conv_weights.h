// Conv with a constant weight computed channels-last (the output channels in
// the vector lanes): the weight stored [C, kh, kw, M], read back through a
// Transpose that fusion joins to the conv's kernel.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "ir/graph/graph.h"

namespace tessel::passes {

// W[M, C, kh, kw] = Wt[C, kh, kw, M] read through a Transpose with this perm;
// from panels, Wt[c, i, j, m] = Wp[m / V, c, i, j, m % V] through a
// Transpose with kPanelsToChannelsLast and a Reshape first.
inline constexpr std::array<int64_t, 4> kUnpackChannelsLast = {3, 0, 1, 2};
inline constexpr std::array<int64_t, 5> kPanelsToChannelsLast = {1, 2, 3, 0, 4};

// The panel width for a conv's packed weight (0: the conv is not computed
// channels-last; the output channels, or a width that does not divide them:
// no panels).
using ConvPanelWidth = std::function<int64_t(const graph::Node& conv)>;

// Each Conv (static shapes) whose weight is a constant f32[M, C, kh, kw]
// and for which `panel_width` gives V > 0 reads it from a new constant
// instead: Wp[M / V, C, kh, kw, V] (panel q holds output channels
// [q * V, (q + 1) * V) of every tap, contiguously), or Wt[C, kh, kw, M]
// when V does not split a group's output channels (C: a group's inputs). Why: a tile vectorized along V
// output channels then walks its panel in order, one contiguous run per tap; read in place, the M weights of
// a tap are C * kh * kw elements apart (a gather per vector), and unpanelled, one tap's run is M * 4 bytes
// from the next (a stream the prefetcher loses). Which convs are computed channels-last, and how wide their
// tiles are, only the target's layout choice knows. A weight shared by several convs is packed once per
// width. Requires: a verified graph. Guarantees: same outputs, bit for bit.
//   before: %y = Conv(%x, %W)                                W: f32[M, C, kh, kw]
//   after:  %p = Transpose[perm=[1, 2, 3, 0, 4]](%W_p)       W_p: f32[M / V, C, kh, kw, V]
//           %t = Reshape(%p, [C, kh, kw, M])
//           %w = Transpose[perm=[3, 0, 1, 2]](%t)
//           %y = Conv(%x, %w)
void pack_conv_weights(graph::Graph& g, const ConvPanelWidth& panel_width);

}  // namespace tessel::passes
