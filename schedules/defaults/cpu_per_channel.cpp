// The default CPU schedule's rule for windowed blocks that read one input
// channel per output channel (depthwise convs, pools): their private
// re-layout stages (padding, stride phases) computed per channel.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"
#include "schedules/defaults/cpu_rules.h"
#include "schedules/tree_query.h"

namespace tessel::sched::cpu_rules {

void schedule_private_stage(Schedule& sch, const std::string& name, size_t plane_depth) {
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block(name));
  if (loops.size() <= plane_depth) return;
  std::vector<LoopRV> own(loops.begin() + long(plane_depth), loops.end());
  attempt(sch, [&](Schedule& s) { vectorize_with_phases(s, own, phase_loop(s, name, own)); });
}

namespace {

// A per-channel block has no rows of output channels to unroll: each tap is
// one FMA per vector of its tile, and a tile of one vector is a chain of
// dependent FMAs (25 for a 5x5 window). Whole vectors dividing the row give
// that many independent accumulators: as many as the vector registers hold
// beside the window's weights (each tap's broadcast stays in a register
// across the tile loop), at least kTileVectors, at most kMostTileVectors.
constexpr int64_t kTileVectors = 4;
constexpr int64_t kMostTileVectors = 8;
constexpr int64_t kMostUnrolledTaps = 49;  // a 7x7 window

int64_t per_channel_vector(const BlockInfo& info, int64_t lanes, int64_t taps,
                           const CpuScheduleOptions& options) {
  int64_t vec = tile_vector_factor(info, lanes, options.num_threads),
          extent = info.extents[size_t(info.vector_loop)];
  int64_t most = std::clamp<int64_t>(vector_registers(options) - taps - 2, kTileVectors, kMostTileVectors);
  for (int64_t wide = most * lanes; wide > vec; wide -= lanes)
    if (extent % wide == 0) return wide;
  return vec;
}

// Whether every load of the block steps by 0 or 1 element along its vector
// loop (a stride-2 pool's rows[v3 * 2 + k] does not).
bool unit_stride_along_vector(const Schedule& sch, const BlockInfo& info) {
  tir::Stmt block_stmt = find_block(sch.func(), info.name);
  const auto* block = block_stmt.as<tir::BlockNode>();
  if (!block || info.vector_loop < 0) return false;
  const tir::Var& v = block->iter_vars[size_t(info.vector_loop)].var;
  bool unit = true;
  tir::walk_exprs(block->body, [&](const tir::Expr& e) {
    const auto* load = e.as<tir::LoadNode>();
    if (!load || load->indices.empty()) return;
    const tir::Expr& last = load->indices.back();
    tir::Expr step = tir::simplify(tir::substitute(last, {{v.get(), tir::int_imm(1)}}) -
                                   tir::substitute(last, {{v.get(), tir::int_imm(0)}}));
    const int64_t* c = tir::as_const_int(step);
    unit = unit && c && (*c == 0 || *c == 1);
  });
  return unit;
}

// Whether the block reads every stage's buffer by rows: no index of those
// reads divides or takes a remainder (a flat plane's read, p // 29, p % 29).
bool reads_stages_by_rows(const Schedule& sch, const BlockInfo& info,
                          const std::vector<std::string>& stages) {
  std::set<const tir::BufferNode*> buffers;
  for (const std::string& stage : stages) {
    tir::Stmt stmt = find_block(sch.func(), stage);
    const auto* block = stmt.as<tir::BlockNode>();
    if (!block || block->writes.size() != 1) return false;
    buffers.insert(block->writes[0].buffer.get());
  }
  tir::Stmt stmt = find_block(sch.func(), info.name);
  const auto* block = stmt.as<tir::BlockNode>();
  if (!block) return false;
  bool by_rows = true;
  tir::walk_exprs(block->body, [&](const tir::Expr& e) {
    const auto* load = e.as<tir::LoadNode>();
    if (!load || !buffers.count(load->buffer.get())) return;
    for (const tir::Expr& index : load->indices)
      tir::walk_exprs(index, [&](const tir::Expr& part) {
        by_rows = by_rows && !part.as<tir::FloorDivNode>() && !part.as<tir::FloorModNode>();
      });
  });
  return by_rows;
}

// A strided window (a stride-2 depthwise conv or pool) read by rows reads
// its input in place: its padded copy was a pass over an input several times
// its output's size, longer than the window's taps. In place, each read is
// guarded and partition_vector_loops splits the border rows and columns off,
// leaving the interior unguarded. Flat windows keep the copy (their guards
// would test every position's row and column, with a division each), and so
// do unit-stride windows, whose copy is a small part of their taps' reads and
// whose partitioned rows lose the vectors' alignment, and rows of one vector
// or less, which runs as one masked vector only while it is not split.
bool window_in_place_by_default(const Schedule& sch, const BlockInfo& info,
                                const std::vector<std::string>& stages, int64_t lanes) {
  int64_t columns = info.vector_loop >= 0 ? info.extents[size_t(info.vector_loop)] : 0;
  return columns > lanes && !unit_stride_along_vector(sch, info) && reads_stages_by_rows(sch, info, stages);
}

// The row length of the buffer a stage reads (its input's last dimension).
int64_t input_row(const Schedule& sch, const std::string& stage) {
  tir::Stmt stmt = find_block(sch.func(), stage);
  const auto* block = stmt.as<tir::BlockNode>();
  if (!block || block->reads.empty() || block->reads[0].buffer->shape.empty()) return 0;
  return block->reads[0].buffer->shape.back();
}

}  // namespace

