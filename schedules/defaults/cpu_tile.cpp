// The default CPU schedule's register tile (tile_reduction, cpu_rules.h):
// a reduction's spatial loops split into a tile of unrolled rows and
// vectorized columns, the reduction between the tile and the outer loops, a
// B panel packed at run time or a local accumulator where they pay.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "schedules/defaults/cpu_rules.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/schedule_error.h"
#include "schedules/tree_query.h"

namespace tessel::sched::cpu_rules {

namespace {

// The read (an index into the block's reads) of a matmul's column operand
// worth packing at run time, or -1: B read as a plain row-major matrix with
// rows wider than the tile (a constant B comes packed by pack_matmul_weights;
// its rows are the tile's width), and enough row tiles (kMinPanelReuse) to
// reuse each panel.
constexpr int64_t kMinPanelReuse = 4;

int panel_read(const Schedule& sch, const BlockInfo& info, int64_t vec, int64_t unroll) {
  if (info.kind != BlockKind::kMatmul || info.vector_loop < 0 || info.unroll_loop < 0 || vec <= 1) return -1;
  if (info.extents[info.unroll_loop] / std::max<int64_t>(unroll, 1) < kMinPanelReuse) return -1;
  tir::Stmt block_stmt = find_block(sch.func(), info.name);
  const auto* block = block_stmt.as<tir::BlockNode>();
  const tir::VarNode* column = block->iter_vars[size_t(info.vector_loop)].var.get();
  const tir::VarNode* k = block->iter_vars[size_t(info.reduce.back())].var.get();
  for (size_t r = 0; r < block->reads.size(); ++r) {
    const tir::BufferRegion& read = block->reads[r];
    const tir::Buffer& b = read.buffer;
    if (b.same_as(info.output) || b->rank() < 2 || b->shape.back() <= vec) continue;
    // B[..., k, n] exactly: a strip of a plain matrix (a flat plane read as
    // [c, j // W, j % W] would copy whole rows per tile and read them back by
    // division).
    bool column_last = read.region.back().min.get() == column, k_inside = false;
    for (size_t d = 0; d + 1 < read.region.size(); ++d) k_inside = k_inside || read.region[d].min.get() == k;
    if (column_last && k_inside) return int(r);
  }
  return -1;
}

// The inner part of a split reduction (r % c, below) is unrolled for c up to
// this: a channel shuffle's interleaved groups, read as (r % c) * (C / c) +
// r // c from an inlined Concat, choose their input by r % c; unrolled, each
// copy reads one input (LLVM folds the choice) instead of a select between
// two loads at every step of the reduction.
constexpr int64_t kUnrolledSplit = 8;

// A divisor c of a reduction variable's extent when an operand reads it as
// (r // c, r % c) (an attention's heads and their columns read back as one
// row of the next linear layer), else 0: the reduction then runs as those two
// loops, and each row's address steps by a constant instead of being
// recomputed from a division per row and step.
int64_t reduction_split_factor(const tir::BlockNode& block, const tir::VarNode* r, int64_t extent) {
  int64_t factor = 0;
  tir::walk_exprs(block.body, [&](const tir::Expr& e) {
    if (e->kind != tir::ExprKind::kFloorDiv && e->kind != tir::ExprKind::kFloorMod) return;
    const int64_t* c = tir::as_const_int(tir::binary_b(*e));
    if (tir::binary_a(*e).get() == r && c && *c > 1 && *c < extent && extent % *c == 0) factor = *c;
  });
  return factor;
}

}  // namespace

int64_t read_panel_width(const Schedule& sch, const BlockInfo& info) {
  if (info.vector_loop < 0) return 0;
  tir::Stmt block_stmt = find_block(sch.func(), info.name);
  const auto* block = block_stmt.as<tir::BlockNode>();
  const tir::VarNode* column = block->iter_vars[size_t(info.vector_loop)].var.get();
  for (const tir::BufferRegion& read : block->reads)
    for (const tir::Range& r : read.region) {
      const auto* mod = r.min.as<tir::FloorModNode>();
      const int64_t* width = mod ? tir::as_const_int(mod->b) : nullptr;
      if (width && mod->a.get() == column) return *width;
    }
  return 0;
}

bool columns_first_by_default(const Schedule& sch, const BlockInfo& info, int64_t vec, int64_t unroll) {
  bool weight_columns = info.kind == BlockKind::kMatmul || info.channels_in_lanes;
  if (!weight_columns || info.vector_loop < 0 || info.unroll_loop < 0) return false;
  // A depthwise conv computed channels-last walks its channel tiles outside:
  // its padded input's copy is then made per channel tile, its slice
  // staying in cache for the tile's positions (stages_per_channel_tile).
  if (info.input_per_channel) return true;
  // A matmul with more columns than rows (a linear layer: few tokens, a wide
  // weight; a channels-last conv on a small plane) walks the column tiles
  // outside the row tiles: each column strip of the weight then stays in
  // cache for every row tile, instead of the whole weight streaming through
  // once per row tile.
  // A B panel packed at run time is reused by every row tile: columns first too.
  return panel_read(sch, info, vec, unroll) >= 0 ||
         info.extents[size_t(info.vector_loop)] > info.extents[size_t(info.unroll_loop)];
}

bool row_tiles_can_go_inside(const BlockInfo& info) {
  if (info.kind != BlockKind::kConv || info.channels_in_lanes || info.vector_loop < 0 || info.unroll_loop < 0)
    return false;
  auto at = [&info](int loop) { return std::find(info.spatial.begin(), info.spatial.end(), loop); };
  auto rows = at(info.unroll_loop), columns = at(info.vector_loop);
  if (rows == info.spatial.end() || columns == info.spatial.end() || rows > columns) return false;
  return std::any_of(rows + 1, columns, [&info](int p) { return info.extents[size_t(p)] > 1; });
}

bool row_tiles_inside_by_default(const Schedule& sch, const BlockInfo& info, int64_t l2_bytes) {
  if (!row_tiles_can_go_inside(info)) return false;
  tir::Stmt block_stmt = find_block(sch.func(), info.name);
  const auto* block = block_stmt.as<tir::BlockNode>();
  const tir::VarNode* rows = block->iter_vars[size_t(info.unroll_loop)].var.get();
  int64_t streamed = 0, reused = 0;  // bytes of what the rows do not index, and of what they do
  for (const tir::BufferRegion& read : block->reads) {
    if (lists_buffer(block->writes, read.buffer)) continue;
    int64_t bytes = read.buffer->num_elements() * int64_t(dtype_size(read.buffer->dtype));
    bool by_row = std::any_of(read.region.begin(), read.region.end(),
                              [rows](const tir::Range& r) { return tir::uses_var(r.min, rows); });
    (by_row ? reused : streamed) += bytes;
  }
  return 2 * streamed > l2_bytes && 4 * reused <= l2_bytes;
}

void vectorize_masking_short(Schedule& sch, LoopRV loop, int64_t lanes) {
  sch.vectorize(loop);
  int64_t extent = extent_of(sch, loop);
  if (lanes > 0 && extent % lanes != 0 && extent < 2 * lanes) sch.annotate(loop, tir::kMaskedTail, 1);
}

namespace {

// A weight that does not stay in a core's L2 between runs (in a model, the
// other kernels' data pass through it) comes from memory each time: its
// panels are prefetched a panel ahead (kPrefetchFromL2Share of L2 or more),
// where the kernel walks them once, each reused by several row tiles: the
// next one then arrives while this one is computed on. Walked again for
// every row tile, they stay in L2; read once each (a matrix-vector product),
// the kernel only streams, and asking for the next one ahead of the
// hardware prefetcher only competes with it.
constexpr int64_t kPrefetchFromL2Share = 4;

bool walks_panels_once_with_reuse(const Schedule& sch, const std::vector<LoopRV>& loops, int slice_loop,
                                  LoopRV at) {
  if (slice_loop < 0) return false;
  for (int i = 0; i < slice_loop; ++i)
    if (extent_of(sch, loops[size_t(i)]) != 1) return false;
  for (size_t i = size_t(slice_loop) + 1; i < loops.size() && loops[i].id != at.id; ++i)
    if (extent_of(sch, loops[i]) > 1) return true;
  return false;
}

bool binds_reduction(const tir::BlockNode& block, const tir::VarNode* loop_var) {
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    if (block.iter_vars[i].kind != tir::IterKind::kReduce) continue;
    if (tir::uses_var(block.iter_values[i], loop_var)) return true;
  }
  return false;
}

}  // namespace

