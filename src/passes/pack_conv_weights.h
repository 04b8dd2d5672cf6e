// Conv with a constant weight computed channels-last (the output channels in
// the vector lanes): the weight stored [C, kh, kw, M], read back through a
// Transpose that fusion joins to the conv's kernel.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "ir/graph/graph.h"

namespace tessel::passes {

// W[M, C, kh, kw] = Wt[C, kh, kw, M] read through a Transpose with this perm.
inline constexpr std::array<int64_t, 4> kUnpackChannelsLast = {3, 0, 1, 2};

// Each Conv (one group, static shapes) whose weight is a constant f32[M, C, kh, kw]
// and for which `channels_last` says yes reads it from a new constant
// Wt[C, kh, kw, M] instead. Why: a tile vectorized along the output channels
// then loads one contiguous run of weights per tap; read in place, the M
// weights of a tap are C * kh * kw elements apart (a gather per vector). Which
// convs are computed channels-last only the target's layout choice knows.
// A weight shared by several convs is packed once.
// Requires: a verified graph. Guarantees: same outputs, bit for bit.
//   before: %y = Conv(%x, %W)                          W: f32[M, C, kh, kw]
//   after:  %w = Transpose[perm=[3, 0, 1, 2]](%W_t)    W_t: f32[C, kh, kw, M]
//           %y = Conv(%x, %w)
void pack_conv_weights(graph::Graph& g, const std::function<bool(const graph::Node& conv)>& channels_last);

}  // namespace tessel::passes
