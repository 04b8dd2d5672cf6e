// Randomised schedules on matmul and conv2d (and, CPU-style, the fused
// conv+bias+relu): seeded sequences of primitives,
// CPU-style (sampled tiles, reorder, fuse, caches computed at sampled
// locations, rfactor, decompose_reduction, loop kinds) and GPU-style (blocks
// and threads, shared copies under the reduction's outer loop, cooperative
// fetch by the thread block's threads (ko outside the thread loops, or inside
// them with the fetch bound to the same tags), a local accumulator,
// insert_barriers: without the barriers the cooperative schedules fail, since
// the threads read what others fetched). Each result, and the results of
// flatten_blocks and compact_buffers on it, interpret equal to
// the unscheduled function in every thread order, and its trace, through JSON,
// replays on a freshly lowered function to a structurally equal one; with one
// tile decision mutated it replays to another correct function or is rejected.
#include <algorithm>
#include <sstream>

#include "ir/tensor/structural.h"
#include "schedules/primitives/loop_primitives.h"
#include "src/tir_passes/compact_buffers.h"
#include "src/tir_passes/flatten_blocks.h"
#include "src/tir_passes/insert_barriers.h"
#include "tests/unit/sanitized.h"
#include "tests/unit/sched_workloads_util.h"

namespace tessel::sched_workloads {
namespace {

using sched::Factor;
using sched::IntRV;

// Steps attempted and applied; the rejections by kind.
struct StepStats {
  int attempted = 0;
  int applied = 0;
  std::map<std::string, int> rejected;

  std::string summary() const {
    std::ostringstream out;
    out << applied << " of " << attempted << " steps applied; rejected:";
    for (const auto& [kind, n] : rejected) out << " " << kind << " x" << n;
    return out.str();
  }
};

// A schedule being built by random steps. A step is a group of primitives
// that belong together; a ScheduleError skips the rest of it and is counted
// (the schedule keeps what the step applied before the error).
class RandomSchedule {
 public:
  RandomSchedule(Schedule& sch, uint64_t seed, StepStats& stats) : sch(sch), rng_(seed), stats_(stats) {}

  bool chance(double p) { return sched::uniform_unit(rng_) < p; }
  int64_t below(int64_t n) { return int64_t(sched::uniform_below(rng_, uint64_t(n))); }
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[size_t(below(int64_t(i)))]);
  }

  template <typename F>
  bool step(F&& f) {
    ++stats_.attempted;
    try {
      f();
    } catch (const ScheduleError& e) {
      ++stats_.rejected[e.kind()];
      return false;
    }
    ++stats_.applied;
    return true;
  }

  // Splits `loop` into a sampled perfect tile of n factors.
  std::vector<LoopRV> tile(LoopRV loop, int n, int64_t max_innermost) {
    std::vector<IntRV> t = sch.sample_perfect_tile(loop, n, max_innermost);
    return sch.split(loop, std::vector<Factor>(t.begin(), t.end()), /*exact=*/true);
  }

  const tir::BlockNode& block(BlockRV rv) const {
    tir::Stmt s = sched::find_block(sch.func(), sch.block_name(rv));  // the node lives in sch.func()
    return *s.as<tir::BlockNode>();
  }
  int write_rank(BlockRV rv) const { return block(rv).writes.at(0).buffer->rank(); }

  int64_t extent(LoopRV loop) const { return sch.loop(loop).extent.as<tir::IntImmNode>()->value; }

  // The read indices of `block` that are inputs (not its own accumulator).
  std::vector<int> input_reads(BlockRV block) const {
    const tir::BlockNode& b = this->block(block);
    std::vector<int> out;
    for (size_t i = 0; i < b.reads.size(); ++i)
      if (b.writes.empty() || !b.reads[i].buffer.same_as(b.writes[0].buffer)) out.push_back(int(i));
    return out;
  }

  Schedule& sch;

 private:
  std::mt19937_64 rng_;
  StepStats& stats_;
};

// ---- CPU-style