void prefetch_next_panel(Context& ctx, const BlockInfo& info) {
  Schedule& sch = ctx.sch;
  BlockRV block = sch.get_block(info.name);
  tir::Stmt block_stmt = find_block(sch.func(), info.name);
  const auto* node = block_stmt.as<tir::BlockNode>();
  int weight = -1;
  int64_t weight_bytes = 0;
  for (size_t r = 0; r < node->reads.size(); ++r) {
    const tir::Buffer& b = node->reads[r].buffer;
    int64_t bytes = b->num_elements() * int64_t(dtype_size(b->dtype));
    bool input = is_function_input(sch.func(), b) && !lists_buffer(node->writes, b);
    if (b->rank() >= 2 && input && bytes > weight_bytes) weight = int(r), weight_bytes = bytes;
  }
  // The prefetch goes in the first reduction loop: the loops above it down
  // from the panel loop (the row tiles) and it stream the next panel.
  std::optional<LoopRV> first_reduction;
  std::vector<LoopRV> loops = sch.get_loops(block);
  for (LoopRV l : loops)
    if (!first_reduction && binds_reduction(*node, sch.loop(l).var.get())) first_reduction = l;
  if (weight < 0 || !first_reduction) return;
  int slice_loop = prefetch_slice_loop(sch.func(), info.name, weight);
  if (!walks_panels_once_with_reuse(sch, loops, slice_loop, *first_reduction)) return;
  auto prefetch = [&](Schedule& s) { s.prefetch(block, weight, *first_reduction); };
  Schedule trial = sch;
  if (!attempt(trial, prefetch)) return;
  int64_t on = weight_bytes * kPrefetchFromL2Share >= ctx.options.l2_bytes;
  if (choose(ctx, sch, info.name + ".prefetch", {0, 1}, on)) attempt(sch, prefetch);
}

