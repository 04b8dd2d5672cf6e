// The default CPU schedule's layout decisions (lower/layout_choices.h): which
// 2-D convolutions are computed over the flat plane, and how far the plane is
// padded, from the target's vector width. Made before lowering, since the
// compute definition depends on them; a tuner searches the same choices.
#pragma once

#include "schedules/defaults/cpu_defaults.h"
#include "src/lower/layout_choices.h"

namespace tessel::sched {

// The decision the default CPU schedule makes for one convolution.
lower::ConvLayout default_cpu_conv_layout(const lower::ConvShape& conv, const CpuScheduleOptions& options);

// The output channels of one register tile of a conv computed channels-last
// with `layout` (the default schedule's columns for its positions): the
// panel width its packed weight is laid out in (pack_conv_weights).
int64_t channels_last_panel(const lower::ConvShape& conv, const lower::ConvLayout& layout,
                            const CpuScheduleOptions& options);

// Those decisions for every op that has one.
lower::LayoutChoices default_cpu_layouts(const CpuScheduleOptions& options);

}  // namespace tessel::sched
