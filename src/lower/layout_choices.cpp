#include "src/lower/layout_choices.h"

#include "ir/core/diagnostics.h"

namespace tessel::lower {

std::string to_string(const ConvLayout& layout) {
  switch (layout.form) {
    case ConvForm::kDirect: return "direct";
    case ConvForm::kFlat: return "flat align " + std::to_string(layout.flat_align);
    case ConvForm::kFlatPointwise: return "flat-pointwise align " + std::to_string(layout.flat_align);
    case ConvForm::kChannelsLast: return "channels-last align " + std::to_string(layout.flat_align);
  }
  return "?";
}

ConvLayout LayoutChoices::conv_layout(const ConvShape& c) const {
  if (!conv) return {};
  ConvLayout layout = conv(c);
  TESSEL_ICHECK(layout.flat_align >= 1) << "conv layout " << to_string(layout) << ": alignment below 1";
  TESSEL_ICHECK(layout.form == ConvForm::kDirect || c.spatial() == 2)
      << "conv layout " << to_string(layout) << " chosen for a " << c.spatial() << "-D convolution";
  TESSEL_ICHECK(layout.form != ConvForm::kFlatPointwise || c.pointwise())
      << "conv layout " << to_string(layout) << " chosen for a convolution that is not pointwise";
  TESSEL_ICHECK(layout.form != ConvForm::kChannelsLast ||
                (c.weight_channels_last && (c.group == 1 || (c.in_per_group > 1 && c.out_per_group > 1))))
      << "conv layout " << to_string(layout)
      << " chosen for a convolution with one channel per group or without a packed weight";
  return layout;
}

}  // namespace tessel::lower
