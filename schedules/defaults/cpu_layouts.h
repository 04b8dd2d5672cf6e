// The default CPU schedule's layout decisions (lower/layout_choices.h): which
// 2-D convolutions are computed over the flat plane, and how far the plane is
// padded, from the target's vector width. Made before lowering, since the
// compute definition depends on them; a tuner searches the same choices.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "schedules/defaults/cpu_defaults.h"
#include "src/lower/layout_choices.h"

namespace tessel::sched {

// The decision the default CPU schedule makes for one convolution.
lower::ConvLayout default_cpu_conv_layout(const lower::ConvShape& conv, const CpuScheduleOptions& options);

// The layouts a tuner measures for one convolution, the default's first:
// each form whose tiles the target fills with whole vectors, and the direct
// form. Listed as if its weight could be packed (channels-last is among
// them wherever its groups allow), so that the packing pass and the
// lowering, which see the weight before and after packing, list the same.
std::vector<lower::ConvLayout> cpu_conv_layout_candidates(const lower::ConvShape& conv,
                                                          const CpuScheduleOptions& options);

// The output channels of one register tile of a conv computed channels-last
// with `layout` (the default schedule's columns for its positions): the
// panel width its packed weight is laid out in (pack_conv_weights).
int64_t channels_last_panel(const lower::ConvShape& conv, const lower::ConvLayout& layout,
                            const CpuScheduleOptions& options);

// Those decisions for every op that has one.
lower::LayoutChoices default_cpu_layouts(const CpuScheduleOptions& options);

// The layouts a tuning log decided (by lower::conv_key) where they are among
// a conv's candidates, or, with `alternative` > 0, each conv's candidate of
// that index where it has one (what a tuning session compiles to measure the
// alternatives); the default's elsewhere. Channels-last asked for a conv
// whose weight is not packed (not a constant) gets the default's instead.
lower::LayoutChoices searched_cpu_layouts(const CpuScheduleOptions& options,
                                          std::map<std::string, lower::ConvLayout> decided,
                                          int alternative = 0);

}  // namespace tessel::sched
