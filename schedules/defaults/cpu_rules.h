// The default CPU schedule's rules and the helpers they share, for the files
// of schedules/defaults/: cpu_defaults.cpp (the entry point, the tiled rule),
// cpu_elementwise.cpp, cpu_per_channel.cpp. Not an API.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "schedules/defaults/attempt.h"
#include "schedules/defaults/block_kind.h"
#include "schedules/defaults/cpu_defaults.h"
#include "schedules/defaults/cpu_knobs.h"
#include "schedules/schedule_error.h"

namespace tessel::sched::cpu_rules {

struct Context {
  Schedule& sch;
  const CpuScheduleOptions& options;
};

// The value of knob `key` (cpu_knobs.h): the tuner's when it decides, else `default_value`.
int64_t choose(Context& ctx, Schedule& sch, const std::string& key, std::vector<int64_t> candidates,
               int64_t default_value);

// Vector lanes for the block's element type: vector_lanes f32 lanes fill one register.
int64_t lanes_for(const BlockInfo& info, const CpuScheduleOptions& options);
// The inner, vectorized part of a loop of `extent`.
int64_t vector_factor(int64_t extent, int64_t lanes);
int64_t extent_of(const Schedule& sch, LoopRV loop);
// The vector part of a contraction's register tile of `rows` x `columns`:
// matmul_tile_columns, else vector_factor.
int64_t contraction_tile_columns(int64_t rows, int64_t columns, int64_t lanes);
// The target's vector registers: 32 with AVX-512, 16 with AVX2.
int64_t vector_registers(const CpuScheduleOptions& options);
// The columns of a matrix-vector product's tile (one row), on `threads` cores.
constexpr int64_t kMatrixVectorColumns = 4096;
int64_t matrix_vector_columns(int64_t columns, int64_t lanes, int threads);
// The vector part of a block's register tile.
int64_t tile_vector_factor(const BlockInfo& info, int64_t lanes, int threads);
// The width P of the panels a block reads along its vector loop (a constant
// packed as W[j // P, ..., j % P]), or 0 when it reads none. A tile whose
// vector part does not divide P reads across panels by division: gathers.
int64_t read_panel_width(const Schedule& sch, const BlockInfo& info);

// A register tile: `vec` columns vectorized, `unroll` rows unrolled; with
// local_tile accumulated in a local buffer; a matmul's column tiles outside
// its row tiles or not (unset: columns_first_by_default); the innermost
// reduction loop unrolled or not; the first reduction loop innermost or not.
struct TileShape {
  int64_t vec = 1, unroll = 1;
  bool local_tile = false;
  std::optional<bool> columns_first;
  // The row tiles walked inside the outer loops between them and the column
  // tiles (a direct conv's output-channel tiles inside its output rows).
  bool row_tiles_inside = false;
  bool unroll_reduction = false;
  bool first_reduction_innermost = false;  // [ic, kh, kw] -> [kh, kw, ic]
  // The reduction loops inside the vectorized loop, unrolled: a window's taps
  // as one vector body per output vector (pools: no accumulator reloaded per tap).
  bool taps_inside = false;
  // > 0: the reduction's first loop blocked, its outer part above the
  // innermost outer loop, its blocks of this many iterations inside it (a
  // GEMM's K blocked for cache); the tile then accumulates in the output.
  int64_t reduction_block = 0;
  // > 0: the target's lanes, and a tile vector loop shorter than two vectors
  // that is not whole vectors runs as masked vectors (tir::kMaskedTail).
  // Masked accesses keep an accumulator in memory: for tiles whose
  // accumulator lives within one vector iteration (taps_inside, which have
  // neither a local copy nor an init loop of their own).
  int64_t mask_short_rows = 0;
};
// loop vectorized; with lanes > 0, masked (tir::kMaskedTail) when it is
// shorter than two vectors and not whole vectors.
void vectorize_masking_short(Schedule& sch, LoopRV loop, int64_t lanes);
// A reduction in register-tile form: the spatial loops split at the vector and
// unroll loops, ordered [outer spatial..., reduction..., unrolled, vectorized],
// the init hoisted above the reduction. Returns the outer spatial loops under
// which the result is complete (with a reduction block, all but the innermost).
std::vector<LoopRV> tile_reduction(Schedule& sch, const BlockInfo& info, const TileShape& shape);
// A tiled contraction's largest parameter read one slice at a time (a weight
// panel) prefetched a slice ahead over its first reduction loop and the
// loops above it inside the panel loop, where the weight is too large to stay
// in L2 (the `.prefetch` knob decides where the tuner does).
void prefetch_next_panel(Context& ctx, const BlockInfo& info);
// Whether a matmul walks its column tiles outside its row tiles by default:
// a wide weight, or a B panel worth packing at run time.
bool columns_first_by_default(const Schedule& sch, const BlockInfo& info, int64_t vec, int64_t unroll);
// A direct conv (not channels-last) with an outer loop of extent > 1 between
// its row tiles (output channels) and its column tiles.
bool row_tiles_can_go_inside(const BlockInfo& info);
// Whether a direct conv walks its output-channel tiles inside its output rows
// by default: where its input does not stay in L2 and its weight does, each
// input row is then read from memory once and serves every channel tile from
// cache, instead of the whole input streaming through once per channel tile
// (the weight is walked once per row instead, from L2).
bool row_tiles_inside_by_default(const Schedule& sch, const BlockInfo& info, int64_t l2_bytes);
// A block's serial time as the default schedule estimates it, in core
// cycles (at least 1): its arithmetic `lanes` operations at a time or its
// bytes at what one core streams from its L2, whichever takes longer.
int64_t serial_cycles(const BlockInfo& info, int64_t lanes);
// One parallel loop over (a prefix of) the outer loops of `info`'s block, when
// its serial_cycles reach options.min_parallel_cycles; near that threshold
// the knob "<block>.parallel" lets the tuner measure both, and
// "<block>.chunks" sets the chunks per thread.
void parallelize(Context& ctx, std::vector<LoopRV> outer, const BlockInfo& info);
// parallelize in two steps: how many outer loops (a prefix; 0: none) its parallel loop fuses, then the
// fusing.
size_t parallel_prefix(Context& ctx, const std::vector<LoopRV>& outer, const BlockInfo& info);
void parallelize_prefix(Context& ctx, std::vector<LoopRV> outer, size_t loops);
// The elementwise blocks after blocks[anchor] that consume its result, each
// moved under the first loop of `outward` (innermost first) that takes it.
void attach_epilogues(Context& ctx, const std::vector<BlockInfo>& blocks, size_t anchor,
                      const std::vector<LoopRV>& outward, std::set<std::string>& done);
// Whether some block reading blocks[index]'s result cannot join the tile
// loop of `shape` (then the tile accumulates in a local buffer).
bool epilogue_stays_outside(const Schedule& sch, const std::vector<BlockInfo>& blocks, size_t index,
                            const TileShape& shape);

// The loop among `loops` (the last: the vector loop) whose iterations are the
// phases of a strided read along the vector loop in block `name`, or -1.
int phase_loop(const Schedule& sch, const std::string& name, const std::vector<LoopRV>& loops);
// The last of `loops` vectorized; the phase loop (when >= 0) moved inside it, unrolled.
void vectorize_with_phases(Schedule& sch, const std::vector<LoopRV>& loops, int phase);

void schedule_elementwise(Context& ctx, const BlockInfo& info);

// A reduction along the rows it reads in order (its reduction loops
// innermost, read in order in the loads' last indices) as partial sums per
// lane, vectorized, then the lanes per row; false when that does not apply
// (the schedule is then unchanged).
bool schedule_row_reduction(Context& ctx, const BlockInfo& info);

// The elementwise stages only blocks[anchor] reads, directly or through one
// another (a windowed block's padding and stride phases); consumers first.
std::vector<std::string> private_stages(Schedule& sch, const std::vector<BlockInfo>& blocks, size_t anchor);
// A stage computed inside a block's channel loop (the first plane_depth of
// its loops): its innermost loop vectorized, with the phase loop of a
// strided read unrolled inside it.
void schedule_private_stage(Schedule& sch, const std::string& name, size_t plane_depth);
// A windowed block reading one input channel per output channel (depthwise
// conv, pool) with its private stages computed inside its parallel channel
// loop; false when that does not apply (the schedule is then unchanged).
bool schedule_per_channel(Context& ctx, const std::vector<BlockInfo>& blocks, size_t index,
                          const std::vector<std::string>& stages, std::set<std::string>& done);

}  // namespace tessel::sched::cpu_rules
