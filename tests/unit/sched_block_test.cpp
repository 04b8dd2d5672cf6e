// Tests of cache_read, cache_write and storage_align, alone and followed by
// compute_at: the result interprets like the original; illegal requests fail.
#include "tests/unit/sched_block_test_util.h"

namespace tessel::block_test {
namespace {

using sched::cache_read;
using sched::cache_write;
using sched::compute_at;
using sched::storage_align;

const BlockNode& root_of(const PrimFunc& func) {
  return *sched::root_block(func);
}

bool reads_buffer(const BlockNode& b, const std::string& name) {
  for (const BufferRegion& r : b.reads)
    if (r.buffer->name == name) return true;
  return false;
}

TEST(SchedBlockCache, CacheReadOfAnInputGoesFirstAndRedirectsTheConsumer) {
  PrimFunc f = make_two_stage(6, 5, 4);
  sched::PrimitiveResult r = cache_read(f, "C", read_index(f, "C", "W"), MemScope::kShared);
  EXPECT_EQ(r.new_block, "W_shared");
  const BlockNode& copy = block_of(r.func, "W_shared");
  EXPECT_EQ(copy.writes[0].buffer->scope, MemScope::kShared);
  EXPECT_EQ(sched::root_item(r.func, &copy), 0);
  EXPECT_TRUE(reads_buffer(block_of(r.func, "C"), "W_shared"));
  EXPECT_FALSE(reads_buffer(block_of(r.func, "C"), "W"));
  EXPECT_EQ(root_of(r.func).alloc_buffers.back()->name, "W_shared");
  expect_equivalent(f, r.func);
}

TEST(SchedBlockCache, CacheReadOfAnIntermediateGoesAfterItsProducer) {
  PrimFunc f = make_two_stage(6, 5, 4);
  sched::PrimitiveResult r = cache_read(f, "C", read_index(f, "C", "B"), MemScope::kLocal);
  EXPECT_EQ(sched::root_item(r.func, &block_of(r.func, "B_local")), 1);
  expect_equivalent(f, r.func);
}

TEST(SchedBlockCache, CacheReadRewritesOnlyTheGivenConsumer) {
  PrimFunc f = make_softmax(3, 7);
  sched::PrimitiveResult r = cache_read(f, "sm", read_index(f, "sm", "X"), MemScope::kShared);
  EXPECT_TRUE(reads_buffer(block_of(r.func, "sm"), "X_shared"));
  EXPECT_TRUE(reads_buffer(block_of(r.func, "mx"), "X"));
  EXPECT_TRUE(reads_buffer(block_of(r.func, "out"), "X"));
  expect_equivalent(f, r.func, 1e-6);
  // A second copy for another consumer gets its own name.
  sched::PrimitiveResult again = cache_read(r.func, "out", read_index(r.func, "out", "X"), MemScope::kShared);
  EXPECT_EQ(again.new_block, "X_shared_1");
  EXPECT_TRUE(reads_buffer(block_of(again.func, "out"), "X_shared_1"));
  expect_equivalent(f, again.func, 1e-6);
}

TEST(SchedBlockCache, CacheReadToSharedThenComputeAtUnderTheConsumerLoop) {
  PrimFunc f = make_two_stage(6, 5, 4);
  sched::PrimitiveResult r = cache_read(f, "C", read_index(f, "C", "W"), MemScope::kShared);
  std::vector<const VarNode*> c_loops = loops_of(r.func, "C");
  PrimFunc g = compute_at(r.func, "W_shared", c_loops[1]);
  // W[0:K, j] below loop j: one loop over k; the column is the loop variable itself.
  std::vector<const VarNode*> w_loops = loops_of(g, "W_shared");
  ASSERT_EQ(w_loops.size(), 3u);
  EXPECT_EQ(w_loops[1], c_loops[1]);
  Stmt w_loop = sched::find_loop(g, w_loops[2]);
  EXPECT_TRUE(is_const_int(w_loop.as<ForNode>()->extent, 4));
  expect_equivalent(f, g);
  // And the intermediate's copy, computed under the same loop together with its producer.
  sched::PrimitiveResult b = cache_read(g, "C", read_index(g, "C", "B"), MemScope::kLocal);
  PrimFunc h = compute_at(b.func, "B_local", c_loops[1]);
  h = compute_at(h, "B", c_loops[1]);
  expect_equivalent(f, h);
}

TEST(SchedBlockCache, SharedCopyPerThreadBlock) {
  PrimFunc f = make_two_stage(6, 5, 4);
  sched::SplitResult s = sched::split(f, loops_of(f, "C")[0], {2, 3}, true);
  PrimFunc g = sched::bind(s.func, s.loops[0].get(), "blockIdx.x");
  g = sched::bind(g, s.loops[1].get(), "threadIdx.x");
  sched::PrimitiveResult r = cache_read(g, "C", read_index(g, "C", "B"), MemScope::kShared);
  PrimFunc h = compute_at(r.func, "B_shared", s.loops[0].get());
  // The rows of B this thread block reads: three, copied before the threads run.
  EXPECT_EQ(loops_of(h, "B_shared").size(), 3u);
  VerifyOptions gpu;
  gpu.allow_thread_bindings = true;
  expect_equivalent(f, h, 0, gpu);
}

TEST(SchedBlockCache, CacheReadRejections) {
  PrimFunc f = make_two_stage(6, 5, 4);
  expect_error([&] { cache_read(f, "nope", 0, MemScope::kShared); }, "cache_read.no_block",
               "no block named 'nope'");
  expect_error([&] { cache_read(f, "C", 7, MemScope::kShared); }, "cache_read.bad_index",
               "index 7 is out of range");
  expect_error([&] { cache_read(f, "C", read_index(f, "C", "C"), MemScope::kShared); },
               "cache_read.reads_own_output", "use cache_write");
  PrimFunc at = compute_at(f, "B", loops_of(f, "C")[0]);
  expect_error([&] { cache_read(at, "C", read_index(at, "C", "B"), MemScope::kShared); },
               "cache_read.producer_in_consumer_nest", "before compute_at");
}

TEST(SchedBlockCache, CacheWriteRedirectsTheReductionAndCopiesBack) {
  PrimFunc f = make_two_stage(6, 5, 4);
  sched::PrimitiveResult r = cache_write(f, "C", 0, MemScope::kLocal);
  EXPECT_EQ(r.new_block, "C_local");
  const BlockNode& c = block_of(r.func, "C");
  EXPECT_EQ(c.writes[0].buffer->name, "C_local");
  EXPECT_TRUE(reads_buffer(c, "C_local"));
  EXPECT_FALSE(reads_buffer(c, "C"));
  const BlockNode& copy = block_of(r.func, "C_local");
  EXPECT_EQ(copy.writes[0].buffer->name, "C");
  EXPECT_EQ(sched::root_item(r.func, &copy), sched::root_item(r.func, &c) + 1);
  expect_equivalent(f, r.func);
}

TEST(SchedBlockCache, CacheWriteOfAnIntermediate) {
  PrimFunc f = make_softmax(3, 7);
  sched::PrimitiveResult r = cache_write(f, "mx", 0, MemScope::kShared);
  EXPECT_TRUE(reads_buffer(block_of(r.func, "sm"), "mx"));
  expect_equivalent(f, r.func, 1e-6);
}

TEST(SchedBlockCache, CacheWriteRejections) {
  PrimFunc f = make_two_stage(6, 5, 4);
  expect_error([&] { cache_write(f, "C", 1, MemScope::kLocal); }, "cache_write.bad_index",
               "index 1 is out of range");
  PrimFunc decomposed = sched::decompose_reduction(f, "C", loops_of(f, "C")[0]).func;
  expect_error([&] { cache_write(decomposed, "C", 0, MemScope::kLocal); }, "cache_write.multiple_writers",
               "written by 2 blocks");
  PrimFunc at = compute_at(f, "B", loops_of(f, "C")[0]);
  expect_error([&] { cache_write(at, "B", 0, MemScope::kLocal); }, "cache_write.consumer_in_nest",
               "block 'C' reads 'B'");
}

TEST(SchedBlockStorageAlign, PadsTheStrideOfOneAxis) {
  PrimFunc f = make_two_stage(6, 5, 4);
  PrimFunc g = storage_align(f, "B", 0, 0, 8, 1);
  const Buffer& b = block_of(g, "B").writes[0].buffer;
  EXPECT_EQ(b->strides, (std::vector<int64_t>{9, 1}));
  EXPECT_EQ(root_of(g).alloc_buffers[0].get(), b.get());
  EXPECT_EQ(block_of(g, "C").reads[1].buffer.get(), b.get());
  expect_equivalent(f, g);
  // A shared cache of it, aligned on its inner axis too.
  sched::PrimitiveResult r = cache_read(f, "C", read_index(f, "C", "B"), MemScope::kShared);
  PrimFunc h = storage_align(r.func, "B_shared", 0, 1, 2, 0);
  EXPECT_EQ(block_of(h, "B_shared").writes[0].buffer->strides, (std::vector<int64_t>{8, 2}));
  expect_equivalent(f, h);
}

TEST(SchedBlockStorageAlign, Rejections) {
  PrimFunc f = make_two_stage(6, 5, 4);
  expect_error([&] { storage_align(f, "C", 0, 0, 8, 1); }, "storage_align.not_intermediate",
               "function parameter");
  expect_error([&] { storage_align(f, "B", 0, 2, 8, 1); }, "storage_align.bad_axis", "axis 2");
  expect_error([&] { storage_align(f, "B", 0, 0, 8, 8); }, "storage_align.bad_factor", "offset 8");
  expect_error([&] { storage_align(f, "B", 3, 0, 8, 1); }, "storage_align.bad_index", "index 3");
}

}  // namespace
}  // namespace tessel::block_test

