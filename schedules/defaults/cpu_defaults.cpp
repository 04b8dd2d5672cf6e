// The default CPU schedule: the entry point, the helpers its rules share
// (cpu_rules.h), and the tiled rule (register tiles for matmuls, convolutions
// and reductions). Elementwise blocks: cpu_elementwise.cpp; where epilogues
// go: cpu_epilogues.cpp; windowed blocks computed per channel with their
// private stages: cpu_per_channel.cpp; reductions along rows: cpu_row_reduction.cpp.
#include "schedules/defaults/cpu_defaults.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/tensor/functor.h"
#include "schedules/defaults/block_kind.h"
#include "schedules/defaults/cpu_rules.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

namespace cpu_rules {

int64_t lanes_for(const BlockInfo& info, const CpuScheduleOptions& options) {
  int64_t size = int64_t(dtype_size(info.output->dtype));
  return std::max<int64_t>(1, options.vector_lanes * 4 / std::max<int64_t>(size, 1));
}

// The inner, vectorized part of a loop of `extent`. LLVM's vectorizer gives a
// vectorized loop its tail, but a split must be exact (a predicate in the
// loop would keep it from being vectorized). So: the lanes when they divide
// the extent; the whole loop when it is short (28, 13: vector iterations and
// a tail); a divisor of up to four vectors; a divisor of at least half a
// vector; the whole loop.
int64_t vector_factor(int64_t extent, int64_t lanes) {
  if (extent % lanes == 0) return lanes;
  if (extent <= 4 * lanes) return extent;
  for (int64_t d = 4 * lanes; d > lanes; --d)
    if (extent % d == 0) return d;
  for (int64_t d = lanes - 1; d >= lanes / 2 && d > 1; --d)
    if (extent % d == 0) return d;
  return extent;  // 111 = 3 x 37: one loop of 111 (13 vectors and a tail) beats 37 loops of 3
}

int64_t choose(Context& ctx, Schedule& sch, const std::string& key, std::vector<int64_t> candidates,
               int64_t default_value) {
  if (!ctx.options.knobs) return default_value;
  return ctx.options.knobs->choose(sch, key, std::move(candidates), default_value);
}

int64_t extent_of(const Schedule& sch, LoopRV loop) {
  const auto* imm = sch.loop(loop).extent.as<tir::IntImmNode>();
  return imm ? imm->value : 0;
}

// One parallel loop over the outer loops (outermost first): the fewest
// outermost ones, not the innermost (the tile loop epilogues sit in), with
// kChunksPerThread iterations per thread, or all but the innermost when
// those are not that many but fill the threads; else all of them fused.
// Fusing no more than needed keeps each tile's indices linear in the
// parallel loop, so that its accumulator compacts to the tile (a fused
// (channel tile, row) loop indexes by // and %, and the accumulator stayed
// the whole output: a 4.8 MB store stream for a 16-channel 1x1 conv).
constexpr int64_t kChunksPerThread = 4;

constexpr int64_t kL2BytesPerCycle = 32;

int64_t serial_cycles(const BlockInfo& info, int64_t lanes) {
  int64_t arithmetic = info.iterations * info.ops_per_iter / std::max<int64_t>(lanes, 1);
  return std::max<int64_t>({arithmetic, info.bytes / kL2BytesPerCycle, 1});
}

namespace {

// Within this factor of the threshold the estimate may be wrong either way,
// so the tuner gets to measure the block serial and parallel.
constexpr int64_t kParallelDoubt = 4;

bool worth_parallel(Context& ctx, const BlockInfo& info) {
  int64_t cycles = serial_cycles(info, ctx.options.vector_lanes), least = ctx.options.min_parallel_cycles;
  bool parallel = cycles >= least;
  if (ctx.options.num_threads > 1 && cycles * kParallelDoubt >= least && cycles < least * kParallelDoubt)
    parallel = choose(ctx, ctx.sch, info.name + ".parallel", {0, 1}, parallel ? 1 : 0) != 0;
  return parallel;
}

}  // namespace

size_t parallel_prefix(Context& ctx, const std::vector<LoopRV>& outer, const BlockInfo& info) {
  if (outer.empty() || !worth_parallel(ctx, info)) return 0;
  const std::string& block = info.name;
  int64_t threads = ctx.options.num_threads, all = 1, above_tile = 1;
  int64_t chunks = kChunksPerThread;
  if (threads > 1 && outer.size() > 1)
    chunks = choose(ctx, ctx.sch, block + ".chunks", {1, 2, 4, 8, 16}, kChunksPerThread);
  size_t enough = 0;  // loops in the shortest prefix with `chunks` chunks per thread
  for (size_t i = 0; i < outer.size(); ++i) {
    all *= extent_of(ctx.sch, outer[i]);
    if (i + 1 < outer.size()) {
      above_tile *= extent_of(ctx.sch, outer[i]);
      if (!enough && above_tile >= chunks * threads) enough = i + 1;
    }
  }
  if (all < threads) return 0;
  if (enough) return enough;
  if (outer.size() > 1 && above_tile >= threads) return outer.size() - 1;
  return outer.size();
}

void parallelize_prefix(Context& ctx, std::vector<LoopRV> outer, size_t loops) {
  if (loops == 0) return;
  outer.resize(loops);
  attempt(ctx.sch, [&](Schedule& s) { s.parallel(outer.size() == 1 ? outer[0] : s.fuse(outer)); });
}

void parallelize(Context& ctx, std::vector<LoopRV> outer, const BlockInfo& info) {
  parallelize_prefix(ctx, outer, parallel_prefix(ctx, outer, info));
}

int64_t vector_registers(const CpuScheduleOptions& options) {
  return options.vector_lanes >= 16 ? 32 : 16;  // AVX-512 has 32, AVX2 16
}

int64_t contraction_tile_columns(int64_t rows, int64_t columns, int64_t lanes) {
  if (int64_t tile = matmul_tile_columns(rows, columns, lanes)) return tile;
  return vector_factor(columns, lanes);
}

// A matrix-vector product (one row: a classifier's Linear at batch 1) reads
// each weight once, so it runs at memory speed when the weight streams in
// order: its tile is every column (up to kMatrixVectorColumns, in L1), and the
// tile walks the weight's rows from first to last. In tiles of a few vectors,
// each tile read a short run of every row, a row apart, at half the memory's
// speed. On several threads, the tile is the widest divisor of the columns
// that gives each thread a tile (each streams its part of every row): one
// core alone does not reach the bandwidth the cores reach together.
int64_t matrix_vector_columns(int64_t columns, int64_t lanes, int threads) {
  int64_t widest = std::min(kMatrixVectorColumns, columns / std::max(threads, 1));
  if (widest >= lanes && columns % widest == 0) return widest;
  for (int64_t d = widest; d >= widest / 4 && d >= lanes; --d)
    if (columns % d == 0) return d;
  if (columns <= kMatrixVectorColumns) return columns;
  return vector_factor(columns, lanes);
}

// A matmul's as matmul_panel_columns (the width its packed weight's panels
// were given), a convolution's (output channels x flat positions) as
// contraction_tile_columns, else as vector_factor.
int64_t tile_vector_factor(const BlockInfo& info, int64_t lanes, int threads) {
  int64_t extent = info.extents[info.vector_loop];
  if (info.kind == BlockKind::kMatmul) {
    int64_t rows = info.unroll_loop < 0 ? 1 : info.extents[size_t(info.unroll_loop)];
    if (int64_t columns = matmul_panel_columns(rows, extent, lanes, threads)) return columns;
    return vector_factor(extent, lanes);
  }
  // A depthwise conv computed channels-last loads its input as vectors, not
  // one broadcast per row: two vectors of channels, the rows taking the rest.
  if (info.input_per_channel && extent % (2 * lanes) == 0) return 2 * lanes;
  if (info.kind == BlockKind::kConv && info.unroll_loop >= 0)
    return contraction_tile_columns(info.extents[info.unroll_loop], extent, lanes);
  return vector_factor(extent, lanes);
}

}  // namespace cpu_rules

