#include "schedules/defaults/cpu_layouts.h"

#include <algorithm>
#include <numeric>

#include "schedules/defaults/cpu_rules.h"

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
// A conv whose flat plane would be less than this share outputs (a small
// plane: the taps' reach is a large part of each row) is computed
// channels-last, where every position computed is an output.
constexpr double kChannelsLastBelowShare = 0.95;
// A reduction of at least this many vectors' worth of terms per output is
// deep enough for the channels-last form on any plane whose result fits in
// L2 (default_cpu_conv_layout).
constexpr int64_t kChannelsLastDeepVectors = 32;

// A conv whose rows are at least kDirectRowVectors whole vectors of at
// least kDirectMinLanes lanes and whose reduction has fewer than
// kShallowReduction terms per output (a stem over an image's 3 channels: 27)
// is computed by rows, writing its output in place: flat, the plane is
// computed into a buffer of its own and copied out with the epilogue, and
// over so few terms those passes cost more than the wider tile saves (deeper
// reductions, 144 terms and more, ran faster flat). With 8 lanes the rows'
// tile of one vector does half the work per load, and the flat form stayed
// faster even at 27 terms.
constexpr int64_t kDirectRowVectors = 4;
constexpr int64_t kDirectMinLanes = 16;
constexpr int64_t kShallowReduction = 64;

// Whole vectors, and whole tiles of at least the narrowest tile's columns.
int64_t flat_align(const CpuScheduleOptions& options) {
  return std::lcm<int64_t>(lower::kNarrowestFlatTile, std::max(1, options.vector_lanes));
}

// A flat pointwise conv's register tile takes its columns from the plane:
// where whole vectors divide the plane but neither two nor three of them do
// (784 = 49 vectors of 16), its widest tile was one vector, a load for every
// FMA. The plane then splits at a multiple of three vectors (768 of 784), the
// few columns left over a matrix-vector tail.
int64_t flat_pointwise_align(int64_t plane, int64_t align, const CpuScheduleOptions& options) {
  int64_t lanes = std::max(1, options.vector_lanes), wide = std::lcm(align, 3 * lanes);
  if (plane % align != 0 || plane % (2 * lanes) == 0 || plane % (3 * lanes) == 0 || plane < wide)
    return align;
  return wide;
}

// The share of a flat plane's positions that are outputs: a row of OW
// outputs is OW + (the taps' reach) positions wide, the plane padded to a
// multiple of `align`.
double flat_useful_share(const lower::ConvShape& conv, int64_t align) {
  int64_t reach = (conv.kernel[1] - 1) * conv.dilations[1] / conv.strides[1];
  int64_t rows = conv.out[2], row = conv.out[3], flat = rows * (row + reach);
  flat = (flat + align - 1) / align * align;
  return double(rows * row) / double(flat);
}

// A channels-last conv's positions are its register tile's rows: padded to
// a multiple of the most rows a tile of two vectors holds beside its
// operands (8 with 32 vector registers, 6 with 16) unless that many or up
// to two fewer divide them (13 x 13: no row count between 2 and 8 divides
// 169, and a tile of one row is a chain of dependent FMAs; 7 x 7 with 16
// registers: 7 rows of two vectors do not fit). A tile of two vectors of
// output channels takes those rows only where its accumulators outnumber
// the FMAs a core overlaps: with no more (4 rows of 28 x 28 with 16
// registers), each FMA waits on its accumulator's previous one over a deep
// reduction, and a few positions of padding for the widest tile cost far
// less. Not where the conv reads or writes an activation stored
// channels-last: there it is a 1x1 conv over a short reduction (an
// inverted residual's), whose wider tile saved nothing and whose partial
// last tile cost time. A depthwise conv's tile holds fewer rows
// (position_rows): a plane padded for six would leave it three.
int64_t positions_align(const lower::ConvShape& conv, const CpuScheduleOptions& options) {
  int64_t positions = conv.out[2] * conv.out[3];
  int64_t most = std::min<int64_t>(8, (cpu_rules::vector_registers(options) - 4) / 2);
  int64_t lanes = std::max(1, options.vector_lanes);
  bool two_vector_tile =
      !conv.depthwise() && !conv.reads_or_writes_channels_last() && conv.out_per_group % (2 * lanes) == 0;
  for (int64_t rows = most; rows >= most - 2; --rows)
    if (positions % rows == 0 && (!two_vector_tile || 2 * rows > options.fmas_in_flight)) return 1;
  return most;
}

}  // namespace