namespace tessel::block_test {
namespace {

// Every request each primitive accepts on these functions computes the same;
// the others fail with a ScheduleError (never another exception).
TEST(SchedBlockAll, EveryAcceptedRequestComputesTheSame) {
  PrimFunc conv = make_conv(5, 4), two = make_two_stage(6, 5, 4);
  std::vector<PrimFunc> cases = {two,
                                 conv,
                                 make_softmax(3, 4),
                                 make_matmul_relu(3, 4, 4),
                                 make_reversed(4),
                                 sched::split(two, loops_of(two, "C")[2], {2, 2}, true).func,
                                 compute_at(conv, "pad", loops_of(conv, "Y")[0])};
  int accepted = 0;
  auto attempt = [&](const PrimFunc& f, const std::function<PrimFunc()>& apply) {
    try {
      PrimFunc g = apply();
      expect_equivalent(f, g, 1e-5);
      ++accepted;
    } catch (const ScheduleError&) {
    }
  };
  for (const PrimFunc& f : cases) {
    for (const Stmt& s : sched::all_blocks(f)) {
      const BlockNode& b = *s.as<BlockNode>();
      std::string name = b.name;
      attempt(f, [&] { return sched::compute_inline(f, name); });
      attempt(f, [&] { return sched::reverse_compute_inline(f, name); });
      for (int i = 0; i < int(b.reads.size()); ++i)
        attempt(f, [&] { return cache_read(f, name, i, MemScope::kShared).func; });
      for (int i = 0; i < int(b.writes.size()); ++i) {
        attempt(f, [&] { return cache_write(f, name, i, MemScope::kLocal).func; });
        attempt(f, [&] { return storage_align(f, name, i, 0, 4, 1); });
      }
      for (const VarNode* loop : loops_of(f, name)) {
        attempt(f, [&] { return sched::decompose_reduction(f, name, loop).func; });
        for (int axis = 0; axis < 3; ++axis) attempt(f, [&] { return sched::rfactor(f, loop, axis).func; });
      }
    }
  }
  EXPECT_GE(accepted, 40);
}

}  // namespace
}  // namespace tessel::block_test

