// The default GPU schedule of a matmul whose tiles divide it: a thread block
// computes a BM x BN tile of the output, each of its TY x TX threads a
// TM x TN register tile; per step of BK along the reduction, the block
// stages its rows of A and columns of B in shared memory, fetched by all its
// threads together (the barriers come from insert_barriers). The default
// takes 16 x 16 threads of 4 x 4; the knobs search every shape that divides
// the product and fits the block's shared memory.
#include "schedules/defaults/gpu_rules.h"

#include <algorithm>

#include "ir/core/dtype.h"

namespace tessel::sched::gpu_rules {

namespace {

struct MatmulTiles {
  int64_t threads_y, threads_x, thread_rows, thread_cols, step;
  int64_t block_rows() const { return threads_y * thread_rows; }
  int64_t block_cols() const { return threads_x * thread_cols; }
};

constexpr int64_t kThreadsPerSide = 16;    // the default's, per side of the block
constexpr int64_t kMostRegisterTile = 64;  // accumulators per thread, within its registers

// The values among `options` that divide `extent` by `unit` times them.
std::vector<int64_t> dividing(std::initializer_list<int64_t> options, int64_t extent, int64_t unit) {
  std::vector<int64_t> out;
  for (int64_t v : options)
    if (extent % (v * unit) == 0) out.push_back(v);
  return out;
}

int64_t default_among(const std::vector<int64_t>& values, std::initializer_list<int64_t> preferred) {
  for (int64_t p : preferred)
    if (std::count(values.begin(), values.end(), p)) return p;
  return values.front();
}

// The tiles, knob by knob, each one's candidates those that still divide
// and fit after the knobs before it: "thread_rows" (0: not tiled, the
// thread-per-output schedule), "thread_cols", "threads_y", "threads_x",
// "step". The default: 16 x 16 threads of 4 x 4 (else 2 x 2), a step of
// four times the side.
std::optional<MatmulTiles> choose_tiles(Schedule& sch, const BlockInfo& info,
                                        const GpuScheduleOptions& options, int64_t rows, int64_t cols,
                                        int64_t depth) {
  std::vector<int64_t> tile_rows = dividing({1, 2, 4, 8}, rows, kThreadsPerSide);
  std::vector<int64_t> tile_cols = dividing({1, 2, 4, 8}, cols, kThreadsPerSide);
  std::vector<int64_t> steps = dividing({4, 8, 16, 32}, depth, 1);
  if (steps.empty() || tile_rows.empty() || tile_cols.empty()) return std::nullopt;
  int64_t side_default = 0;
  for (int64_t s : {4, 2})
    if (side_default == 0 && std::count(tile_rows.begin(), tile_rows.end(), s) &&
        std::count(tile_cols.begin(), tile_cols.end(), s) && depth % (4 * s) == 0)
      side_default = s;
  tile_rows.insert(tile_rows.begin(), 0);
  MatmulTiles t{};
  t.thread_rows = choose(sch, options, info.name + ".thread_rows", tile_rows, side_default);
  if (t.thread_rows == 0) return std::nullopt;
  std::vector<int64_t> cols_fit;
  for (int64_t c : tile_cols)
    if (t.thread_rows * c <= kMostRegisterTile) cols_fit.push_back(c);
  t.thread_cols =
      choose(sch, options, info.name + ".thread_cols", cols_fit, default_among(cols_fit, {t.thread_rows}));
  t.threads_y = choose(sch, options, info.name + ".threads_y", dividing({8, 16, 32}, rows, t.thread_rows),
                       kThreadsPerSide);
  std::vector<int64_t> threads_x;
  for (int64_t x : dividing({8, 16, 32}, cols, t.thread_cols))
    if (t.threads_y * x >= 64 && t.threads_y * x <= options.max_threads_per_block) threads_x.push_back(x);
  if (threads_x.empty()) return std::nullopt;
  t.threads_x =
      choose(sch, options, info.name + ".threads_x", threads_x, default_among(threads_x, {kThreadsPerSide}));
  // Both operands' tiles of a step are in shared memory at once.
  int64_t element = int64_t(dtype_size(info.output->dtype));
  std::vector<int64_t> steps_fit;
  for (int64_t k : steps)
    if ((t.block_rows() + t.block_cols()) * k * element <= options.shared_bytes_per_block)
      steps_fit.push_back(k);
  if (steps_fit.empty()) return std::nullopt;
  int64_t step_default = std::count(steps_fit.begin(), steps_fit.end(), 4 * t.thread_rows) ? 4 * t.thread_rows
                                                                                           : steps_fit.back();
  t.step = choose(sch, options, info.name + ".step", steps_fit, step_default);
  return t;
}

// The shared copy's loops inside the reduction step, fused and spread over
// the block's threads (as the compute's). Where the tile's rows are whole
// vectors of four and every thread copies the same number of them, each
// thread copies four consecutive floats at once (a float4 load and store;
// cuda_vector.cpp checks their alignment): neighbouring threads still read
// neighbouring memory, in a quarter of the instructions.
void cooperative_fetch(Schedule& sch, BlockRV copy, size_t outer_loops, const MatmulTiles& t) {
  std::vector<LoopRV> loops = sch.get_loops(copy);
  std::vector<LoopRV> inner(loops.begin() + long(outer_loops), loops.end());
  constexpr int64_t kLanes = 4;
  int64_t elements = 1;
  for (LoopRV l : inner) elements *= *tir::as_const_int(sch.loop(l).extent);
  const int64_t* row = tir::as_const_int(sch.loop(inner.back()).extent);
  if (row && *row % kLanes == 0 && elements % (kLanes * t.threads_y * t.threads_x) == 0) {
    std::vector<LoopRV> vector = sch.split(inner.back(), {Factor(-1), Factor(kLanes)});
    inner.back() = vector[0];
    LoopRV fused = inner.size() > 1 ? sch.fuse(inner) : inner[0];
    std::vector<LoopRV> parts = sch.split(fused, {Factor(-1), Factor(t.threads_y), Factor(t.threads_x)});
    sch.bind(parts[1], "threadIdx.y");
    sch.bind(parts[2], "threadIdx.x");
    sch.vectorize(vector[1]);
    return;
  }
  LoopRV fused = inner.size() > 1 ? sch.fuse(inner) : inner[0];
  std::vector<LoopRV> parts = sch.split(fused, {Factor(-1), Factor(t.threads_y), Factor(t.threads_x)});
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
        s.split(loops[size_t(row_loop)], {Factor(-1), Factor(t->threads_y), Factor(t->thread_rows)});
    std::vector<LoopRV> j =
        s.split(loops[size_t(col_loop)], {Factor(-1), Factor(t->threads_x), Factor(t->thread_cols)});
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
      cooperative_fetch(s, copy, outer, *t);
    }
    s.decompose_reduction(block, k[0]);
    s.unroll(k[1]);
    s.unroll(i[2]);
    s.unroll(j[2]);
  });
}

}  // namespace tessel::sched::gpu_rules
