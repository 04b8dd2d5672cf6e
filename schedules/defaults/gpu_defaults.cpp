// apply_default_gpu_schedule: data movement inlined into its consumers and
// epilogues into their producers; then a matmul tiled (gpu_matmul.cpp) or,
// for any other block, the loops from the outermost inward that bind only
// spatial iteration variables (and hold only the next loop) fused, split by
// the block size and bound, a reduction summing in a local buffer; or, for a
// reduction with few outputs, those loops bound to blocks and its reduction
// split across each block's threads.
#include "schedules/defaults/gpu_defaults.h"

#include <set>

#include "ir/tensor/functor.h"
#include "schedules/defaults/cpu_knobs.h"
#include "schedules/defaults/gpu_rules.h"

namespace tessel::sched {

namespace {

const tir::BlockNode* find_block(const tir::Stmt& root, const std::string& name) {
  const tir::BlockNode* found = nullptr;
  tir::walk(root, [&](const tir::Stmt& s) {
    if (const auto* b = s.as<tir::BlockNode>(); b && b->name == name) found = b;
    return found == nullptr;
  });
  return found;
}

}  // namespace

namespace gpu_rules {

std::vector<int> operand_reads(Schedule& sch, BlockRV block) {
  const tir::BlockNode* node = find_block(sch.func()->body, sch.block_name(block));
  std::vector<int> reads;
  if (!node) return reads;
  for (size_t r = 0; r < node->reads.size(); ++r) {
    bool written = false;
    for (const tir::BufferRegion& w : node->writes) written |= w.buffer.get() == node->reads[r].buffer.get();
    if (!written) reads.push_back(int(r));
  }
  return reads;
}

int64_t choose(Schedule& sch, const GpuScheduleOptions& options, const std::string& key,
               std::vector<int64_t> candidates, int64_t default_value) {
  if (!options.knobs) return default_value;
  return options.knobs->choose(sch, key, std::move(candidates), default_value);
}

}  // namespace gpu_rules

namespace {

// The variables the block's spatial iteration variables are bound to use.
std::set<const tir::VarNode*> spatial_loop_vars(const tir::BlockNode& block,
                                                std::set<const tir::VarNode*>& reduce) {
  std::set<const tir::VarNode*> spatial;
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    auto& into = block.iter_vars[i].kind == tir::IterKind::kSpatial ? spatial : reduce;
    tir::walk_exprs(block.iter_values[i], [&](const tir::Expr& e) {
      if (const auto* v = e.as<tir::VarNode>()) into.insert(v);
    });
  }
  return spatial;
}

// How many of the outer loops are perfectly nested spatial loops.
size_t spatial_prefix(Schedule& sch, const std::vector<LoopRV>& loops, const tir::BlockNode& block) {
  std::set<const tir::VarNode*> reduce;
  std::set<const tir::VarNode*> spatial = spatial_loop_vars(block, reduce);
  size_t n = 0;
  for (; n < loops.size(); ++n) {
    const tir::ForNode& loop = sch.loop(loops[n]);
    const tir::VarNode* v = loop.var.get();
    if (!spatial.count(v) || reduce.count(v) || loop.for_kind != tir::ForKind::kSerial) break;
    bool perfect = n + 1 == loops.size() ? loop.body.as<tir::BlockNode>() != nullptr
                                         : loop.body.as<tir::ForNode>() == &sch.loop(loops[n + 1]);
    if (!perfect) return n + 1;
  }
  return n;
}

// Whether a block per output, its threads sharing the reduction, beats a
// thread per output: a reduction over rows (ReduceSum/Max, softmax and norm
// stages, pooling) or a matrix product whose outputs would keep under a
// quarter of the GPU's threads busy, its type one the threads combine (f32,
// f64). A conv's reduction stays in its thread: its window reads reuse
// neighbouring outputs' through the cache.
bool reduce_across_threads(BlockKind kind, const tir::BlockNode& block, size_t spatial, size_t loops,
                           int64_t outputs, const GpuScheduleOptions& options) {
  if (kind != BlockKind::kReduction && kind != BlockKind::kMatmul) return false;
  if (!block.is_reduction() || spatial == loops || outputs * 4 > options.resident_threads) return false;
  if (block.writes.size() != 1) return false;
  DType t = block.writes[0].buffer->dtype;
  return t == DType::kF32 || t == DType::kF64;
}

// A thread block per output: the reduction loops fused and split across
// its threads (each thread strides over the reduction, so that neighbours
// read neighbouring elements), the thread loop outside the stride loop.
void bind_reduction_to_threads(Schedule& sch, BlockRV block, LoopRV outputs, std::vector<LoopRV> reduction,
                               const std::string& name, const GpuScheduleOptions& options) {
  LoopRV r = reduction.size() > 1 ? sch.fuse(reduction) : reduction[0];
  const int64_t* steps = tir::as_const_int(sch.loop(r).extent);
  if (!steps || *steps < 32) throw ScheduleError("gpu.short_reduction", name + ": too few reduction steps");
  int64_t fit = 32;
  while (fit * 2 <= *steps && fit * 2 <= options.threads_per_block) fit *= 2;
  int64_t threads =
      gpu_rules::choose(sch, options, name + ".reduce_threads", {32, 64, 128, 256, 512, 1024}, fit);
  sch.decompose_reduction(block, r);  // before the split: a guarded last step is no init's concern
  std::vector<LoopRV> parts = sch.split(r, {Factor(-1), Factor(threads)});
  sch.reorder({parts[1], parts[0]});
  sch.bind(outputs, "blockIdx.x");
  sch.bind(parts[1], "threadIdx.x");
}

void bind_block(Schedule& sch, const std::string& name, BlockKind kind, const GpuScheduleOptions& options) {
  int64_t threads_per_block = gpu_rules::choose(sch, options, name + ".threads", {64, 128, 256, 512, 1024},
                                                options.threads_per_block);
  BlockRV block = sch.get_block(name);
  std::vector<LoopRV> loops = sch.get_loops(block);
  const tir::BlockNode* node = find_block(sch.func()->body, name);
  if (loops.empty() || !node) return;
  size_t n = spatial_prefix(sch, loops, *node);
  if (n == 0) return;
  std::vector<LoopRV> outer(loops.begin(), loops.begin() + long(n));
  LoopRV fused = outer.size() > 1 ? sch.fuse(outer) : outer[0];
  const int64_t* extent = tir::as_const_int(sch.loop(fused).extent);
  if (!extent) return;
  if (reduce_across_threads(kind, *node, n, loops.size(), *extent, options) && attempt(sch, [&](Schedule& s) {
        bind_reduction_to_threads(s, s.get_block(name), fused, {loops.begin() + long(n), loops.end()}, name,
                                  options);
      }))
    return;
  LoopRV thread = fused;
  if (*extent <= threads_per_block) {
    sch.bind(fused, "threadIdx.x");
  } else {
    std::vector<LoopRV> parts = sch.split(fused, {Factor(-1), Factor(threads_per_block)});
    sch.bind(parts[0], "blockIdx.x");
    sch.bind(parts[1], "threadIdx.x");
    thread = parts[1];
  }
  if (!node->is_reduction() || n == loops.size()) return;
  // The thread's sum in a register, written once, its init before the
  // reduction loops: accumulating in global memory cost a load and a store per step.
  BlockRV copy = sch.cache_write(block, 0, tir::MemScope::kLocal);
  sch.reverse_compute_at(copy, thread);
  std::vector<LoopRV> inner = sch.get_loops(block);
  sch.decompose_reduction(block, inner[inner.size() - (loops.size() - n)]);
}

// Whether the block only moves data (a padded copy, a transpose): its value
// loads, selects and constants, no float arithmetic, so that reading it in
// its consumers costs what reading its buffer would.
bool moves_data(const tir::BlockNode& block) {
  const auto* store = block.body.as<tir::StoreNode>();
  if (!store || block.is_reduction()) return false;
  bool only_movement = true;
  tir::walk_exprs(store->value, [&](const tir::Expr& e) {
    if (e->kind == tir::ExprKind::kCall || (tir::is_binary(e->kind) && is_float(e->dtype)))
      only_movement = false;
  });
  return only_movement;
}

}  // namespace

