// The default GPU schedule of a convolution with enough work to fill the
// GPU with register tiles: each thread computes CO x P outputs (output
// channels by output positions) in registers, so that a weight it loads
// serves P products and an input it loads serves CO; a thread block is TY x
// TX threads over channels x positions. The output positions (the spatial
// loops after the channel) are fused into one loop first, so that a tile
// runs along the rows of every plane size. An elementwise epilogue inlined
// into the conv is applied as the registers are written back.
#include "schedules/defaults/gpu_rules.h"

#include <algorithm>

namespace tessel::sched::gpu_rules {

namespace {

struct ConvTiles {
  int64_t threads_co, threads_pos, thread_co, thread_pos;
  bool unroll_taps = false;  // the window's loops unrolled around the register tile
};

// The nest the rule understands: spatial loops, the output channel among
// them and positions after it, then the reduction loops (input channels and taps).
bool conv_nest(const BlockInfo& info) {
  if (info.kind != BlockKind::kConv || info.unroll_loop < 0 || info.reduce.empty()) return false;
  int spatial = int(info.spatial.size());
  for (int i = 0; i < spatial; ++i)
    if (info.spatial[size_t(i)] != i) return false;
  for (size_t r = 0; r < info.reduce.size(); ++r)
    if (info.reduce[r] != spatial + int(r)) return false;
  return info.unroll_loop < spatial - 1;
}

// "thread_co" (0: not tiled, a thread per output), "thread_pos",
// "threads_pos" and "threads_co": the registers per thread and the
// block's threads; "unroll_taps": the window's loops unrolled. The
// default: 4 x 64 threads, each the largest of 4 x 2, 2 x 2 and 2 x 1
// outputs whose blocks still give every multiprocessor one, taps not
// unrolled; else a thread per output.
std::optional<ConvTiles> choose_tiles(Schedule& sch, const BlockInfo& info,
                                      const GpuScheduleOptions& options) {
  int64_t batch = 1, positions = 1, channels = info.extents[size_t(info.unroll_loop)];
  for (int l = 0; l < info.unroll_loop; ++l) batch *= info.extents[size_t(l)];
  for (size_t l = size_t(info.unroll_loop) + 1; l < info.spatial.size(); ++l) positions *= info.extents[l];
  std::vector<int64_t> co_tiles = {0};
  for (int64_t c : {1, 2, 4, 8})
    if (channels % c == 0) co_tiles.push_back(c);
  constexpr int64_t kThreadsPerMultiprocessor = 2048;
  int64_t multiprocessors = std::max<int64_t>(1, options.resident_threads / kThreadsPerMultiprocessor);
  auto blocks = [&](const ConvTiles& t) {
    int64_t per_block_co = t.threads_co * t.thread_co, per_block_pos = t.threads_pos * t.thread_pos;
    return batch * ((channels + per_block_co - 1) / per_block_co) *
           ((positions + per_block_pos - 1) / per_block_pos);
  };
  ConvTiles preferred{4, 64, 0, 2};
  for (ConvTiles tile : {ConvTiles{4, 64, 4, 2}, ConvTiles{4, 64, 2, 2}, ConvTiles{4, 64, 2, 1}})
    if (channels % (tile.threads_co * tile.thread_co) == 0 && blocks(tile) >= multiprocessors) {
      preferred = tile;
      break;
    }
  ConvTiles t{};
  t.thread_co = choose(sch, options, info.name + ".thread_co", co_tiles, preferred.thread_co);
  if (t.thread_co == 0) return std::nullopt;
  t.thread_pos = choose(sch, options, info.name + ".thread_pos", {1, 2, 4}, preferred.thread_pos);
  t.threads_pos = choose(sch, options, info.name + ".threads_pos", {32, 64, 128}, preferred.threads_pos);
  std::vector<int64_t> threads_co;
  for (int64_t y : {1, 2, 4, 8})
    if (t.threads_pos * y <= options.max_threads_per_block && channels % (y * t.thread_co) == 0)
      threads_co.push_back(y);
  t.threads_co =
      choose(sch, options, info.name + ".threads_co", threads_co,
             std::count(threads_co.begin(), threads_co.end(), preferred.threads_co) ? preferred.threads_co
                                                                                    : threads_co.back());
  t.unroll_taps = choose(sch, options, info.name + ".unroll_taps", {0, 1}, 0) == 1;
  return t;
}

}  // namespace

bool schedule_conv(Schedule& sch, const BlockInfo& info, const GpuScheduleOptions& options) {
  if (!conv_nest(info)) return false;
  std::optional<ConvTiles> t = choose_tiles(sch, info, options);
  if (!t) return false;
  return attempt(sch, [&](Schedule& s) {
    BlockRV block = s.get_block(info.name);
    std::vector<LoopRV> loops = s.get_loops(block);
    size_t co = size_t(info.unroll_loop), spatial = info.spatial.size();
    std::vector<LoopRV> batch(loops.begin(), loops.begin() + long(co));
    std::vector<LoopRV> position_loops(loops.begin() + long(co) + 1, loops.begin() + long(spatial));
    std::vector<LoopRV> reduction(loops.begin() + long(spatial), loops.end());
    LoopRV position = position_loops.size() > 1 ? s.fuse(position_loops) : position_loops[0];
    std::vector<LoopRV> c = s.split(loops[co], {Factor(-1), Factor(t->threads_co), Factor(t->thread_co)});
    std::vector<LoopRV> p = s.split(position, {Factor(-1), Factor(t->threads_pos), Factor(t->thread_pos)});
    std::vector<LoopRV> order = batch;
    order.insert(order.end(), {c[0], p[0], c[1], p[1]});
    order.insert(order.end(), reduction.begin(), reduction.end());
    order.insert(order.end(), {c[2], p[2]});
    s.reorder(order);
    std::vector<LoopRV> outer = batch;
    outer.push_back(c[0]);
    s.bind(outer.size() > 1 ? s.fuse(outer) : outer[0], "blockIdx.y");
    s.bind(p[0], "blockIdx.x");
    s.bind(c[1], "threadIdx.y");
    s.bind(p[1], "threadIdx.x");
    BlockRV back = s.cache_write(block, 0, tir::MemScope::kLocal);
    s.reverse_compute_at(back, p[1]);
    s.decompose_reduction(block, reduction[0]);
    s.unroll(c[2]);
    s.unroll(p[2]);
    // The taps: every reduction loop but the input channels'.
    if (t->unroll_taps)
      for (size_t r = 1; r < reduction.size(); ++r) s.unroll(reduction[r]);
  });
}

}  // namespace tessel::sched::gpu_rules
