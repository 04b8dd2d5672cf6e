// A graph Conv node as its layout decision sees it (layout_choices.h), and
// the packed weight that lets a conv be computed channels-last: the same
// numbers for the graph pass that packs weights and for the lowering that
// reads them, so both make the same choice.
#pragma once

#include <cstdint>

#include "ir/graph/graph.h"
#include "src/lower/layout_choices.h"
#include "src/passes/channels_last.h"
#include "src/passes/pack_conv_weights.h"

namespace tessel::lower {

// Whether conv's weight is a constant read channels-last as pack_conv_weights
// lays it out (Wt through a Transpose, or panels through Transpose, Reshape, Transpose).
bool has_channels_last_weight(const graph::Node& conv);

// conv's output, window and groups (a static 2-D or N-D Conv);
// weight_channels_last as has_channels_last_weight says, or as `assume_packed`.
ConvShape conv_shape_of(const graph::Node& conv, bool assume_packed = false);

}  // namespace tessel::lower