namespace {

using namespace cpu_rules;

// The unrolled rows of a register tile, so that rows x vector parts of
// accumulators keep a core with four FMAs in flight busy and fit the 16
// vector registers with room for the operands: 4 rows of three vectors, 6
// rows of two, 8 rows of one, fewer when the vector part ends in a tail (a
// 14-wide part is a vector and a half-vector tail; measured on the ResNet-18
// convolutions, one thread: 28 wide is best at 2 rows, 14 and 7 at 4). A
// core that overlaps more FMAs (two 512-bit FMA pipes) needs proportionally
// more independent accumulators, where its 32 registers hold them.
int64_t tile_rows(int64_t extent, int64_t vec, int64_t lanes, const CpuScheduleOptions& options) {
  int64_t most = vec == 3 * lanes ? 4 : vec == 2 * lanes ? 6 : vec % lanes == 0 ? 8 : vec <= 2 * lanes ? 4 : 2;
  int64_t vectors = (vec + lanes - 1) / lanes;
  // With 16 registers (AVX2) the four-FMA tiles already take all but the
  // operands' (and a wider 1-vector tile measured slower): only 32 scale.
  int64_t scale = vector_registers(options) >= 32 ? std::max(1, options.fmas_in_flight / 4) : 1;
  most = std::max(most, std::min({most * scale, (vector_registers(options) - 4) / vectors, int64_t(16)}));
  std::vector<int64_t> preferred;
  for (int64_t f : {16, 14, 12, 10, 8, 6, 4, 5, 7, 3, 2})
    if (f <= most) preferred.push_back(f);
  if (extent <= most) return extent;
  // A tile of one vector has one accumulator per row: the most rows that
  // divide the extent (7 of 196 rather than 4), or its FMAs wait on each
  // other's latency.
  if (vectors == 1) std::sort(preferred.rbegin(), preferred.rend());
  for (int64_t f : preferred)
    if (extent % f == 0) return f;
  return 1;
}

constexpr int64_t kShortReduction = 32;

// A channels-last conv's rows are output positions, whose count (49, 196)
// rarely divides by tile_rows' preferences: the most rows up to 8 that
// divide it with the accumulators in the vector registers, four left over.
// A depthwise one reads a vector of input per row and tap, and neighbouring
// rows share those of their overlapping taps, which LLVM keeps in registers
// too: its accumulators take half the registers (with more, they spilled).
int64_t position_rows(const BlockInfo& info, int64_t vec, int64_t lanes, const CpuScheduleOptions& options) {
  int64_t extent = info.extents[size_t(info.unroll_loop)];
  int64_t vectors = (vec + lanes - 1) / lanes, registers = vector_registers(options);
  int64_t accumulators = info.input_per_channel ? registers / 2 : registers - 4;
  for (int64_t r = 8; r > 1; --r)
    if (extent % r == 0 && r * vectors <= accumulators) return r;
  return 1;
}

// A reduction whose vector runs along its output (channels-last global
// pooling: a sum over the positions of each vector of channels) adds one
// input vector per step to each accumulator: a tile of one vector was a
// chain of dependent adds as long as the plane. The widest tile of up to
// four vectors that divides the output and leaves each thread a tile.
int64_t reduction_columns(int64_t extent, int64_t vec, int64_t lanes, int threads) {
  for (int64_t vectors = 4; vectors > 1; --vectors)
    if (extent % (vectors * lanes) == 0 && extent / (vectors * lanes) >= threads && vectors * lanes > vec)
      return vectors * lanes;
  return vec;
}

// The default's rows (tile_rows) with a short reduction's exception.
int64_t default_rows(const BlockInfo& info, int64_t vec, int64_t lanes, const CpuScheduleOptions& options) {
  if (info.channels_in_lanes)
    return position_rows(info, vec, lanes, options);
  // A conv whose whole reduction is a few taps of a window (an RGB stem:
  // 3 x 3 x 3) is unrolled whole by LLVM, and a tile of more than 4 x 2
  // vectors of it came out as scalar code: it keeps the four-FMA tile, and 4
  // rows for 6. A 1x1 conv over as few channels sums one loop, and the
  // four-FMA tile only held it back.
  int64_t reduction = 1, summed_loops = 0;
  for (int p : info.reduce) {
    reduction *= info.extents[size_t(p)];
    summed_loops += info.extents[size_t(p)] > 1;
  }
  bool short_conv = info.kind == BlockKind::kConv && summed_loops > 1 && reduction <= kShortReduction;
  CpuScheduleOptions tile_options = options;
  if (short_conv) tile_options.fmas_in_flight = std::min(options.fmas_in_flight, 4);
  int64_t rows = tile_rows(info.extents[size_t(info.unroll_loop)], vec, lanes, tile_options);
  if (short_conv && rows == 6 && info.extents[size_t(info.unroll_loop)] % 4 == 0) rows = 4;
  return rows;
}

// The rows a tuner may try: up to 16 dividing the extent, with the tile's
// accumulators in the vector registers and four left for the operands (AVX-512
// has 32 registers, AVX2 16).
std::vector<int64_t> row_candidates(int64_t extent, int64_t vec, int64_t lanes, const CpuScheduleOptions& options) {
  std::vector<int64_t> out;
  int64_t vectors = (vec + lanes - 1) / lanes;
  int64_t registers = vector_registers(options);
  for (int64_t r = 1; r <= std::min<int64_t>(16, extent); ++r)
    if (extent % r == 0 && r * vectors <= registers - 4) out.push_back(r);
  return out;
}

// The tile's shape: the default's, or the tuner's where it decides.
TileShape tile_shape(Context& ctx, const std::vector<BlockInfo>& blocks, size_t index) {
  const BlockInfo& info = blocks[index];
  const std::string& b = info.name;
  int64_t lanes = lanes_for(info, ctx.options);
  TileShape shape;
  if (info.vector_loop >= 0) {
    shape.vec = tile_vector_factor(info, lanes, ctx.options.num_threads);
    if (info.kind == BlockKind::kReduction)
      shape.vec = reduction_columns(info.extents[size_t(info.vector_loop)], shape.vec, lanes,
                                    ctx.options.num_threads);
    std::vector<int64_t> widths = vector_widths(info.extents[size_t(info.vector_loop)], lanes, 4, shape.vec);
    if (int64_t panel = read_panel_width(ctx.sch, info))
      std::erase_if(widths, [panel](int64_t w) { return panel % w != 0; });
    shape.vec = choose(ctx, ctx.sch, b + ".cols", widths, shape.vec);
  }
  if (info.unroll_loop >= 0) {
    int64_t extent = info.extents[size_t(info.unroll_loop)];
    shape.unroll = default_rows(info, shape.vec, lanes, ctx.options);
    shape.unroll = choose(ctx, ctx.sch, b + ".rows", row_candidates(extent, shape.vec, lanes, ctx.options), shape.unroll);
  }
  bool contraction = info.kind == BlockKind::kConv || info.kind == BlockKind::kMatmul;
  if (contraction) {
    shape.local_tile = epilogue_stays_outside(ctx.sch, blocks, index, shape);
    shape.local_tile = choose(ctx, ctx.sch, b + ".local", {0, 1}, shape.local_tile);
  }
  if (contraction && info.vector_loop >= 0 && info.unroll_loop >= 0) {
    bool first = columns_first_by_default(ctx.sch, info, shape.vec, shape.unroll);
    shape.columns_first = choose(ctx, ctx.sch, b + ".cols_first", {0, 1}, first);
  }
  if (row_tiles_can_go_inside(info) && !shape.columns_first.value_or(false))
    shape.row_tiles_inside = choose(ctx, ctx.sch, b + ".rows_inside", {0, 1},
                                    row_tiles_inside_by_default(ctx.sch, info, ctx.options.l2_bytes));
  if (contraction && info.reduce.size() > 1)
    shape.first_reduction_innermost = choose(ctx, ctx.sch, b + ".k_order", {0, 1}, 0);
  if (contraction && !shape.local_tile && !shape.first_reduction_innermost) {
    int64_t first = info.extents[size_t(info.reduce.front())];
    std::vector<int64_t> blocks;
    for (int64_t block : {32, 64, 128, 256})
      if (first % block == 0 && first > block) blocks.push_back(block);
    if (!blocks.empty()) shape.reduction_block = choose(ctx, ctx.sch, b + ".k_block", blocks, 0);
  }
  size_t innermost = shape.first_reduction_innermost ? 0 : info.reduce.size() - 1;
  int64_t inner = info.reduce.empty() ? 0 : info.extents[size_t(info.reduce[innermost])];
  if (contraction && inner > 1 && inner <= 16)
    shape.unroll_reduction = choose(ctx, ctx.sch, b + ".unroll_k", {0, 1}, 0);
  return shape;
}

// A depthwise conv computed channels-last reads only its channel tile's
// slice of its padded input: the copy making it (a private stage) is
// computed per channel tile, inside the tile's parallel loop, where the
// slice stays in cache for the tile's positions, instead of a pass of its
// own over the whole input. Not where the parallel loop would take the
// position tiles too (the copy would sit between the loops it fuses).
bool stages_per_channel_tile(Context& ctx, const BlockInfo& info, const TileShape& shape,
                             const std::vector<LoopRV>& outer, size_t parallel,
                             const std::vector<std::string>& stages) {
  if (stages.empty() || !info.input_per_channel || !shape.columns_first.value_or(false) || outer.size() < 2 ||
      parallel > outer.size() - 1)
    return false;
  LoopRV channel_tiles = outer[outer.size() - 2];
  bool ok = attempt(ctx.sch, [&](Schedule& s) {
    for (const std::string& stage : stages) s.compute_at(s.get_block(stage), channel_tiles);
  });
  if (!ok) return false;
  for (const std::string& stage : stages) schedule_private_stage(ctx.sch, stage, outer.size() - 1);
  return true;
}

void schedule_tiled(Context& ctx, const std::vector<BlockInfo>& blocks, size_t index,
                    std::set<std::string>& done, const std::vector<std::string>& stages = {}) {
  const BlockInfo& info = blocks[index];
  TileShape shape = tile_shape(ctx, blocks, index);
  auto schedule_stages_alone = [&] {
    for (const std::string& stage : stages)
      for (const BlockInfo& b : blocks)
        if (b.name == stage) schedule_elementwise(ctx, b);
  };
  std::vector<LoopRV> outer;
  auto tile = [&](const TileShape& sh) {
    return attempt(ctx.sch, [&](Schedule& s) { outer = tile_reduction(s, info, sh); });
  };
  TileShape shared = shape, scalar;
  shared.local_tile = false;
  bool tiled = (shape.local_tile && tile(shape)) || tile(shared) || tile(scalar);
  if (!tiled) return schedule_stages_alone();
  bool anchor = info.kind != BlockKind::kReduction;
  size_t parallel = parallel_prefix(ctx, outer, info);
  if (!stages_per_channel_tile(ctx, info, shape, outer, parallel, stages)) schedule_stages_alone();
  // An epilogue goes no further out than the parallel loop's last part: above
  // it, it would come between the loops the parallel loop fuses, and leave
  // the conv serial.
  std::vector<LoopRV> outward(outer.rbegin(), outer.rend() - long(parallel > 1 ? parallel - 1 : 0));
  if (anchor && !outward.empty()) attach_epilogues(ctx, blocks, index, outward, done);
  parallelize_prefix(ctx, outer, parallel);
  if (info.kind == BlockKind::kConv || info.kind == BlockKind::kMatmul) prefetch_next_panel(ctx, info);
}

}  // namespace