lower::ConvLayout default_cpu_conv_layout(const lower::ConvShape& conv, const CpuScheduleOptions& options) {
  using lower::ConvForm;
  if (conv.spatial() != 2) return {};
  // An activation stored channels-last is read and written in order by the
  // channels-last form; any other form reads or writes it a plane apart per
  // channel.
  if (conv.reads_or_writes_channels_last() && conv.weight_channels_last && conv.channels_last_applies())
    return {ConvForm::kChannelsLast, positions_align(conv, options)};
  int64_t rows = conv.out[2], row = conv.out[3], align = flat_align(options);
  bool ragged = row < kFlatRowLimit || row % kFlatRowMultiple != 0;
  // Pointwise convs are a flat matmul (their input needs no copy) unless
  // their rows are whole vectors of this target: a row of 56 is 7 AVX2
  // vectors but 3.5 AVX-512 ones, and a tile of one row's vectors and a tail
  // by two output channels reuses each load twice.
  // A strided one reads a subsampled copy of its input either way, flat.
  int64_t lanes = std::max(1, options.vector_lanes);
  bool whole_vectors = row >= kFlatRowLimit && row % lanes == 0;
  bool strided = !conv.plain_pointwise();
  if ((strided || !whole_vectors) && conv.pointwise() && rows * row >= align)
    return {ConvForm::kFlatPointwise, flat_pointwise_align(rows * row, align, options)};
  bool pointwise = conv.kernel[0] == 1 && conv.kernel[1] == 1;
  bool wide_tiles = !conv.depthwise() && conv.out_per_group >= kFlatMinChannels;
  if (pointwise || !(ragged || wide_tiles)) return {};
  int64_t reduction = conv.in_per_group * conv.kernel[0] * conv.kernel[1];
  if (lanes >= kDirectMinLanes && whole_vectors && row >= kDirectRowVectors * lanes &&
      reduction < kShallowReduction)
    return {};
  int64_t flat_align = rows * row > kWidePlane ? std::lcm(kWideFlatAlign, align) : align;
  // A grouped conv's vectors are its group's channels (one vector can be all
  // of them: its tile's rows are many positions).
  bool groups_of_channels = conv.group == 1 || conv.in_per_group > 1;
  bool channel_vectors = groups_of_channels && conv.out_per_group % lanes == 0 &&
                         conv.out_per_group >= (conv.group == 1 ? 2 : 1) * lanes;
  if (conv.weight_channels_last && channel_vectors) {
    int64_t positions = rows * row, cl_align = positions_align(conv, options);
    double flat_share = flat_useful_share(conv, flat_align);
    double cl_share = double(positions) / double((positions + cl_align - 1) / cl_align * cl_align);
    // Flat, a strided conv reads a second copy of its input split into
    // stride phases; channels-last reads its padded input in place. A stem
    // over an image's few channels keeps the flat form: its copies are small
    // next to its reduction, and its tile of positions reads them best.
    bool strided = conv.strides[0] > 1 || conv.strides[1] > 1;
    bool deep_strided = strided && conv.in_per_group >= lanes;
    // A deep reduction whose channels-last result (f32 positions by output
    // channels) fits in a core's L2 is computed channels-last as well: its
    // tile broadcasts neighbouring input positions against a weight panel
    // read in order, and ran faster than the flat tile on 56 x 56 planes. Its
    // transposing epilogue is a pass of its own over the whole result, paid
    // back by a deep reduction only, and only while the result stays in
    // cache (from memory, and over shallow reductions, it lost).
    double result_bytes = double(conv.out[0]) * double(positions) * double(conv.out[1]) * 4;
    bool deep_in_l2 = reduction >= kChannelsLastDeepVectors * lanes &&
                      result_bytes <= double(options.l2_bytes) && cl_share >= flat_share;
    if ((flat_share < kChannelsLastBelowShare && cl_share > flat_share) || deep_strided || deep_in_l2)
      return {ConvForm::kChannelsLast, cl_align};
  }
  return {ConvForm::kFlat, flat_align};
}

