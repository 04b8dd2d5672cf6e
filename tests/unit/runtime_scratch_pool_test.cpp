// The scratch pool kernels take their large buffers from: blocks come back
// for the next request that fits them, aligned, within the pool's bounds.
#include "src/runtime/scratch_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "src/runtime/kernel_abi.h"

namespace tessel::rt {
namespace {

constexpr uint64_t kMiB = uint64_t(1) << 20;

TEST(ScratchPool, AFreedBlockServesTheNextRequestOfItsSize) {
  ScratchPool pool;
  void* a = pool.allocate(3 * kMiB + 5);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % ScratchPool::kAlignment, 0u);
  pool.release(a);
  EXPECT_EQ(pool.cached_blocks(), 1u);
  EXPECT_EQ(pool.allocate(3 * kMiB), a);  // rounds to the same 64-byte multiple or less
  EXPECT_EQ(pool.heap_allocations(), 1u);
  EXPECT_EQ(pool.cached_blocks(), 0u);
  pool.release(a);
}

TEST(ScratchPool, TakesTheSmallestFitAndNeverMoreThanTwiceTheRequest) {
  ScratchPool pool;
  void* big = pool.allocate(8 * kMiB);
  void* mid = pool.allocate(4 * kMiB);
  pool.release(big);
  pool.release(mid);
  void* small = pool.allocate(1 * kMiB);  // both blocks more than twice as large: a new one
  EXPECT_NE(small, big);
  EXPECT_NE(small, mid);
  EXPECT_EQ(pool.heap_allocations(), 3u);
  EXPECT_EQ(pool.allocate(3 * kMiB), mid);  // the 4 MiB block, not the 8 MiB one
  EXPECT_EQ(pool.allocate(5 * kMiB), big);
  EXPECT_EQ(pool.heap_allocations(), 3u);
  pool.release(small);
  pool.release(mid);
  pool.release(big);
  EXPECT_EQ(pool.cached_bytes(), 13 * kMiB);  // each block counted at its own size
}

TEST(ScratchPool, HoldsAtMostItsBoundsDroppingTheOldestFirst) {
  ScratchPool pool;
  std::vector<void*> blocks;
  for (size_t i = 0; i < ScratchPool::kMaxCachedBlocks + 3; ++i)
    blocks.push_back(pool.allocate(4096 + i * 64));
  for (size_t i = 0; i < blocks.size(); ++i) pool.release(blocks[i]);
  EXPECT_EQ(pool.cached_blocks(), ScratchPool::kMaxCachedBlocks);
  void* again = pool.allocate(4096);
  EXPECT_NE(again, blocks[0]);  // the three oldest went back to the heap
  pool.release(again);

  ScratchPool bytes;
  uint64_t half = ScratchPool::kMaxCachedBytes / 2 + kMiB;
  void* first = bytes.allocate(half);
  void* second = bytes.allocate(half);
  bytes.release(first);
  bytes.release(second);
  EXPECT_EQ(bytes.cached_blocks(), 1u);
  EXPECT_LE(bytes.cached_bytes(), ScratchPool::kMaxCachedBytes);
  void* huge = bytes.allocate(ScratchPool::kMaxCachedBytes + kMiB);
  bytes.release(huge);  // larger than the pool: freed
  EXPECT_EQ(bytes.cached_blocks(), 1u);
}

TEST(ScratchPool, ASizeNoHeapCouldServeIsNull) {
  ScratchPool pool;
  EXPECT_EQ(pool.allocate(UINT64_MAX - 10), nullptr);
  pool.release(nullptr);
  EXPECT_EQ(pool.cached_blocks(), 0u);
}

TEST(ScratchPool, EachThreadHasItsOwn) {
  void* mine = tessel_rt_scratch_alloc(kMiB);
  tessel_rt_scratch_free(mine);
  void* theirs = nullptr;
  std::thread([&] {
    theirs = tessel_rt_scratch_alloc(kMiB);
    tessel_rt_scratch_free(theirs);
  }).join();
  EXPECT_NE(theirs, mine);
  EXPECT_EQ(tessel_rt_scratch_alloc(kMiB), mine);
  tessel_rt_scratch_free(mine);
}

}  // namespace
}  // namespace tessel::rt