// Measured on a transformer's 128 x 768 x 3072 linear layers (one thread,
// panel-packed B): 4 x 24 runs ~15% faster than 4 x 16.
int64_t matmul_tile_columns(int64_t rows, int64_t columns, int64_t lanes) {
  // With AVX-512's 32 registers, the accumulators of 8 rows of three vectors
  // fit as well as 12 rows of two, and a step loads 3 + 8 operands for their
  // 24 FMAs instead of 2 + 12, on two load ports.
  if (lanes >= 16 && columns % (3 * lanes) == 0) return 3 * lanes;
  if (rows % 6 != 0 && rows % 4 == 0 && columns % (3 * lanes) == 0) return 3 * lanes;
  if (columns % (2 * lanes) == 0) return 2 * lanes;
  // Not one vector where three divide the columns: each reduction step of a
  // tile loads its vectors and broadcasts one operand per row, so a tile of
  // one vector loads once per FMA, as many loads as a core with two load
  // ports and two FMA pipes issues, and waits on them.
  if (columns % (3 * lanes) == 0) return 3 * lanes;
  return 0;
}

int64_t matmul_panel_columns(int64_t rows, int64_t columns, int64_t lanes, int threads) {
  return rows == 1 ? cpu_rules::matrix_vector_columns(columns, lanes, threads)
                   : matmul_tile_columns(rows, columns, lanes);
}