std::vector<lower::ConvLayout> cpu_conv_layout_candidates(const lower::ConvShape& conv,
                                                          const CpuScheduleOptions& options) {
  using lower::ConvForm;
  lower::ConvShape packable = conv;
  packable.weight_channels_last = true;
  std::vector<lower::ConvLayout> out = {default_cpu_conv_layout(packable, options)};
  auto add = [&out](lower::ConvLayout layout) {
    if (std::find(out.begin(), out.end(), layout) == out.end()) out.push_back(layout);
  };
  if (conv.spatial() != 2) return out;
  int64_t rows = conv.out[2], row = conv.out[3], align = flat_align(options);
  int64_t lanes = std::max(1, options.vector_lanes);
  // Channels-last only where a group's output channels are whole vectors:
  // otherwise each tile ends in a partial vector. The flat pointwise form
  // needs one whole tile of the plane.
  if (conv.pointwise() && rows * row >= align) add({ConvForm::kFlatPointwise, align});
  add({ConvForm::kFlat, rows * row > kWidePlane ? std::lcm(kWideFlatAlign, align) : align});
  // Unpadded as well where the default pads the positions: a plane of one
  // position (a squeeze-excite block's) padded to 8 computes 8 times its
  // outputs, and 13 x 13 has a tile of 13 rows.
  if (conv.channels_last_applies() && (conv.out_per_group % lanes == 0 || conv.reads_or_writes_channels_last())) {
    add({ConvForm::kChannelsLast, positions_align(conv, options)});
    add({ConvForm::kChannelsLast, 1});
  }
  add({});
  return out;
}

int64_t channels_last_panel(const lower::ConvShape& conv, const lower::ConvLayout& layout,
                            const CpuScheduleOptions& options) {
  if (conv.depthwise()) return conv.out[1];  // one weight vector per tap, along all the channels
  int64_t align = std::max<int64_t>(1, layout.flat_align), lanes = std::max(1, options.vector_lanes);
  int64_t positions = (conv.out[2] * conv.out[3] + align - 1) / align * align;
  return cpu_rules::contraction_tile_columns(positions, conv.out_per_group, lanes);
}

lower::LayoutChoices default_cpu_layouts(const CpuScheduleOptions& options) {
  return {[options](const lower::ConvShape& conv) { return default_cpu_conv_layout(conv, options); },
          options.vector_lanes};
}

lower::LayoutChoices searched_cpu_layouts(const CpuScheduleOptions& options,
                                          std::map<std::string, lower::ConvLayout> decided, int alternative) {
  auto choose = [options, decided = std::move(decided), alternative](const lower::ConvShape& conv) {
    std::vector<lower::ConvLayout> candidates = cpu_conv_layout_candidates(conv, options);
    lower::ConvLayout chosen = candidates.front();
    auto it = decided.find(lower::conv_key(conv));
    if (it != decided.end() &&
        std::find(candidates.begin(), candidates.end(), it->second) != candidates.end())
      chosen = it->second;
    if (alternative > 0 && size_t(alternative) < candidates.size()) chosen = candidates[size_t(alternative)];
    if (chosen.form == lower::ConvForm::kChannelsLast && !conv.weight_channels_last)
      return default_cpu_conv_layout(conv, options);
    return chosen;
  };
  return {choose, options.vector_lanes};
}

}  // namespace tessel::sched