std::vector<LoopRV> tile_reduction(Schedule& sch, const BlockInfo& info, const TileShape& shape) {
  int64_t vec = shape.vec, unroll = shape.unroll;
  bool blocked = shape.reduction_block > 0;
  int packed = blocked ? -1 : panel_read(sch, info, vec, unroll);
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
  tir::Stmt block_stmt = find_block(sch.func(), info.name);
  const auto* block_node = block_stmt.as<tir::BlockNode>();
  std::vector<LoopRV> short_splits;
  for (int p : info.reduce) {
    const tir::VarNode* r = block_node->iter_vars[size_t(p)].var.get();
    int64_t factor = blocked || shape.first_reduction_innermost
                         ? 0
                         : reduction_split_factor(*block_node, r, info.extents[p]);
    if (factor == 0) {
      reduce.push_back(loops[p]);
      continue;
    }
    std::vector<LoopRV> parts = sch.split(loops[p], {info.extents[p] / factor, factor}, /*exact=*/true);
    reduce.insert(reduce.end(), parts.begin(), parts.end());
    if (factor <= kUnrolledSplit) short_splits.push_back(parts[1]);
  }
  if (shape.first_reduction_innermost && reduce.size() > 1) std::rotate(reduce.begin(), reduce.begin() + 1, reduce.end());
  if (shape.row_tiles_inside && row_tiles < column_tiles && column_tiles != SIZE_MAX) {
    std::rotate(outer.begin() + long(row_tiles), outer.begin() + long(row_tiles) + 1,
                outer.begin() + long(column_tiles));
    row_tiles = column_tiles - 1;
  }
  bool columns_first = row_tiles < column_tiles && column_tiles != SIZE_MAX &&
                       shape.columns_first.value_or(columns_first_by_default(sch, info, vec, unroll));
  if (columns_first) std::swap(outer[row_tiles], outer[column_tiles]);
  LoopRV reduction_blocks;  // blocked: the first reduction loop's outer part
  if (blocked) {
    if (outer.empty()) throw ScheduleError("tile.reduction_block", "no outer loop to block the reduction under");
    std::vector<LoopRV> parts = sch.split(reduce.front(), {Factor(-1), Factor(shape.reduction_block)}, /*exact=*/true);
    reduction_blocks = parts[0];
    reduce.front() = parts[1];
  }
  if (!unrolled.empty() || !vectorized.empty() || columns_first || shape.row_tiles_inside ||
      shape.first_reduction_innermost || blocked) {
    std::vector<LoopRV> order(outer.begin(), outer.end() - (blocked ? 1 : 0));
    if (blocked) order.insert(order.end(), {reduction_blocks, outer.back()});
    std::vector<const std::vector<LoopRV>*> parts = {&reduce, &unrolled, &vectorized};
    if (shape.taps_inside) parts = {&unrolled, &vectorized, &reduce};
    for (const auto* part : parts) order.insert(order.end(), part->begin(), part->end());
    sch.reorder(order);
  }
  // The column tile's strip of B (K x the tile's width) copied once per column
  // tile into a contiguous panel: the tile then walks B in order, as it walks
  // a constant B that pack_matmul_weights laid out, instead of one row of B
  // (N * 4 bytes apart) per reduction step.
  if (packed >= 0 && columns_first) {
    BlockRV panel = sch.cache_read(block, packed, tir::MemScope::kLocal);
    sch.compute_at(panel, outer[row_tiles]);
    std::vector<LoopRV> panel_loops = sch.get_loops(panel);
    sch.vectorize(panel_loops.back());
  }
  // A convolution accumulates its tile in a local buffer written back once per
  // tile: accumulating in its output (a whole flat plane when its epilogue
  // cannot join the tile) kept LLVM from holding the tile in registers, and a
  // store followed every FMA.
  if (shape.local_tile && !outer.empty()) {
    BlockRV copy = sch.cache_write(block, 0, tir::MemScope::kLocal);
    sch.reverse_compute_at(copy, outer.back());
    std::vector<LoopRV> copy_loops = sch.get_loops(copy);
    sch.vectorize(copy_loops.back());
  }
  BlockRV init = sch.decompose_reduction(block, blocked ? reduction_blocks : reduce.front());
  for (LoopRV l : unrolled) sch.unroll(l);
  for (LoopRV l : short_splits) sch.unroll(l);
  if (shape.unroll_reduction && !shape.taps_inside) sch.unroll(reduce.back());
  if (shape.taps_inside)
    for (LoopRV l : reduce) sch.unroll(l);
  for (LoopRV l : vectorized) {
    vectorize_masking_short(sch, l, shape.mask_short_rows);
    if (!shape.taps_inside) sch.vectorize(sch.get_loops(init).back());  // the init's copy of the vector loop
  }
  if (blocked) outer.pop_back();  // inside the blocks, the result is partial
  return outer;
}

}  // namespace tessel::sched::cpu_rules