// Data movement is read where it is needed, an elementwise epilogue computed
// where its producer writes (in a reduction's write-back, from the register),
// so that a fused group is as few launches as its stages allow; then each
// block that remains gets its rule.
void apply_default_gpu_schedule(Schedule& sch, const GpuScheduleOptions& options) {
  std::vector<BlockInfo> lowered = classify_blocks(sch.func());
  std::set<std::string> matmuls;  // tiled through shared memory: their operands stay buffers
  for (const BlockInfo& info : lowered)
    if (info.kind == BlockKind::kMatmul) matmuls.insert(info.name);
  for (const BlockInfo& info : lowered) {
    const tir::BlockNode* node = find_block(sch.func()->body, info.name);
    if (info.kind != BlockKind::kElementwise || !node || !moves_data(*node)) continue;
    bool feeds_a_matmul = false;
    for (BlockRV consumer : sch.get_consumers(sch.get_block(info.name)))
      feeds_a_matmul |= matmuls.count(sch.block_name(consumer)) > 0;
    if (!feeds_a_matmul) attempt(sch, [&](Schedule& s) { s.compute_inline(s.get_block(info.name)); });
  }
  for (const BlockInfo& info : classify_blocks(sch.func())) {
    if (info.kind == BlockKind::kElementwise &&
        attempt(sch, [&](Schedule& s) { s.reverse_compute_inline(s.get_block(info.name)); }))
      continue;
    if (gpu_rules::schedule_matmul(sch, info, options) || gpu_rules::schedule_conv(sch, info, options))
      continue;
    // Otherwise a thread per output; left as it was (one thread runs the nest) when that does not apply.
    attempt(sch, [&](Schedule& s) { bind_block(s, info.name, info.kind, options); });
  }
}

}  // namespace tessel::sched