// The loops of `block` from the outermost down to (not including) the first
// that binds a reduction variable.
std::vector<LoopRV> outer_spatial_loops(RandomSchedule& r, BlockRV block) {
  std::vector<LoopRV> out;
  for (LoopRV l : r.sch.get_loops(block)) {
    if (!loop_is_spatial(r.sch, block, l)) break;
    out.push_back(l);
  }
  return out;
}

void random_tiling(RandomSchedule& r, BlockRV b) {
  Schedule& s = r.sch;
  if (r.chance(0.3))
    r.step([&] {
      std::vector<LoopRV> l = s.get_loops(b);
      s.fuse({l[0], l[1]});
    });
  for (LoopRV loop : s.get_loops(b)) {
    if (r.extent(loop) == 1 || !r.chance(0.7)) continue;
    r.step([&] {
      if (r.chance(0.2)) return void(s.split(loop, {-1, 2 + r.below(3)}));  // non-exact: a predicate
      r.tile(loop, 2 + int(r.below(2)), r.chance(0.5) ? 4 : 8);
    });
  }
  if (r.chance(0.8))
    r.step([&] {
      std::vector<LoopRV> l = s.get_loops(b);
      r.shuffle(l);
      s.reorder(l);
    });
}

// rfactor over one reduction loop; the partial-result block becomes the one scheduled further.
void random_rfactor(RandomSchedule& r, BlockRV& b) {
  std::vector<LoopRV> reduction;
  for (LoopRV l : r.sch.get_loops(b))
    if (!loop_is_spatial(r.sch, b, l)) reduction.push_back(l);
  if (reduction.empty()) return;
  LoopRV loop = reduction[size_t(r.below(int64_t(reduction.size())))];
  int rank = r.write_rank(b);
  r.step([&] { b = r.sch.rfactor(loop, int(r.below(rank + 1))); });
}

// Returns the copy blocks made (write-back and read copies).
std::vector<BlockRV> random_caches(RandomSchedule& r, BlockRV b) {
  Schedule& s = r.sch;
  std::vector<BlockRV> copies;
  if (r.chance(0.4)) {
    BlockRV back;
    if (r.step([&] {
          back = s.cache_write(b, 0, r.chance(0.5) ? tir::MemScope::kLocal : tir::MemScope::kGlobal);
        })) {
      copies.push_back(back);
      std::vector<LoopRV> at = outer_spatial_loops(r, b);
      if (!at.empty()) r.step([&] { s.reverse_compute_at(back, at[size_t(r.below(int64_t(at.size())))]); });
    }
  }
  for (int read : r.input_reads(b)) {
    if (!r.chance(0.5)) continue;
    BlockRV copy;
    tir::MemScope scope = r.chance(0.5) ? tir::MemScope::kLocal : tir::MemScope::kGlobal;
    if (!r.step([&] { copy = s.cache_read(b, read, scope); })) continue;
    if (r.chance(0.1)) {
      r.step([&] { s.compute_inline(copy); });  // undone
      continue;
    }
    r.step([&] {
      if (std::optional<LoopRV> at = s.sample_compute_location(copy)) s.compute_at(copy, *at);
    });
    copies.push_back(copy);
  }
  return copies;
}

// Loop transformations after the caches moved in: the outer loops of b now
// enclose the copies too, and the copies' own loops get kinds.
void random_after_caches(RandomSchedule& r, BlockRV b, const std::vector<BlockRV>& copies) {
  Schedule& s = r.sch;
  if (r.chance(0.4))
    r.step([&] {
      LoopRV outer = s.get_loops(b).front();
      if (r.chance(0.5))
        s.split(outer, {-1, 2 + r.below(3)});
      else if (r.extent(outer) > 1)
        r.tile(outer, 2, 4);
    });
  if (r.chance(0.3)) {
    std::vector<LoopRV> l = s.get_loops(b);
    if (l.size() >= 2 && loop_is_spatial(s, b, l[0]) && loop_is_spatial(s, b, l[1]))
      r.step([&] { s.fuse({l[0], l[1]}); });
  }
  for (BlockRV copy : copies) {
    std::vector<LoopRV> l = s.get_loops(copy);
    if (l.empty()) continue;
    if (r.chance(0.3)) r.step([&] { s.vectorize(l.back()); });
    if (r.chance(0.3)) r.step([&] { s.unroll(l[size_t(r.below(int64_t(l.size())))]); });
  }
}

