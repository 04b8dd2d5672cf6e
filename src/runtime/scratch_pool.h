// Scratch memory for kernels: the buffers a kernel allocates for itself (a
// padded copy of its input, a packed panel, a partial result) that are too
// large for its stack. Generated code calls tessel_rt_scratch_alloc/free
// (src/runtime/kernel_abi.h) around each such buffer's extent.
//
// Freed blocks are kept per thread and handed out again, as TVM's workspace
// pool does: a model runs the same kernels with the same sizes on every run,
// and taking them from the C heap each time cost a page fault for every page
// the allocator had returned to the system in between.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessel::rt {

// A thread's cache of freed scratch blocks. Blocks are 64-byte aligned, their
// sizes rounded up to 64 and kept in a header before the data; a request takes
// the smallest cached block that fits and is at most twice its size, else a
// new one from the heap. A freed block is cached unless that would hold more
// than kMaxCachedBytes or kMaxCachedBlocks, in which case the oldest blocks go
// back to the heap (a block larger than kMaxCachedBytes goes back at once).
class ScratchPool {
 public:
  static constexpr uint64_t kAlignment = 64;
  static constexpr uint64_t kMaxCachedBytes = uint64_t(256) << 20;
  static constexpr size_t kMaxCachedBlocks = 64;

  ScratchPool() = default;
  ~ScratchPool();
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;

  void* allocate(uint64_t bytes);  // nullptr when the heap has no memory left
  void release(void* ptr);         // a block allocate returned, or nullptr
  void clear();                    // every cached block back to the heap

  uint64_t cached_bytes() const { return cached_bytes_; }
  size_t cached_blocks() const { return count_; }
  uint64_t heap_allocations() const { return heap_allocations_; }

  static ScratchPool& for_this_thread();

 private:
  struct Block {
    void* ptr;
    uint64_t bytes;
  };
  void drop_oldest();

  Block blocks_[kMaxCachedBlocks] = {};  // oldest first
  size_t count_ = 0;
  uint64_t cached_bytes_ = 0;
  uint64_t heap_allocations_ = 0;
};

}  // namespace tessel::rt
