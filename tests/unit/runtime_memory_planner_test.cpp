// The static arena planner: disjoint memory for overlapping lives, alignment,
// and reuse where lives do not overlap.
#include <gtest/gtest.h>

#include <random>

#include "src/runtime/memory_planner.h"

namespace tessel::rt {
namespace {

void expect_valid(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), buffers.size());
  EXPECT_LE(plan.peak_bytes, plan.naive_bytes);
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0u) << "buffer " << i;
    EXPECT_LE(plan.offsets[i] + buffers[i].bytes, plan.peak_bytes) << "buffer " << i;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const BufferLifetime &a = buffers[i], &b = buffers[j];
      bool live_together = a.first_step <= b.last_step && b.first_step <= a.last_step;
      bool share_bytes =
          plan.offsets[i] < plan.offsets[j] + b.bytes && plan.offsets[j] < plan.offsets[i] + a.bytes;
      if (a.bytes == 0 || b.bytes == 0 || !live_together) continue;
      EXPECT_FALSE(share_bytes) << "buffers " << i << " and " << j << " are live together and overlap";
    }
  }
}

TEST(RuntimeMemoryPlanner, RandomLifetimesNeverShareLiveBytes) {
  std::mt19937_64 rng(20261202);
  for (int trial = 0; trial < 200; ++trial) {
    size_t count = 1 + rng() % 40, steps = 1 + rng() % 30;
    std::vector<BufferLifetime> buffers;
    for (size_t i = 0; i < count; ++i) {
      size_t first = rng() % steps, last = first + rng() % (steps - first);
      uint64_t bytes = rng() % 4 == 0 ? rng() % 100 : rng() % 100000;
      buffers.push_back({bytes, first, last});
    }
    MemoryPlan plan = plan_memory(buffers);
    expect_valid(buffers, plan);
    uint64_t naive = 0;
    for (const BufferLifetime& b : buffers) naive += (b.bytes + 63) / 64 * 64;
    EXPECT_EQ(plan.naive_bytes, naive);
  }
}

TEST(RuntimeMemoryPlanner, ChainReusesMemory) {
  // a (step 0) -> b (step 1, reads a) -> c (step 2, reads b) -> d (step 3, reads c): a and c can share.
  std::vector<BufferLifetime> chain = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 3}};
  MemoryPlan plan = plan_memory(chain);
  expect_valid(chain, plan);
  EXPECT_LT(plan.peak_bytes, plan.naive_bytes);
  EXPECT_EQ(plan.peak_bytes, 2 * 1024u);
  EXPECT_EQ(plan.naive_bytes, 4 * 1024u);
}

TEST(RuntimeMemoryPlanner, BestFitPicksTheSmallestGap) {
  // Largest first: E (4096, step 0) at 0, L (2048, live throughout) at 4096, S (1024, step 0)
  // at 6144, M (1024, throughout) at 7168. X (512, steps 2..4) sees the holes E and S left,
  // [0, 4096) and [6144, 7168), and takes the smaller one; first fit would take offset 0.
  std::vector<BufferLifetime> buffers = {{4096, 0, 0}, {2048, 0, 4}, {1024, 0, 0}, {1024, 0, 4}, {512, 2, 4}};
  MemoryPlan plan = plan_memory(buffers);
  expect_valid(buffers, plan);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 4096u);
  EXPECT_EQ(plan.offsets[2], 6144u);
  EXPECT_EQ(plan.offsets[3], 7168u);
  EXPECT_EQ(plan.offsets[4], 6144u);
  EXPECT_EQ(plan.peak_bytes, 8192u);
}

TEST(RuntimeMemoryPlanner, EmptyAndZeroByteBuffers) {
  MemoryPlan none = plan_memory({});
  EXPECT_EQ(none.peak_bytes, 0u);
  MemoryPlan zero = plan_memory({{0, 0, 3}, {64, 1, 1}});
  EXPECT_EQ(zero.peak_bytes, 64u);
}

TEST(RuntimeMemoryPlanner, BadLifetimesAreRefused) {
  EXPECT_THROW(plan_memory({{8, 3, 2}}), std::invalid_argument);
  EXPECT_THROW(plan_memory({{~uint64_t(0), 0, 0}}), std::overflow_error);
}

}  // namespace
}  // namespace tessel::rt
