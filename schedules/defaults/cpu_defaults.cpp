// The default CPU schedule, one rule per block kind (see cpu_defaults.h).
#include "schedules/defaults/cpu_defaults.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "schedules/defaults/block_kind.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

namespace {

struct Context {
  Schedule& sch;
  const CpuScheduleOptions& options;
};

// Vector lanes for the block's element type: vector_lanes f32 lanes fill one register.
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

int64_t extent_of(const Schedule& sch, LoopRV loop) {
  const auto* imm = sch.loop(loop).extent.as<tir::IntImmNode>();
  return imm ? imm->value : 0;
}

// Runs a rule on a copy of the schedule and keeps the copy only when every step was legal.
template <class Rule>
bool attempt(Schedule& sch, Rule&& rule) {
  Schedule trial = sch;
  try {
    rule(trial);
  } catch (const ScheduleError&) {
    return false;
  }
  sch = std::move(trial);
  return true;
}

// A reduction in register-tile form: the spatial loops split at the vector and
// unroll loops, ordered [outer spatial..., reduction..., unrolled, vectorized],
// the init hoisted above the reduction. Returns the outer spatial loops.
std::vector<LoopRV> tile_reduction(Schedule& sch, const BlockInfo& info, int64_t vec, int64_t unroll) {
  BlockRV block = sch.get_block(info.name);
  std::vector<LoopRV> loops = sch.get_loops(block);
  std::vector<LoopRV> outer, reduce, unrolled, vectorized;
  size_t row_tiles = SIZE_MAX, column_tiles = SIZE_MAX;  // positions in outer
  for (int p : info.spatial) {
    if (p == info.unroll_loop) row_tiles = outer.size();
    if (p == info.vector_loop) column_tiles = outer.size();
    int64_t f = p == info.vector_loop ? vec : p == info.unroll_loop ? unroll : 1;
    if (f <= 1) {
      outer.push_back(loops[p]);
      continue;
    }
    std::vector<LoopRV> parts = sch.split(loops[p], {info.extents[p] / f, f}, /*exact=*/true);
    outer.push_back(parts[0]);
    (p == info.vector_loop ? vectorized : unrolled).push_back(parts[1]);
  }
  for (int p : info.reduce) reduce.push_back(loops[p]);
  // A matmul with more columns than rows (a linear layer: few tokens, a wide
  // weight) walks the column tiles outside the row tiles: each column strip
  // of the weight then stays in cache for every row tile, instead of the
  // whole weight streaming through once per row tile.
  bool columns_first = info.kind == BlockKind::kMatmul && row_tiles < column_tiles &&
                       info.extents[info.vector_loop] > info.extents[info.unroll_loop];
  if (columns_first) std::swap(outer[row_tiles], outer[column_tiles]);
  if (!unrolled.empty() || !vectorized.empty() || columns_first) {
    std::vector<LoopRV> order = outer;
    for (const auto* part : {&reduce, &unrolled, &vectorized})
      order.insert(order.end(), part->begin(), part->end());
    sch.reorder(order);
  }
  BlockRV init = sch.decompose_reduction(block, reduce.front());
  for (LoopRV l : unrolled) sch.unroll(l);
  for (LoopRV l : vectorized) {
    sch.vectorize(l);
    sch.vectorize(sch.get_loops(init).back());  // the init's copy of the vector loop
  }
  return outer;
}

// One parallel loop over the outer loops (outermost first): all but the
// innermost, the tile loop epilogues sit in, when those are enough to fill
// the threads; else all of them fused.
void parallelize(Context& ctx, std::vector<LoopRV> outer, int64_t work) {
  if (outer.empty() || work < ctx.options.min_parallel_work) return;
  int64_t all = 1, above_tile = 1;
  for (size_t i = 0; i < outer.size(); ++i) {
    all *= extent_of(ctx.sch, outer[i]);
    if (i + 1 < outer.size()) above_tile *= extent_of(ctx.sch, outer[i]);
  }
  if (all < ctx.options.num_threads) return;
  if (outer.size() > 1 && above_tile >= ctx.options.num_threads) outer.pop_back();
  attempt(ctx.sch, [&](Schedule& s) { s.parallel(outer.size() == 1 ? outer[0] : s.fuse(outer)); });
}

// Vectorizes the innermost loop of the block when its extent is worth it.
void vectorize_innermost(Schedule& sch, const std::string& name) {
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block(name));
  if (!loops.empty() && extent_of(sch, loops.back()) > 1) sch.vectorize(loops.back());
}

bool reads_any(const tir::PrimFunc& func, const std::string& name,
               const std::set<const tir::BufferNode*>& bufs) {
  const auto* block = find_block(func, name).as<tir::BlockNode>();
  for (const tir::BufferRegion& r : block->reads)
    if (bufs.count(r.buffer.get())) return true;
  return false;
}

// Moves the elementwise blocks after the anchor that consume its result (or
// an attached epilogue's) under the anchor's tile loop, vectorized there.
void attach_epilogues(Context& ctx, const std::vector<BlockInfo>& blocks, size_t anchor, LoopRV tile_loop,
                      std::set<std::string>& done) {
  std::set<const tir::BufferNode*> hot{blocks[anchor].output.get()};
  for (size_t i = anchor + 1; i < blocks.size(); ++i) {
    const BlockInfo& epi = blocks[i];
    if (epi.kind != BlockKind::kElementwise || done.count(epi.name) ||
        !reads_any(ctx.sch.func(), epi.name, hot))
      continue;
    bool attached =
        attempt(ctx.sch, [&](Schedule& s) { s.reverse_compute_at(s.get_block(epi.name), tile_loop); });
    if (!attached) continue;
    attempt(ctx.sch, [&](Schedule& s) { vectorize_innermost(s, epi.name); });
    hot.insert(epi.output.get());
    done.insert(epi.name);
  }
}

