// Activations kept channels-last between kernels: which NCHW values the
// kernels store as [N, H, W, C] (graph::Value::storage). Nothing about the
// ops changes, only where their elements lie: every lowering reads and
// writes a value through its storage order, so any choice computes the same
// outputs, and a good one lets a conv computed with its channels in the
// vector lanes (lower::ConvForm::kChannelsLast) read its input and write its
// output in order, with no transposing pass.
//
// A depthwise conv's region is kept channels-last: channels-last, a vector
// holds one tap of as many channels, every lane an output whatever the
// plane's rows (per channel, a row of 7 or 14 fills part of a vector, and a
// stride-2 row is read at every other column), and the 1x1 convs and the
// squeeze-excite pooling around it read the same layout in order, with the
// output channels in the lanes. A region of dense convs alone (ResNet's 3x3
// convs) is left as it is: their flat forms ran faster than channels-last.
//
//   before: %a = Conv(%x, %w1)      %b = Relu(%a)      %c = Conv(%b, %dw) {group = 960}
//   after:  %a: f32[1, 960, 7, 7] stored [0, 2, 3, 1]
//           %b: f32[1, 960, 7, 7] stored [0, 2, 3, 1]   (the ops and their inputs unchanged)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph/graph.h"

namespace tessel::passes {

enum class ChannelsLastPolicy {
  kNone,       // every value as its type says
  kDepthwise,  // the regions a depthwise conv reads
  kAll,        // every region, with or without a depthwise conv (for comparisons and tests)
};

// A region is a connected set of 4-D activations, not the graph's inputs
// or outputs, whose plane holds more than one position (a 1 x 1 plane is in
// the same order either way), and whose producer and readers all keep them
// in order channels-last: a 2-D Conv from f32 to f32 with a constant weight
// (one group, groups of several channels, or one channel each) and whole
// vectors of output channels (per group), its input and output both in the
// region if it is depthwise; an elementwise op (a Cast included) whose
// operands of its output's shape are all in the region, whatever their
// dtypes (a quantized conv's requantization between two convs); or (reading
// only) a global average pool. The policy says
// which regions are stored channels-last; `vector_lanes` are the target's
// f32 lanes. Requires: a verified graph. Guarantees: the same outputs; only
// storage orders change.
void store_channels_last(graph::Graph& g, ChannelsLastPolicy policy, int64_t vector_lanes);

// The storage order of a channels-last NCHW activation: [0, 2, 3, 1].
const std::vector<int64_t>& channels_last_storage();
bool stored_channels_last(const graph::Value& v);

// "none", "depthwise", "all"; nullopt for another name.
std::optional<ChannelsLastPolicy> channels_last_policy_named(const std::string& name);
std::string channels_last_policy_name(ChannelsLastPolicy policy);

}  // namespace tessel::passes
