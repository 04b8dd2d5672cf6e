#include "schedules/defaults/cpu_layouts.h"

#include <algorithm>
#include <numeric>

namespace tessel::sched {

namespace {

// Output rows shorter than kFlatRowLimit, or not a multiple of
// kFlatRowMultiple, are ragged: a row of 14 or 55 outputs is vectors and a
// tail, a flat row is whole vectors (pointwise convs: see below). Ragged
// convs are computed flat; so are all 2-D convs that are neither 1x1 nor
// depthwise, whatever their rows: flat, the tile's vector part can be two or
// three vectors (4 x 24 or 6 x 16) instead of one vector of a row (8 x 8: a
// broadcast load per FMA).
// Depthwise convs keep their rows (flat, their per-channel stages were
// slower), and so do convs with fewer output channels than kFlatMinChannels
// (no room for the wide tile's rows, and the flat form costs a pass of its
// own for the epilogue).
constexpr int64_t kFlatRowLimit = 32;
constexpr int64_t kFlatMinChannels = 16;
constexpr int64_t kFlatRowMultiple = 8;
// A flat plane wider than kWidePlane pads to a multiple of kWideFlatAlign,
// where tiles of 16, 24 and 48 columns all end evenly.
constexpr int64_t kWideFlatAlign = 48;
constexpr int64_t kWidePlane = 512;

// Whole vectors, and whole tiles of at least 16 columns (the narrowest
// register tile: two AVX2 vectors, one AVX-512 vector).
int64_t flat_align(const CpuScheduleOptions& options) {
  return std::lcm<int64_t>(16, std::max(1, options.vector_lanes));
}

}  // namespace

lower::ConvLayout default_cpu_conv_layout(const lower::ConvShape& conv, const CpuScheduleOptions& options) {
  using lower::ConvForm;
  if (conv.spatial() != 2) return {};
  int64_t rows = conv.out[2], row = conv.out[3], align = flat_align(options);
  bool ragged = row < kFlatRowLimit || row % kFlatRowMultiple != 0;
  // Pointwise convs are a flat matmul (their input needs no copy) unless
  // their rows are whole vectors of this target: a row of 56 is 7 AVX2
  // vectors but 3.5 AVX-512 ones, and a tile of one row's vectors and a tail
  // by two output channels reuses each load twice.
  // A strided one reads a subsampled copy of its input either way, flat.
  bool whole_vectors = row >= kFlatRowLimit && row % std::max(1, options.vector_lanes) == 0;
  bool strided = !conv.plain_pointwise();
  if ((strided || !whole_vectors) && conv.pointwise() && rows * row >= align) return {ConvForm::kFlatPointwise, align};
  bool pointwise = conv.kernel[0] == 1 && conv.kernel[1] == 1;
  bool wide_tiles = !conv.depthwise() && conv.out_per_group >= kFlatMinChannels;
  if (pointwise || !(ragged || wide_tiles)) return {};
  return {ConvForm::kFlat, rows * row > kWidePlane ? std::lcm(kWideFlatAlign, align) : align};
}

lower::LayoutChoices default_cpu_layouts(const CpuScheduleOptions& options) {
  return {[options](const lower::ConvShape& conv) { return default_cpu_conv_layout(conv, options); }};
}

}  // namespace tessel::sched
