#include "src/runtime/scratch_pool.h"

#include <cstdlib>

#include "src/runtime/kernel_abi.h"

namespace tessel::rt {

namespace {
constexpr uint64_t kHeader = ScratchPool::kAlignment;  // holds the block's size, keeps the data aligned

uint64_t rounded(uint64_t bytes) {
  uint64_t r = (bytes + ScratchPool::kAlignment - 1) / ScratchPool::kAlignment * ScratchPool::kAlignment;
  return r == 0 ? ScratchPool::kAlignment : r;
}

void* block_data(void* block) {
  return static_cast<char*>(block) + kHeader;
}
void* block_of(void* data) {
  return static_cast<char*>(data) - kHeader;
}
uint64_t block_size(void* data) {
  return *static_cast<uint64_t*>(block_of(data));
}
}  // namespace

ScratchPool::~ScratchPool() {
  clear();
}

void* ScratchPool::allocate(uint64_t bytes) {
  if (bytes > UINT64_MAX / 2) return nullptr;
  uint64_t size = rounded(bytes);
  size_t best = count_;
  for (size_t i = 0; i < count_; ++i) {
    uint64_t b = blocks_[i].bytes;
    if (b >= size && b / 2 <= size && (best == count_ || b < blocks_[best].bytes)) best = i;
  }
  if (best == count_) {
    ++heap_allocations_;
    void* block = std::aligned_alloc(kAlignment, size + kHeader);
    if (block == nullptr) return nullptr;
    *static_cast<uint64_t*>(block) = size;
    return block_data(block);
  }
  void* ptr = blocks_[best].ptr;
  cached_bytes_ -= blocks_[best].bytes;
  for (size_t i = best + 1; i < count_; ++i) blocks_[i - 1] = blocks_[i];
  --count_;
  return ptr;
}

void ScratchPool::release(void* ptr) {
  if (ptr == nullptr) return;
  uint64_t size = block_size(ptr);
  if (size > kMaxCachedBytes) {
    std::free(block_of(ptr));
    return;
  }
  while (count_ > 0 && (count_ == kMaxCachedBlocks || cached_bytes_ + size > kMaxCachedBytes)) drop_oldest();
  blocks_[count_++] = {ptr, size};
  cached_bytes_ += size;
}

void ScratchPool::drop_oldest() {
  std::free(block_of(blocks_[0].ptr));
  cached_bytes_ -= blocks_[0].bytes;
  for (size_t i = 1; i < count_; ++i) blocks_[i - 1] = blocks_[i];
  --count_;
}

void ScratchPool::clear() {
  while (count_ > 0) drop_oldest();
}

ScratchPool& ScratchPool::for_this_thread() {
  thread_local ScratchPool pool;
  return pool;
}

}  // namespace tessel::rt

extern "C" void* tessel_rt_scratch_alloc(uint64_t bytes) {
  return tessel::rt::ScratchPool::for_this_thread().allocate(bytes);
}

extern "C" void tessel_rt_scratch_free(void* ptr) {
  tessel::rt::ScratchPool::for_this_thread().release(ptr);
}
