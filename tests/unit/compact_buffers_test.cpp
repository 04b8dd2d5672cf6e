// compact_buffers: caches shrink to their tiles and are allocated where the
// tile is computed; the result computes what the scheduled function computes
// (interpreter, every thread order) on every workload, hand CPU/GPU schedules
// and random ones.
#include "src/tir_passes/compact_buffers.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "src/tir_passes/flatten_blocks.h"
#include "src/tir_passes/insert_barriers.h"
#include "tests/unit/sched_workloads_util.h"

namespace tessel {
namespace {

using namespace sched_workloads;

// The shape of the allocation of the buffer named `name` ("" when none), and
// how many loops enclose it.
struct Allocation {
  std::vector<int64_t> shape;
  std::vector<std::string> loops_above;  // the loop variables' names, outermost first
};

std::optional<Allocation> find_allocation(const tir::PrimFunc& f, const std::string& name) {
  std::optional<Allocation> found;
  std::vector<std::string> loops;
  std::function<void(const tir::Stmt&)> visit = [&](const tir::Stmt& s) {
    if (!s.defined() || found) return;
    if (const auto* a = s.as<tir::AllocateNode>()) {
      if (a->buffer->name == name) {
        found = Allocation{a->buffer->shape, loops};
        return;
      }
      return visit(a->body);
    }
    if (const auto* l = s.as<tir::ForNode>()) {
      loops.push_back(l->var->name);
      visit(l->body);
      loops.pop_back();
      return;
    }
    if (const auto* n = s.as<tir::IfThenElseNode>()) {
      visit(n->then_case);
      return visit(n->else_case);
    }
    if (const auto* n = s.as<tir::SeqNode>())
      for (const tir::Stmt& c : n->stmts) visit(c);
  };
  visit(f->body);
  return found;
}

tir::PrimFunc flatten_and_compact(const tir::PrimFunc& scheduled, bool gpu) {
  return tir_passes::compact_buffers(tir_passes::flatten_blocks(gpu ? tir_passes::insert_barriers(scheduled) : scheduled));
}

void expect_compacted_equal(Workload w, const tir::PrimFunc& scheduled, bool gpu) {
  tir::PrimFunc compact = flatten_and_compact(scheduled, gpu);
  EXPECT_EQ(check_against(reference(w), compact, gpu, kAllOrders), "") << workload_name(w) << "\n" << compact;
}

TEST(CompactBuffers, EveryWorkloadUnscheduled) {
  for (Workload w : kAllWorkloads) expect_compacted_equal(w, lower_workload(w), false);
}

TEST(CompactBuffers, CpuLocalAccumulatorBecomesTheTile) {
  Schedule sch(lower_workload(Workload::kMatmul));  // [32, 24] x [24, 16]
  BlockRV mm = sch.get_block("mm");
  std::vector<LoopRV> l = sch.get_loops(mm);
  std::vector<LoopRV> i = sch.split(l[0], {8, 4});
  BlockRV cache = sch.cache_write(mm, 0, tir::MemScope::kLocal);
  sch.reverse_compute_at(cache, i[0]);
  sch.decompose_reduction(mm, l[2]);
  tir::PrimFunc compact = flatten_and_compact(sch.func(), false);
  std::optional<Allocation> acc = find_allocation(compact, "mm_out_local");
  ASSERT_TRUE(acc) << compact;
  EXPECT_EQ(acc->shape, (std::vector<int64_t>{4, 16})) << compact;
  EXPECT_EQ(acc->loops_above, std::vector<std::string>{"i0_0"}) << compact;
  std::string text = tir::to_string(compact);
  for (const char* line : {"  for i0_0 in 0..8:\n    alloc mm_out_local: f32[4, 16] local\n",
                           "mm_out_local[i0_1, i1] = mm_out_local[i0_1, i1] + A[i0_0 * 4 + i0_1, k2] * B[k2, i1]",
                           "mm_out[i0_0 * 4 + ax0, ax1] = mm_out_local[ax0, ax1]"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nnot in\n" << text;
  expect_compacted_equal(Workload::kMatmul, sch.func(), false);
}

// The 32 x 16 matmul on 4 x 2 thread blocks of 8 x 8 threads, one output per
// thread, the reduction split 4 x 6 (ko x ki); the shared copy of A computed
// at ko, its 8 x 6 elements fetched by the thread block's threads together.
Schedule gpu_matmul(bool ko_outside_threads) {
  Schedule sch(lower_workload(Workload::kMatmul));
  BlockRV mm = sch.get_block("mm");
  std::vector<LoopRV> l = sch.get_loops(mm);
  std::vector<LoopRV> y = sch.split(l[0], {4, 8}), x = sch.split(l[1], {2, 8}), k = sch.split(l[2], {4, 6});
  if (ko_outside_threads)
    sch.reorder({y[0], x[0], k[0], y[1], x[1], k[1]});
  else
    sch.reorder({y[0], x[0], y[1], x[1], k[0], k[1]});
  sch.bind(y[0], "blockIdx.y");
  sch.bind(x[0], "blockIdx.x");
  sch.bind(y[1], "threadIdx.y");
  sch.bind(x[1], "threadIdx.x");
  BlockRV a_shared = sch.cache_read(mm, 1, tir::MemScope::kShared);
  sch.compute_at(a_shared, k[0]);
  std::vector<LoopRV> own = sch.get_loops(a_shared);
  LoopRV fused = sch.fuse({own[own.size() - 2], own.back()});  // the 8 x 6 tile
  std::vector<LoopRV> parts = sch.split(fused, {-1, 8, 8});
  sch.bind(parts[1], "threadIdx.y");
  sch.bind(parts[2], "threadIdx.x");
  return sch;
}

TEST(CompactBuffers, GpuSharedTileInsideTheReductionLoopOutsideTheThreads) {
  Schedule sch = gpu_matmul(/*ko_outside_threads=*/true);
  tir::PrimFunc compact = flatten_and_compact(sch.func(), true);
  std::optional<Allocation> tile = find_allocation(compact, "A_shared");
  ASSERT_TRUE(tile) << compact;
  EXPECT_EQ(tile->shape, (std::vector<int64_t>{8, 6})) << compact;
  EXPECT_EQ(tile->loops_above, (std::vector<std::string>{"i0_0", "i1_0", "k2_0"})) << compact;
  expect_compacted_equal(Workload::kMatmul, sch.func(), true);
}

// ko inside the thread loops: the shared copy cannot follow it there (one copy
// per thread block): it is allocated above the threads, but holds one step's
// tile (the steps' tiles are disjoint), every thread's accesses in it.
TEST(CompactBuffers, GpuSharedTileRaisedAboveTheThreadLoops) {
  Schedule sch = gpu_matmul(/*ko_outside_threads=*/false);
  tir::PrimFunc compact = flatten_and_compact(sch.func(), true);
  std::optional<Allocation> tile = find_allocation(compact, "A_shared");
  ASSERT_TRUE(tile) << compact;
  EXPECT_EQ(tile->shape, (std::vector<int64_t>{8, 6})) << compact;
  EXPECT_EQ(tile->loops_above, (std::vector<std::string>{"i0_0", "i1_0"})) << compact;
  EXPECT_NE(tir::to_string(compact).find(
                "alloc A_shared: f32[8, 6] shared\n      for i0_1 in 0..8 thread_bound(threadIdx.y)"),
            std::string::npos)
      << compact;
  expect_compacted_equal(Workload::kMatmul, sch.func(), true);
}

// A per-thread accumulator: local buffers may sit inside the thread loops.
TEST(CompactBuffers, GpuLocalAccumulatorPerThread) {
  Schedule sch = gpu_matmul(/*ko_outside_threads=*/false);
  BlockRV mm = sch.get_block("mm");
  std::vector<LoopRV> l = sch.get_loops(mm);
  BlockRV back = sch.cache_write(mm, 0, tir::MemScope::kLocal);
  sch.reverse_compute_at(back, l[3]);  // threadIdx.x
  tir::PrimFunc compact = flatten_and_compact(sch.func(), true);
  std::optional<Allocation> acc = find_allocation(compact, "mm_out_local");
  ASSERT_TRUE(acc) << compact;
  EXPECT_EQ(acc->shape, (std::vector<int64_t>{1, 1})) << compact;
  EXPECT_EQ(acc->loops_above, (std::vector<std::string>{"i0_0", "i1_0", "i0_1", "i1_1"})) << compact;
  expect_compacted_equal(Workload::kMatmul, sch.func(), true);
}

// tmp[idx[i], i*4 + j]: the first index is read from memory and has no
// bound, so that dimension keeps its extent; the second shrinks to the 4
// columns of one iteration of i.
TEST(CompactBuffers, IndexWithoutConstantBoundKeepsTheFullExtent) {
  using namespace tir;
  Buffer x = make_buffer("x", DType::kF32, {4, 16});
  Buffer idx = make_buffer("idx", DType::kI64, {4});
  Buffer out = make_buffer("out", DType::kF32, {4, 4});
  Buffer tmp = make_buffer("tmp", DType::kF32, {4, 16});
  Var i = var("i"), j = var("j"), j2 = var("j2");
  Expr row = load(idx, {i});
  Stmt body = make_for(
      i, int_imm(0), int_imm(4), ForKind::kSerial,
      make_seq({make_for(j, int_imm(0), int_imm(4), ForKind::kSerial,
                         make_store(tmp, load(x, {i, i * 4 + j}), {row, i * 4 + j})),
                make_for(j2, int_imm(0), int_imm(4), ForKind::kSerial,
                         make_store(out, load(tmp, {row, i * 4 + j2}) * float_imm(2.0), {i, j2}))}));
  PrimFunc f = make_prim_func("gather", {x, idx}, {out}, make_allocate(tmp, body));
  PrimFunc compact = tir_passes::compact_buffers(f);
  std::optional<Allocation> t = find_allocation(compact, "tmp");
  ASSERT_TRUE(t) << compact;
  EXPECT_EQ(t->shape, (std::vector<int64_t>{4, 4})) << compact;
  EXPECT_EQ(t->loops_above, std::vector<std::string>{"i"}) << compact;
  EXPECT_NE(to_string(compact).find("tmp[idx[i], j] = x[i, i * 4 + j]"), std::string::npos) << compact;
  Tensor xs(DType::kF32, {4, 16}), is(DType::kI64, {4});
  for (int64_t k = 0; k < 64; ++k) xs.set_f64(k, double(k));
  for (int64_t k = 0; k < 4; ++k) is.set_f64(k, double((k * 3 + 1) % 4));
  std::vector<Tensor> want = interpret(f, {xs, is}), got;
  ASSERT_NO_THROW(got = interpret(compact, {xs, is}));
  EXPECT_EQ(compare_outputs(got, want), "");
}

// A triangular loop: the extent i + 1 is symbolic, its bound (8) is the full
// extent, so the dimension stays whole; the other one shrinks to one row.
TEST(CompactBuffers, SymbolicExtentUsesItsConstantBound) {
  using namespace tir;
  Buffer x = make_buffer("x", DType::kF32, {8, 8});
  Buffer out = make_buffer("out", DType::kF32, {8});
  Buffer tmp = make_buffer("tmp", DType::kF32, {8, 8});
  Var i = var("i"), j = var("j"), j2 = var("j2");
  Stmt body = make_for(
      i, int_imm(0), int_imm(8), ForKind::kSerial,
      make_seq({make_for(j, int_imm(0), i + 1, ForKind::kSerial, make_store(tmp, load(x, {i, j}), {i, j})),
                make_store(out, float_imm(0.0), {i}),
                make_for(j2, int_imm(0), i + 1, ForKind::kSerial,
                         make_store(out, load(out, {i}) + load(tmp, {i, j2}), {i}))}));
  PrimFunc f = make_prim_func("prefix", {x}, {out}, make_allocate(tmp, body));
  PrimFunc compact = tir_passes::compact_buffers(f);
  std::optional<Allocation> t = find_allocation(compact, "tmp");
  ASSERT_TRUE(t) << compact;
  EXPECT_EQ(t->shape, (std::vector<int64_t>{1, 8})) << compact;
  std::vector<Tensor> inputs = random_inputs(f, 3), got;
  ASSERT_NO_THROW(got = interpret(compact, inputs));
  EXPECT_EQ(compare_outputs(got, interpret(f, inputs)), "");
}

// A parallel loop over fused (channel tile, row) loops: f // 3 picks the tile
// of 2 channels, f % 3 the row. Each iteration's tmp region is disjoint from
// the others', so tmp moves into the loop as one tile of 2 x 1 x 4; with
// tiles of 2 channels that overlap (f // 3 * 1), it cannot.
tir::PrimFunc fused_tile_copy(int64_t channel_step) {
  using namespace tir;
  Buffer x = make_buffer("x", DType::kF32, {8, 3, 4});
  Buffer out = make_buffer("out", DType::kF32, {8, 3, 4});
  Buffer tmp = make_buffer("tmp", DType::kF32, {8, 3, 4});
  Var f = var("f"), c = var("c"), w = var("w"), c2 = var("c2"), w2 = var("w2");
  Expr channel = floordiv(f, 3) * channel_step, row = floormod(f, 3);
  auto tile = [&](const Var& cv, const Var& wv, Stmt s) {
    return make_for(cv, int_imm(0), int_imm(2), ForKind::kSerial, make_for(wv, int_imm(0), int_imm(4), ForKind::kSerial, s));
  };
  Stmt fill = tile(c, w, make_store(tmp, load(x, {channel + c, row, w}) + float_imm(1.0), {channel + c, row, w}));
  Stmt use = tile(c2, w2, make_store(out, load(tmp, {channel + c2, row, w2}) * float_imm(2.0), {channel + c2, row, w2}));
  int64_t tiles = channel_step == 2 ? 4 : 7;
  Stmt body = make_for(f, int_imm(0), int_imm(tiles * 3), ForKind::kParallel, make_seq({fill, use}));
  return make_prim_func("fused", {x}, {out}, make_allocate(tmp, body));
}

TEST(CompactBuffers, FusedParallelLoopOfDisjointTilesTakesTheAllocation) {
  tir::PrimFunc f = fused_tile_copy(2);
  tir::PrimFunc compact = tir_passes::compact_buffers(f);
  std::optional<Allocation> t = find_allocation(compact, "tmp");
  ASSERT_TRUE(t) << compact;
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 1, 4})) << compact;
  EXPECT_EQ(t->loops_above, std::vector<std::string>{"f"}) << compact;
  std::vector<Tensor> inputs = random_inputs(f, 5), got;
  ASSERT_NO_THROW(got = interpret(compact, inputs));
  EXPECT_EQ(compare_outputs(got, interpret(f, inputs)), "");
  std::optional<Allocation> overlapping = find_allocation(tir_passes::compact_buffers(fused_tile_copy(1)), "tmp");
  ASSERT_TRUE(overlapping);
  EXPECT_TRUE(overlapping->loops_above.empty()) << "tiles that overlap keep one allocation for all iterations";
}

TEST(CompactBuffers, UnusedBufferIsDropped) {
  using namespace tir;
  Buffer x = make_buffer("x", DType::kF32, {4});
  Buffer out = make_buffer("out", DType::kF32, {4});
  Buffer unused = make_buffer("unused", DType::kF32, {1024});
  Var i = var("i");
  Stmt body = make_for(i, int_imm(0), int_imm(4), ForKind::kSerial, make_store(out, load(x, {i}), {i}));
  PrimFunc compact = tir_passes::compact_buffers(make_prim_func("copy", {x}, {out}, make_allocate(unused, body)));
  EXPECT_FALSE(find_allocation(compact, "unused")) << compact;
}

}  // namespace
}  // namespace tessel
