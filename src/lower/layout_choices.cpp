#include "src/lower/layout_choices.h"

#include "ir/core/diagnostics.h"

namespace tessel::lower {

namespace {

constexpr ConvForm kForms[] = {ConvForm::kDirect, ConvForm::kFlat, ConvForm::kFlatPointwise,
                               ConvForm::kChannelsLast};

std::string joined(const std::vector<int64_t>& v, const char* separator) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? separator : "") + std::to_string(v[i]);
  return out;
}

}  // namespace

std::string conv_form_name(ConvForm form) {
  switch (form) {
    case ConvForm::kDirect: return "direct";
    case ConvForm::kFlat: return "flat";
    case ConvForm::kFlatPointwise: return "flat-pointwise";
    case ConvForm::kChannelsLast: return "channels-last";
  }
  return "?";
}

std::optional<ConvForm> conv_form_named(const std::string& name) {
  for (ConvForm f : kForms)
    if (conv_form_name(f) == name) return f;
  return std::nullopt;
}

std::string to_string(const ConvLayout& layout) {
  if (layout.form == ConvForm::kDirect) return "direct";
  return conv_form_name(layout.form) + " align " + std::to_string(layout.flat_align);
}

std::string conv_key(const ConvShape& c) {
  std::vector<int64_t> pads = c.pad_begin;
  pads.insert(pads.end(), c.pad_end.begin(), c.pad_end.end());
  return "conv " + joined(c.out, "x") + " k" + joined(c.kernel, "x") + " s" + joined(c.strides, "x") + " d" +
         joined(c.dilations, "x") + " p" + joined(pads, ",") + " g" + std::to_string(c.group) + " c" +
         std::to_string(c.in_per_group * c.group) + (c.input_channels_last ? " in-nhwc" : "") +
         (c.output_channels_last ? " out-nhwc" : "");
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
                (c.weight_channels_last && c.channels_last_applies()))
      << "conv layout " << to_string(layout)
      << " chosen for a convolution with one channel per group over a plain input or without a packed weight";
  return layout;
}

}  // namespace tessel::lower