void random_loop_kinds(RandomSchedule& r, BlockRV b) {
  Schedule& s = r.sch;
  if (r.chance(0.4) && r.block(b).is_reduction()) {
    std::vector<LoopRV> l = s.get_loops(b);
    size_t first_reduce = outer_spatial_loops(r, b).size();
    if (first_reduce < l.size())
      r.step([&] { s.decompose_reduction(b, l[size_t(r.below(int64_t(first_reduce) + 1))]); });
  }
  std::vector<LoopRV> l = s.get_loops(b);
  if (r.chance(0.5) && loop_is_spatial(s, b, l.front())) r.step([&] { s.parallel(l.front()); });
  if (r.chance(0.5) && loop_is_spatial(s, b, l.back())) r.step([&] { s.vectorize(l.back()); });
  if (r.chance(0.4)) r.step([&] { s.unroll(l[size_t(r.below(int64_t(l.size())))]); });
  if (r.chance(0.2)) r.step([&] { s.annotate(b, "pragma_auto_unroll_max_step", 16); });
}

// Moves `block` (with what was computed at its loops) under a sampled loop of its consumer.
void random_compute_at(RandomSchedule& r, BlockRV block) {
  r.step([&] {
    if (std::optional<LoopRV> at = r.sch.sample_compute_location(block)) r.sch.compute_at(block, *at);
  });
}

void random_cpu_schedule(RandomSchedule& r, Workload w) {
  BlockRV b = r.sch.get_block(main_block(w));
  random_tiling(r, b);
  bool factored = r.chance(0.2);
  BlockRV rf = b;
  if (factored) random_rfactor(r, rf);
  std::vector<BlockRV> copies = random_caches(r, rf);
  random_after_caches(r, rf, copies);
  // The partial sums (or the fused conv itself) under their consumer's loops.
  if (factored && r.chance(0.6)) random_compute_at(r, rf);
  if (w == Workload::kFusedConv && r.chance(0.7)) random_compute_at(r, rf);
  random_loop_kinds(r, rf);
  if (factored && r.chance(0.5)) r.step([&] { r.sch.decompose_reduction(b, r.sch.get_loops(b).front()); });
}

// ---- GPU-style

struct GpuLoops {
  LoopRV by, bx, ty, tx, ko, ki;
  std::vector<LoopRV> rest;  // spatial loops left serial inside the threads (conv rows)
};

// Tiles the output into blockIdx.y/x x threadIdx.y/x and the reduction into
// ko x ki; cooperative puts ko outside the thread loops (so that the threads
// can share the copies), else inside them.
GpuLoops tile_for_gpu(RandomSchedule& r, Workload w, BlockRV b, bool cooperative) {
  Schedule& s = r.sch;
  std::vector<LoopRV> l = s.get_loops(b);
  GpuLoops g;
  LoopRV y, x, k;
  if (w == Workload::kMatmul) {
    y = l[0], x = l[1], k = l[2];
  } else {  // n and channels as y; the columns (or rows and columns) as x; all filter taps as k
    y = s.fuse({l[0], l[1]});
    if (r.chance(0.5) && !cooperative) {
      x = s.fuse({l[2], l[3]});
    } else {
      x = l[3];
      g.rest.push_back(l[2]);
    }
    k = s.fuse({l[4], l[5], l[6]});
  }
  std::vector<LoopRV> ys = r.tile(y, 2, 8), xs = r.tile(x, 2, 8), ks = r.tile(k, 2, 4);
  g.by = ys[0], g.ty = ys[1], g.bx = xs[0], g.tx = xs[1], g.ko = ks[0], g.ki = ks[1];
  std::vector<LoopRV> order = {g.by, g.bx};
  if (cooperative) order.push_back(g.ko);
  order.push_back(g.ty);
  order.push_back(g.tx);
  order.insert(order.end(), g.rest.begin(), g.rest.end());
  if (!cooperative) order.push_back(g.ko);
  order.push_back(g.ki);
  s.reorder(order);
  s.bind(g.by, "blockIdx.y");
  s.bind(g.bx, "blockIdx.x");
  s.bind(g.ty, "threadIdx.y");
  s.bind(g.tx, "threadIdx.x");
  return g;
}

