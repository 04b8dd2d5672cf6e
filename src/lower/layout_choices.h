// Layout decisions the compute definitions take as input instead of fixing
// them: the form a 2-D convolution is computed in (over its output rows, one
// flat row per output channel over the re-laid-out input plane, or over its
// output positions with the output channels innermost) and how far a flat
// plane (or the positions) is padded. Good choices depend on the target (its vector
// width and register tiles), so the schedule makes them
// (sched::default_cpu_layouts), a tuner can search them, and a target that
// makes none (a GPU) gets the direct form of every op.
//
//   conv 64 -> 64, 3x3, 56x56 output  --(CPU defaults)-->  {flat, align 48}
//   conv 32 -> 32, depthwise 3x3      --(CPU defaults)-->  {direct}
//   conv 512 -> 512, 3x3, 7x7 output, packed weight  --(CPU defaults)-->  {channels-last}
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessel::lower {

// What a convolution's layout decision looks at: output [N, M, spatial...],
// its window and its groups (plain numbers: no graph types).
struct ConvShape {
  std::vector<int64_t> out;
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end;
  int64_t group = 1;
  int64_t in_per_group = 1, out_per_group = 1;  // input and output channels of one group
  // The weight is read from a copy laid out [C, k..., M] (pack_conv_weights):
  // a vector along the output channels reads it in order.
  bool weight_channels_last = false;
  // Its input or output is an activation stored channels-last between
  // kernels (graph::Value::storage, passes::channels_last): computed over
  // its output positions with the channels in the vector lanes, it reads and
  // writes them in order.
  bool input_channels_last = false, output_channels_last = false;
  bool reads_or_writes_channels_last() const { return input_channels_last || output_channels_last; }

  int spatial() const { return int(kernel.size()); }
  bool depthwise() const { return group > 1 && in_per_group == 1; }
  // The channels-last form applies: one group, groups of several channels in
  // and out, or one channel per group read from a channels-last input (a
  // vector of channels then reads a vector of input channels in order).
  bool channels_last_applies() const {
    return spatial() == 2 && (group == 1 || (in_per_group > 1 && out_per_group > 1) ||
                              (depthwise() && out_per_group == 1 && input_channels_last));
  }
  // 1x1 taps, no padding, one group: a matmul over the flat plane, of the
  // input as it is at stride 1 (plain), of its subsampled plane otherwise.
  bool pointwise() const {
    if (spatial() != 2 || group != 1) return false;
    for (size_t u = 0; u < 2; ++u)
      if (kernel[u] != 1 || pad_begin[u] != 0 || pad_end[u] != 0) return false;
    return true;
  }
  bool plain_pointwise() const { return pointwise() && strides[0] == 1 && strides[1] == 1; }
};

enum class ConvForm {
  kDirect,         // a block over the output's rows
  kFlat,           // one flat row per output channel over the re-laid-out plane (2-D only)
  kFlatPointwise,  // a matmul over the input's flat plane, subsampled at a stride (pointwise convs only)
  kChannelsLast,   // [N, positions, M]: output channels in the vector lanes (2-D, packed weight;
                   // a grouped conv's groups each of several channels: [N, group, positions, M / group];
                   // a depthwise conv over a channels-last input: [N, positions, M], one tap a term)
};

// The narrowest register tile of a flat form, in columns (two AVX2 vectors,
// one AVX-512 vector): flat rows are padded to multiples of it.
constexpr int64_t kNarrowestFlatTile = 16;

struct ConvLayout {
  ConvForm form = ConvForm::kDirect;
  int64_t flat_align =
      1;  // a flat row's extent (channels-last: the positions) is padded to a multiple of this

  bool operator==(const ConvLayout&) const = default;
};

std::string to_string(const ConvLayout& layout);  // "direct", "flat align 48", "flat-pointwise align 16",
                                                  // "channels-last align 8"

// What a tuned layout decision is known by: the conv's output, window and
// groups, without whether its weight is packed yet ("conv 1x64x56x56 k3x3
// s1x1 d1x1 p1,1,1,1 g1 c64"), so the same conv in another model gets it.
std::string conv_key(const ConvShape& c);

// A layout as a log stores it: its form ("direct", "flat", "flat-pointwise",
// "channels-last") and alignment; nullopt for a form name it does not know.
std::string conv_form_name(ConvForm form);
std::optional<ConvForm> conv_form_named(const std::string& name);

// The choices for one lowering; an empty function chooses the direct form.
struct LayoutChoices {
  std::function<ConvLayout(const ConvShape&)> conv;
  // The target's f32 vector lanes (0: not known). A strided window with
  // padding whose output rows are longer than a vector copies its input into
  // stride phases in one stage, the padding read as guards that
  // partition_vector_loops splits off (window_input).
  int64_t vector_lanes = 0;

  // The choice for c, checked: a flat form is for 2-D convs only, the
  // pointwise one for pointwise convs, channels-last for a packed weight where
  // ConvShape::channels_last_applies, and an alignment is >= 1
  // (an internal error otherwise: the chooser is the compiler's).
  ConvLayout conv_layout(const ConvShape& c) const;
};

}  // namespace tessel::lower