void apply_default_cpu_schedule(Schedule& sch, const CpuScheduleOptions& options) {
  using namespace cpu_rules;
  Context ctx{sch, options};
  std::vector<BlockInfo> blocks = classify_blocks(sch.func());
  std::set<std::string> done;  // epilogues already placed with their anchor
  std::map<size_t, std::vector<std::string>> private_to;  // windowed block -> its private stages
  for (size_t i = 0; i < blocks.size(); ++i) {
    bool per_channel_input = blocks[i].kind == BlockKind::kConv && blocks[i].input_per_channel;
    if (blocks[i].kind != BlockKind::kDepthwise && blocks[i].kind != BlockKind::kReduction &&
        !per_channel_input)
      continue;
    private_to[i] = private_stages(sch, blocks, i);
    done.insert(private_to[i].begin(), private_to[i].end());
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (done.count(blocks[i].name)) continue;
    // A matrix-vector product with its weight rows along the reduction (an
    // SE block's 1x1 convs over a 1x1 plane) is a dot product per output:
    // summed by lanes along those rows, not a gather per FMA across them.
    if (!blocks[i].vector_in_order && private_to[i].empty() && schedule_row_reduction(ctx, blocks[i])) continue;
    switch (blocks[i].kind) {
      case BlockKind::kDepthwise:
      case BlockKind::kReduction:
        if (schedule_per_channel(ctx, blocks, i, private_to[i], done)) break;
        if (private_to[i].empty() && blocks[i].kind == BlockKind::kReduction && schedule_row_reduction(ctx, blocks[i]))
          break;
        for (const std::string& stage : private_to[i])
          for (const BlockInfo& b : blocks)
            if (b.name == stage) schedule_elementwise(ctx, b);
        schedule_tiled(ctx, blocks, i, done);
        break;
      case BlockKind::kMatmul:
      case BlockKind::kConv: schedule_tiled(ctx, blocks, i, done, private_to[i]); break;
      case BlockKind::kElementwise: schedule_elementwise(ctx, blocks[i]); break;
      case BlockKind::kOther: break;
    }
  }
}

}  // namespace tessel::sched