// The copy's own loops below `ko`, fused and split over the thread block's
// threads (threadIdx.y x threadIdx.x), which then fetch the tile together.
void cooperative_fetch(RandomSchedule& r, BlockRV copy, const GpuLoops& g) {
  Schedule& s = r.sch;
  std::vector<LoopRV> loops = s.get_loops(copy), own;
  const tir::VarNode* ko = s.loop(g.ko).var.get();
  bool below = false;
  for (LoopRV l : loops) {
    if (below) own.push_back(l);
    below = below || s.loop(l).var.get() == ko;
  }
  if (own.empty()) return;  // a single element (tiles of 1): nothing to share out
  LoopRV fused = own.size() > 1 ? s.fuse(own) : own[0];
  std::vector<LoopRV> parts = s.split(fused, {-1, r.extent(g.ty), r.extent(g.tx)});
  s.bind(parts[1], "threadIdx.y");
  s.bind(parts[2], "threadIdx.x");
}

void random_gpu_schedule(RandomSchedule& r, Workload w) {
  Schedule& s = r.sch;
  BlockRV b = s.get_block(main_block(w));
  // cooperative: ko outside the thread loops and the threads share the fetch;
  // shared_inside: ko inside them (TVM's layout) and the fetch loops bound to
  // the same thread tags again, so that the threads still fetch together.
  bool cooperative = r.chance(0.4);
  bool shared_inside = !cooperative && r.chance(0.5);
  GpuLoops g;
  if (!r.step([&] { g = tile_for_gpu(r, w, b, cooperative); })) return;
  // A per-thread accumulator, written back by each thread after its reduction.
  if (!cooperative && r.chance(0.7))
    r.step([&] {
      BlockRV back = s.cache_write(b, 0, tir::MemScope::kLocal);
      s.reverse_compute_at(back, g.tx);
    });
  for (int read : r.input_reads(b)) {
    if (!r.chance(0.85)) continue;
    BlockRV copy;
    if (!r.step([&] {
          copy = s.cache_read(b, read, tir::MemScope::kShared);
          s.compute_at(copy, g.ko);
        }))
      continue;
    if (cooperative || shared_inside) r.step([&] { cooperative_fetch(r, copy, g); });
    if (r.chance(0.3)) r.step([&] { s.storage_align(copy, 0, r.write_rank(copy) - 2, 8, 1); });
  }
  if (r.chance(0.5)) r.step([&] { s.decompose_reduction(b, g.ko); });
  if (r.chance(0.3)) r.step([&] { s.unroll(g.ki); });
}

// ---- The runs

enum class Style { kCpu, kGpu };

struct RunResult {
  int schedules = 0;
  StepStats stats;
  int mutated = 0, mutated_rejected = 0;  // replays with one tile decision changed
};

// The trace with one sampled tiling (chosen by seed) replaced by another of
// the same loop, as the tuner mutates; none when the trace samples no tile
// with an alternative.
std::optional<sched::Trace> mutate_one_tile(const sched::Trace& trace, uint64_t seed) {
  std::vector<size_t> samples;
  for (size_t i = 0; i < trace.size(); ++i)
    if (trace.instructions()[i].kind == "sample_perfect_tile") samples.push_back(i);
  if (samples.empty()) return std::nullopt;
  std::mt19937_64 rng(seed);
  const sched::Instruction& inst = trace.instructions()[samples[sched::uniform_below(rng, samples.size())]];
  int64_t extent = 1;
  for (int64_t f : *inst.decision) extent *= f;
  std::vector<std::vector<int64_t>> others;
  for (const std::vector<int64_t>& t : sched::perfect_tilings(
           extent, int(inst.decision->size()), std::get<int64_t>(inst.attrs.at("max_innermost"))))
    if (t != *inst.decision) others.push_back(t);
  if (others.empty()) return std::nullopt;
  size_t index = size_t(&inst - trace.instructions().data());
  return trace.with_decision(index, others[sched::uniform_below(rng, others.size())]);
}

