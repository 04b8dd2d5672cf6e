// The default GPU schedule of a matmul whose tiles divide it: a thread block
// computes a BM x BN tile of the output, each of its 16 x 16 threads a TM x
// TN register tile; per step of BK along the reduction, the block stages its
// rows of A and columns of B in shared memory, fetched by all its threads
// together (the barriers come from insert_barriers).
#include "schedules/defaults/gpu_rules.h"

#include <algorithm>

namespace tessel::sched::gpu_rules {

namespace {

struct MatmulTiles {
  int64_t block_rows, block_cols, thread_rows, thread_cols, step;
};

constexpr int64_t kThreadsPerSide = 16;

// The tiles: 16 x 16 threads, each a square register tile whose side
// (thread_tile) makes a block tile that divides the rows and columns, and a
// reduction step that divides the depth. The default takes 4 x 4 per thread
// (else 2 x 2) and a step of four times that; the knobs offer every side and
// step that divides, and 0: no tiling (the thread-per-output schedule).
std::optional<MatmulTiles> choose_tiles(Schedule& sch, const BlockInfo& info,
                                        const GpuScheduleOptions& options, int64_t rows, int64_t cols,
                                        int64_t depth) {
  std::vector<int64_t> sides = {0}, steps;
  for (int64_t per_thread : {1, 2, 4, 8})
    if (rows % (per_thread * kThreadsPerSide) == 0 && cols % (per_thread * kThreadsPerSide) == 0)
      sides.push_back(per_thread);
  for (int64_t step : {4, 8, 16, 32})
    if (depth % step == 0) steps.push_back(step);
  int64_t side_default = 0;
  for (int64_t s : {4, 2})
    if (side_default == 0 && std::count(sides.begin(), sides.end(), s) && depth % (4 * s) == 0)
      side_default = s;
  if (steps.empty() || sides.size() == 1) return std::nullopt;
  int64_t side = choose(sch, options, info.name + ".thread_tile", sides, side_default);
  if (side == 0) return std::nullopt;
  int64_t step_default = std::count(steps.begin(), steps.end(), 4 * side) ? 4 * side : steps.back();
  int64_t step = choose(sch, options, info.name + ".step", steps, step_default);
  return MatmulTiles{side * kThreadsPerSide, side * kThreadsPerSide, side, side, step};
}

// The shared copy's loops inside the reduction step, fused and spread over
// the block's threads (16 x 16, as the compute's).
void cooperative_fetch(Schedule& sch, BlockRV copy, size_t outer_loops) {
  std::vector<LoopRV> loops = sch.get_loops(copy);
  std::vector<LoopRV> inner(loops.begin() + long(outer_loops), loops.end());
  LoopRV fused = inner.size() > 1 ? sch.fuse(inner) : inner[0];
  std::vector<LoopRV> parts =
      sch.split(fused, {Factor(-1), Factor(kThreadsPerSide), Factor(kThreadsPerSide)});
  sch.bind(parts[1], "threadIdx.y");
  sch.bind(parts[2], "threadIdx.x");
}

}  // namespace

bool schedule_matmul(Schedule& sch, const BlockInfo& info, const GpuScheduleOptions& options) {
  if (info.kind != BlockKind::kMatmul || info.reduce.size() != 1 || info.spatial.size() < 2) return false;
  // Rows, then columns, then the reduction, innermost; loops of extent 1
  // between rows and columns (a [M, 1, N] result) go out with the batch.
  int row_loop = info.unroll_loop, col_loop = info.spatial.back();
  if (row_loop < 0 || info.vector_loop != col_loop || info.reduce[0] != col_loop + 1) return false;
  for (int l = row_loop + 1; l < col_loop; ++l)
    if (info.extents[size_t(l)] != 1) return false;
  std::optional<MatmulTiles> t =
      choose_tiles(sch, info, options, info.extents[size_t(row_loop)], info.extents[size_t(col_loop)],
                   info.extents[size_t(info.reduce[0])]);
  if (!t) return false;
  return attempt(sch, [&](Schedule& s) {
    BlockRV block = s.get_block(info.name);
    std::vector<LoopRV> loops = s.get_loops(block);
    if (col_loop > row_loop + 1) {  // the unit loops out of the rows
      std::vector<LoopRV> order(loops.begin() + row_loop + 1, loops.begin() + col_loop);
      order.push_back(loops[size_t(row_loop)]);
      s.reorder(order);
      loops = s.get_loops(block);
      row_loop = col_loop - 1;
    }
    std::vector<LoopRV> batch(loops.begin(), loops.begin() + row_loop);
    std::vector<LoopRV> i =
        s.split(loops[size_t(row_loop)], {Factor(-1), Factor(kThreadsPerSide), Factor(t->thread_rows)});
    std::vector<LoopRV> j =
        s.split(loops[size_t(col_loop)], {Factor(-1), Factor(kThreadsPerSide), Factor(t->thread_cols)});
    std::vector<LoopRV> k = s.split(loops[size_t(info.reduce[0])], {Factor(-1), Factor(t->step)});
    s.reorder({i[0], j[0], i[1], j[1], k[0], k[1], i[2], j[2]});
    if (!batch.empty()) s.bind(batch.size() > 1 ? s.fuse(batch) : batch[0], "blockIdx.z");
    s.bind(i[0], "blockIdx.y");
    s.bind(j[0], "blockIdx.x");
    s.bind(i[1], "threadIdx.y");
    s.bind(j[1], "threadIdx.x");
    BlockRV back = s.cache_write(block, 0, tir::MemScope::kLocal);
    s.reverse_compute_at(back, j[1]);
    size_t outer = (batch.empty() ? 0 : 1) + 5;  // the bound loops and the reduction step
    for (int r : operand_reads(s, block)) {
      BlockRV copy = s.cache_read(block, r, tir::MemScope::kShared);
      s.compute_at(copy, k[0]);
      cooperative_fetch(s, copy, outer);
    }
    s.decompose_reduction(block, k[0]);
    s.unroll(k[1]);
    s.unroll(i[2]);
    s.unroll(j[2]);
  });
}

}  // namespace tessel::sched::gpu_rules
