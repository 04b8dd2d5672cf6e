// plan_memory: greedy-by-size best-fit placement of buffer lifetimes.
#include "src/runtime/memory_planner.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace tessel::rt {

namespace {

uint64_t checked_add(uint64_t a, uint64_t b) {
  if (a > std::numeric_limits<uint64_t>::max() - b)
    throw std::overflow_error("memory plan: arena size overflows 64 bits");
  return a + b;
}

uint64_t aligned_size(uint64_t bytes) {
  return checked_add(bytes, kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

bool lives_overlap(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

struct Placed {
  uint64_t offset;
  uint64_t end;
};

// The lowest offset of the smallest gap among `live` (sorted by offset) that
// holds `size` bytes, or the end of the highest one.
uint64_t best_fit(const std::vector<Placed>& live, uint64_t size) {
  uint64_t best = std::numeric_limits<uint64_t>::max(), best_gap = best, cursor = 0;
  for (const Placed& p : live) {
    if (p.offset >= cursor && p.offset - cursor >= size && p.offset - cursor < best_gap) {
      best_gap = p.offset - cursor;
      best = cursor;
    }
    cursor = std::max(cursor, p.end);
  }
  return best != std::numeric_limits<uint64_t>::max() ? best : cursor;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<uint64_t> sizes(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].last_step < buffers[i].first_step)
      throw std::invalid_argument("memory plan: buffer " + std::to_string(i) + " dies before it is born");
    sizes[i] = aligned_size(buffers[i].bytes);
    plan.naive_bytes = checked_add(plan.naive_bytes, sizes[i]);
  }
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    return buffers[a].first_step < buffers[b].first_step;
  });

  std::vector<size_t> placed;
  std::vector<Placed> live;
  for (size_t i : order) {
    if (sizes[i] == 0) continue;  // occupies nothing; offset 0 is as good as any
    live.clear();
    for (size_t j : placed)
      if (lives_overlap(buffers[i], buffers[j]))
        live.push_back({plan.offsets[j], plan.offsets[j] + sizes[j]});
    std::sort(live.begin(), live.end(), [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
    uint64_t offset = best_fit(live, sizes[i]);
    plan.offsets[i] = offset;
    plan.peak_bytes = std::max(plan.peak_bytes, checked_add(offset, sizes[i]));
    placed.push_back(i);
  }
  return plan;
}

}  // namespace tessel::rt