bool uses_shared_memory(const tir::PrimFunc& f) {
  for (const tir::Buffer& b : sched::root_block(f)->alloc_buffers)
    if (b->scope == tir::MemScope::kShared) return true;
  return false;
}

int barrier_count(const tir::PrimFunc& f) {
  int n = 0;
  tir::walk(f->body, [&](const tir::Stmt& s) {
    n += s->kind == tir::StmtKind::kBarrier;
    return true;
  });
  return n;
}

// For a failing schedule: the first instruction after which the function no
// longer computes the reference, with the function before and after it.
std::string first_bad_step(Workload w, Style style, const sched::Trace& trace, const Reference& ref) {
  sched::Trace prefix;
  tir::PrimFunc before = lower_workload(w, Shapes::small());
  for (const sched::Instruction& inst : trace.instructions()) {
    prefix.append(inst);
    Schedule fresh(lower_workload(w, Shapes::small()));
    prefix.apply(fresh);
    tir::PrimFunc f = style == Style::kGpu ? tir_passes::insert_barriers(fresh.func()) : fresh.func();
    std::string problem = check_against(ref, f, style == Style::kGpu, kAllOrders);
    if (problem.empty()) {
      before = fresh.func();
      continue;
    }
    std::ostringstream out;
    out << "first bad step: instruction " << prefix.size() - 1 << " (" << inst.kind << "): " << problem
        << "\nbefore it:\n"
        << before << "\nafter it:\n"
        << fresh.func();
    return out.str();
  }
  return "every prefix computes the reference";
}

// Schedules a fresh small lowering of w with `seed`, checks it and its replay;
// on failure the message carries the seed and the trace to reproduce it.
void run_one(Workload w, Style style, uint64_t seed, const Reference& ref, RunResult& result) {
  Schedule sch(lower_workload(w, Shapes::small()), seed);
  RandomSchedule r(sch, seed * 7919 + 1, result.stats);
  if (style == Style::kCpu)
    random_cpu_schedule(r, w);
  else
    random_gpu_schedule(r, w);
  ++result.schedules;
  std::string json = sch.trace().to_json();
  std::string repro = std::string(workload_name(w)) + (style == Style::kCpu ? " cpu" : " gpu") + " seed " +
                      std::to_string(seed) + "\ntrace " + json + "\n";
  tir::PrimFunc scheduled = style == Style::kGpu ? tir_passes::insert_barriers(sch.func()) : sch.func();
  if (style == Style::kGpu && uses_shared_memory(sch.func())) {
    EXPECT_GT(barrier_count(scheduled), 0) << "no barrier around the shared copies\n" << repro << scheduled;
  }
  std::string problem = check_against(ref, scheduled, style == Style::kGpu, kAllOrders);
  if (!problem.empty()) {
    ADD_FAILURE() << problem << "\n" << repro << first_bad_step(w, style, sch.trace(), ref);
    return;
  }
  // The first lowering pass after scheduling keeps the result.
  tir::PrimFunc flat = tir_passes::flatten_blocks(scheduled);
  problem = check_against(ref, flat, style == Style::kGpu, kAllOrders);
  if (!problem.empty()) {
    ADD_FAILURE() << "after flatten_blocks: " << problem << "\n" << repro << scheduled << "\n" << flat;
    return;
  }
  tir::PrimFunc compact = tir_passes::compact_buffers(flat);
  problem = check_against(ref, compact, style == Style::kGpu, kAllOrders);
  if (!problem.empty()) {
    ADD_FAILURE() << "after compact_buffers: " << problem << "\n" << repro << flat << "\n" << compact;
    return;
  }
  Schedule fresh(lower_workload(w, Shapes::small()));
  try {
    sched::Trace::from_json(json).apply(fresh);
  } catch (const ScheduleError& e) {
    ADD_FAILURE() << "replay failed: " << e.what() << "\n" << repro;
    return;
  }
  EXPECT_TRUE(tir::structural_equal(fresh.func(), sch.func())) << "replay differs\n"
                                                               << repro << fresh.func() << "\nvs\n"
                                                               << sch.func();
  // A mutated decision: another correct function, or a ScheduleError (the tuner drops it).
  std::optional<sched::Trace> mutated = mutate_one_tile(sch.trace(), seed);
  if (!mutated) return;
  ++result.mutated;
  Schedule other(lower_workload(w, Shapes::small()));
  try {
    mutated->apply(other);
  } catch (const ScheduleError&) {  // e.g. replay.output_mismatch: another loop count
    ++result.mutated_rejected;
    return;
  }
  tir::PrimFunc f = style == Style::kGpu ? tir_passes::insert_barriers(other.func()) : other.func();
  std::string mutated_problem = check_against(ref, f, style == Style::kGpu, kAllOrders);
  if (!mutated_problem.empty())
    ADD_FAILURE() << "mutated replay: " << mutated_problem << "\n"
                  << repro << "mutated trace " << mutated->to_json() << "\n"
                  << first_bad_step(w, style, *mutated, ref);
}