// The vector part of a register tile: a matmul's as matmul_tile_columns,
// else as vector_factor.
int64_t tile_vector_factor(const BlockInfo& info, int64_t lanes) {
  int64_t extent = info.extents[info.vector_loop];
  if (info.kind == BlockKind::kMatmul && info.unroll_loop >= 0)
    if (int64_t columns = matmul_tile_columns(info.extents[info.unroll_loop], extent, lanes)) return columns;
  return vector_factor(extent, lanes);
}

// The unrolled rows of a register tile, so that rows x vector parts of
// accumulators fit the 16 vector registers with room for the operands:
// 4 rows of three vectors, 6 rows of two, 8 rows of one, fewer when the vector part ends in a
// tail (a 14-wide part is a vector and a half-vector tail; measured on the
// ResNet-18 convolutions, one thread: 28 wide is best at 2 rows, 14 and 7 at 4).
int64_t tile_rows(int64_t extent, int64_t vec, int64_t lanes) {
  int64_t most = vec == 3 * lanes ? 4 : vec == 2 * lanes ? 6 : vec % lanes == 0 ? 8 : vec <= 2 * lanes ? 4 : 2;
  std::vector<int64_t> preferred;
  for (int64_t f : {8, 6, 4, 5, 7, 3, 2})
    if (f <= most) preferred.push_back(f);
  if (extent <= most) return extent;
  for (int64_t f : preferred)
    if (extent % f == 0) return f;
  return 1;
}

void schedule_tiled(Context& ctx, const std::vector<BlockInfo>& blocks, size_t index,
                    std::set<std::string>& done) {
  const BlockInfo& info = blocks[index];
  int64_t lanes = lanes_for(info, ctx.options);
  int64_t vec = info.vector_loop < 0 ? 1 : tile_vector_factor(info, lanes);
  int64_t unroll = 1;
  if (info.unroll_loop >= 0) unroll = tile_rows(info.extents[info.unroll_loop], vec, lanes);
  std::vector<LoopRV> outer;
  bool tiled = attempt(ctx.sch, [&](Schedule& s) { outer = tile_reduction(s, info, vec, unroll); }) ||
               attempt(ctx.sch, [&](Schedule& s) { outer = tile_reduction(s, info, 1, 1); });
  if (!tiled) return;
  bool anchor = info.kind != BlockKind::kReduction;
  if (anchor && !outer.empty()) attach_epilogues(ctx, blocks, index, outer.back(), done);
  parallelize(ctx, outer, info.iterations * info.ops_per_iter);
}

// Rows of at least a vector: the outer loops fused into one parallel loop,
// the row vectorized whole (LLVM gives it its tail), so indices stay affine.
// Shorter rows: everything fused into one loop, split into (outer, vector),
// parallel outer, vectorized inner.
void schedule_elementwise(Context& ctx, const BlockInfo& info) {
  if (info.iterations <= 1) return;
  int64_t lanes = lanes_for(info, ctx.options);
  int64_t row = info.extents.back();
  if (row >= lanes && info.extents.size() > 1) {
    LoopRV outer;
    bool shaped = attempt(ctx.sch, [&](Schedule& s) {
      std::vector<LoopRV> loops = s.get_loops(s.get_block(info.name));
      s.vectorize(loops.back());
      loops.pop_back();
      outer = loops.size() > 1 ? s.fuse(loops) : loops[0];
    });
    if (shaped) parallelize(ctx, {outer}, info.iterations * info.ops_per_iter);
    return;
  }
  int64_t vec = vector_factor(info.iterations, lanes);
  LoopRV outer;
  bool shaped = attempt(ctx.sch, [&](Schedule& s) {
    std::vector<LoopRV> loops = s.get_loops(s.get_block(info.name));
    LoopRV all = loops.size() > 1 ? s.fuse(loops) : loops[0];
    outer = all;
    if (vec == info.iterations) {
      s.vectorize(all);
    } else if (vec > 1) {
      std::vector<LoopRV> parts = s.split(all, {info.iterations / vec, vec}, /*exact=*/true);
      s.vectorize(parts[1]);
      outer = parts[0];
    }
  });
  if (shaped && vec != info.iterations) parallelize(ctx, {outer}, info.iterations * info.ops_per_iter);
}

}  // namespace

// Measured on a transformer's 128 x 768 x 3072 linear layers (one thread,
// panel-packed B): 4 x 24 runs ~15% faster than 4 x 16.
int64_t matmul_tile_columns(int64_t rows, int64_t columns, int64_t lanes) {
  if (rows % 6 != 0 && rows % 4 == 0 && columns % (3 * lanes) == 0) return 3 * lanes;
  if (columns % (2 * lanes) == 0) return 2 * lanes;
  return 0;
}

void apply_default_cpu_schedule(Schedule& sch, const CpuScheduleOptions& options) {
  Context ctx{sch, options};
  std::vector<BlockInfo> blocks = classify_blocks(sch.func());
  std::set<std::string> done;  // epilogues already placed with their anchor
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (done.count(blocks[i].name)) continue;
    switch (blocks[i].kind) {
      case BlockKind::kMatmul:
      case BlockKind::kConv:
      case BlockKind::kDepthwise:
      case BlockKind::kReduction: schedule_tiled(ctx, blocks, i, done); break;
      case BlockKind::kElementwise: schedule_elementwise(ctx, blocks[i]); break;
      case BlockKind::kOther: break;
    }
  }
}

}  // namespace tessel::sched