std::vector<std::string> private_stages(Schedule& sch, const std::vector<BlockInfo>& blocks, size_t anchor) {
  std::vector<std::string> stages;
  std::vector<std::string> frontier{blocks[anchor].name};
  while (!frontier.empty()) {
    std::string consumer = frontier.back();
    frontier.pop_back();
    for (BlockRV p : sch.get_producers(sch.get_block(consumer))) {
      std::string name = sch.block_name(p);
      auto info = std::find_if(blocks.begin(), blocks.end(), [&](const BlockInfo& b) { return b.name == name; });
      std::vector<BlockRV> users = sch.get_consumers(p);
      if (info == blocks.end() || info->kind != BlockKind::kElementwise || users.size() != 1) continue;
      stages.push_back(name);
      frontier.push_back(name);
    }
  }
  return stages;
}

// A depthwise conv (or a pool) reads one input channel per output channel:
// its re-layout stages are computed per channel inside its parallel channel
// loop, where their planes stay in cache, instead of each streaming the
// whole input through memory once more. Its tile accumulates in a local
// buffer (held in registers): accumulated in the output, a store followed
// every FMA. With the taps inside the vector loop each output vector is
// complete within one iteration and is written straight to the output: a
// local buffer there was a masked store that the copy out read back as
// narrower loads, which waited on it (no store forwarding).
bool schedule_per_channel(Context& ctx, const std::vector<BlockInfo>& blocks, size_t index,
                          const std::vector<std::string>& stages, std::set<std::string>& done) {
  const BlockInfo& info = blocks[index];
  if (stages.empty() || info.spatial.size() < 3) return false;
  int64_t lanes = lanes_for(info, ctx.options);
  int64_t taps = 1;
  for (int p : info.reduce) taps *= info.extents[size_t(p)];
  int64_t vec = 1;
  if (info.vector_loop >= 0) {
    vec = per_channel_vector(info, lanes, taps, ctx.options);
    int64_t extent = info.extents[size_t(info.vector_loop)];
    vec = choose(ctx, ctx.sch, info.name + ".cols", vector_widths(extent, lanes, kMostTileVectors, vec), vec);
  }
  // The taps inside the vector loop: a knob (measured either way on pools and
  // depthwise convs, neither won everywhere), for windows small enough to
  // unroll; by default for a row shorter than a vector (a pool's 14
  // columns), which then runs as one masked vector: each output vector is its
  // taps' maximum or sum, where a tile of narrower vectors and scalars
  // reloaded its accumulator at every tap. (A row of one vector and a part,
  // 27 or 28 columns, masked both vectors and lost; so did strided reads.)
  bool taps_inside = false;
  int64_t columns = info.vector_loop >= 0 ? info.extents[size_t(info.vector_loop)] : 0;
  bool short_row = vec == columns && columns < lanes && unit_stride_along_vector(ctx.sch, info);
  if (info.vector_loop >= 0 && taps > 1 && taps <= kMostUnrolledTaps)
    taps_inside = choose(ctx, ctx.sch, info.name + ".taps_inside", {0, 1}, short_row);
  bool in_place = choose(ctx, ctx.sch, info.name + ".window_in_place", {0, 1},
                         window_in_place_by_default(ctx.sch, info, stages, lanes));
  // The block reads a stride phase copy made from a padded copy: the phase
  // copy may read the input in place instead (its guarded border split off
  // by partition_vector_loops), one pass over the plane fewer. By default
  // where the input's rows are at least a vector: on smaller planes the
  // padded copy is cheap and the phase copy's rows, split into border and
  // interior, ran slower than the two copies.
  bool phases_in_place = false;
  if (!in_place && stages.size() > 1)
    phases_in_place = choose(ctx, ctx.sch, info.name + ".phases_in_place", {0, 1},
                             input_row(ctx.sch, stages.back()) >= lanes);
  std::vector<LoopRV> outer;
  LoopRV plane;
  bool ok = attempt(ctx.sch, [&](Schedule& s) {
    TileShape shape;
    shape.vec = vec;
    shape.local_tile = !taps_inside;
    shape.taps_inside = taps_inside;
    if (taps_inside) shape.mask_short_rows = lanes;  // no accumulator lives across the taps' loop
    outer = tile_reduction(s, info, shape);
    plane = s.fuse({outer[0], outer[1]});
    for (size_t i = 0; i < stages.size(); ++i)
      if (in_place || (i > 0 && phases_in_place))
        s.compute_inline(s.get_block(stages[i]));
      else
        s.compute_at(s.get_block(stages[i]), plane);
  });
  if (!ok) return false;
  for (size_t i = 0; i < stages.size() && !in_place; ++i)
    if (i == 0 || !phases_in_place) schedule_private_stage(ctx.sch, stages[i], 1);
  std::vector<LoopRV> loops = ctx.sch.get_loops(ctx.sch.get_block(info.name));  // [plane, ..., tile, reduction...]
  std::vector<LoopRV> outward(loops.begin(), loops.begin() + long(outer.size()) - 1);
  std::reverse(outward.begin(), outward.end());
  attach_epilogues(ctx, blocks, index, outward, done);
  if (extent_of(ctx.sch, plane) >= ctx.options.num_threads)
    attempt(ctx.sch, [&](Schedule& s) { s.parallel(plane); });
  return true;
}

}  // namespace tessel::sched::cpu_rules