RunResult run_many(Style style, const std::vector<Workload>& workloads, int64_t per_workload,
                   uint64_t first_seed) {
  RunResult result;
  for (Workload w : workloads) {
    Reference ref = reference_of(lower_workload(w, Shapes::small()));
    for (int i = 0; i < per_workload && !::testing::Test::HasFailure(); ++i)
      run_one(w, style, first_seed + uint64_t(i), ref, result);
  }
  return result;
}

TEST(SchedRandom, CpuSchedulesOnMatmulAndConv) {
  const int64_t per_workload = test_support::sweep_samples(100);
  RunResult run = run_many(Style::kCpu, {Workload::kMatmul, Workload::kConv2d}, per_workload, 1000);
  if (!HasFailure()) {
    EXPECT_EQ(run.schedules, 2 * per_workload);
  }
  EXPECT_GE(run.stats.applied, run.stats.attempted * 7 / 10) << run.stats.summary();
  std::cout << "[ cpu ] " << run.schedules << " schedules, " << run.stats.summary() << "; " << run.mutated
            << " mutated replays, " << run.mutated_rejected << " rejected\n";
}

// The conv with its bias+relu epilogue: the conv (and its copies) computed at
// sampled loops of the epilogue.
TEST(SchedRandom, CpuSchedulesOnTheFusedConv) {
  const int64_t per_workload = test_support::sweep_samples(50);
  RunResult run = run_many(Style::kCpu, {Workload::kFusedConv}, per_workload, 3000);
  if (!HasFailure()) {
    EXPECT_EQ(run.schedules, per_workload);
  }
  EXPECT_GE(run.stats.applied, run.stats.attempted * 7 / 10) << run.stats.summary();
  std::cout << "[ cpu ] " << run.schedules << " schedules, " << run.stats.summary() << "; " << run.mutated
            << " mutated replays, " << run.mutated_rejected << " rejected\n";
}

TEST(SchedRandom, GpuSchedulesOnMatmulAndConv) {
  const int64_t per_workload = test_support::sweep_samples(100);
  RunResult run = run_many(Style::kGpu, {Workload::kMatmul, Workload::kConv2d}, per_workload, 5000);
  if (!HasFailure()) {
    EXPECT_EQ(run.schedules, 2 * per_workload);
  }
  EXPECT_GE(run.stats.applied, run.stats.attempted * 7 / 10) << run.stats.summary();
  std::cout << "[ gpu ] " << run.schedules << " schedules, " << run.stats.summary() << "; " << run.mutated
            << " mutated replays, " << run.mutated_rejected << " rejected\n";
}

}  // namespace
}  // namespace tessel::sched_workloads
