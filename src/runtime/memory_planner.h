// Static arena planning for the intermediates of an execution plan: buffers
// whose live ranges overlap get disjoint bytes, the others may share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessel::rt {

constexpr uint64_t kArenaAlignment = 64;

// Live from the start of first_step to the end of last_step (inclusive).
struct BufferLifetime {
  uint64_t bytes = 0;
  size_t first_step = 0;
  size_t last_step = 0;
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per buffer, kArenaAlignment-aligned
  uint64_t peak_bytes = 0;        // the arena's size
  uint64_t naive_bytes = 0;       // every buffer in its own aligned bytes, for reports
};

// Greedy by size, best fit (as TFLite's arena planner): the largest buffers
// are placed first, each into the smallest gap between the buffers already
// placed whose lives overlap its own. Throws std::invalid_argument on a
// lifetime with last_step < first_step, std::overflow_error on sizes near 2^64.
MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers);

}  // namespace tessel::rt
