// The default GPU schedule of a matmul whose tiles divide it: a thread block
// computes a BM x BN tile of the output, each of its 16 x 16 threads a TM x
// TN register tile; per step of BK along the reduction, the block stages its
// rows of A and columns of B in shared memory, fetched by all its threads
// together (the barriers come from insert_barriers).
#include "schedules/defaults/gpu_rules.h"

namespace tessel::sched::gpu_rules {

namespace {

struct MatmulTiles {
  int64_t block_rows, block_cols, thread_rows, thread_cols, step;
};

constexpr int64_t kThreadsPerSide = 16;

// The largest tiles (64 x 64 with 4 x 4 per thread, else 32 x 32 with 2 x 2)
// that divide the rows, columns and reduction; none: the thread-per-output
// schedule is used instead.
std::optional<MatmulTiles> choose_tiles(int64_t rows, int64_t cols, int64_t depth) {
  for (int64_t per_thread : {4, 2}) {
    int64_t side = per_thread * kThreadsPerSide, step = 4 * per_thread;
    if (rows % side == 0 && cols % side == 0 && depth % step == 0)
      return MatmulTiles{side, side, per_thread, per_thread, step};
  }
  return std::nullopt;
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

bool schedule_matmul(Schedule& sch, const BlockInfo& info) {
  if (info.kind != BlockKind::kMatmul || info.reduce.size() != 1 || info.spatial.size() < 2) return false;
  int row_loop = info.spatial[info.spatial.size() - 2], col_loop = info.spatial.back();
  if (info.unroll_loop != row_loop || info.vector_loop != col_loop || info.reduce[0] != col_loop + 1)
    return false;
  std::optional<MatmulTiles> t = choose_tiles(info.extents[size_t(row_loop)], info.extents[size_t(col_loop)],
                                              info.extents[size_t(info.reduce[0])]);
  if (!t) return false;
  return attempt(sch, [&](Schedule& s) {
    BlockRV block = s.get_block(info.name);
    std::vector<LoopRV> loops = s.get_loops(block);
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