namespace tessel::block_test {
namespace {

// The usual tiled-matmul schedule: 4x4 tiles of C, accumulated in a local
// cache, A and B tiles staged in shared memory per step of k, init split out.
TEST(SchedBlockAll, TiledMatmulPipeline) {
  PrimFunc f = make_matmul_func(8, 8, 8);
  std::vector<const VarNode*> c = loops_of(f, "C");
  sched::SplitResult si = sched::split(f, c[0], {2, 4}, true);
  sched::SplitResult sj = sched::split(si.func, c[1], {2, 4}, true);
  sched::SplitResult sk = sched::split(sj.func, c[2], {2, 4}, true);
  const VarNode *i0 = si.loops[0].get(), *i1 = si.loops[1].get(), *j0 = sj.loops[0].get(),
                *j1 = sj.loops[1].get();
  const VarNode *k0 = sk.loops[0].get(), *k1 = sk.loops[1].get();
  PrimFunc g = sched::reorder(sk.func, {i0, j0, k0, i1, j1, k1});
  sched::PrimitiveResult local = cache_write(g, "C", 0, MemScope::kLocal);
  g = sched::reverse_compute_at(local.func, local.new_block, j0);
  sched::PrimitiveResult a = cache_read(g, "C", read_index(g, "C", "A"), MemScope::kShared);
  g = compute_at(a.func, a.new_block, k0);
  sched::PrimitiveResult b = cache_read(g, "C", read_index(g, "C", "B"), MemScope::kShared);
  g = compute_at(b.func, b.new_block, k0);
  // Each shared tile is 4x4: two loops below k0.
  EXPECT_EQ(loops_of(g, "A_shared").size(), 5u);
  EXPECT_EQ(loops_of(g, "B_shared").size(), 5u);
  g = sched::decompose_reduction(g, "C", k0).func;
  EXPECT_EQ(loops_of(g, "C_init").size(), 4u);
  expect_equivalent(f, g);
}

}  // namespace
}  // namespace tessel::block_test
