// The runtime's thread pool: persistent workers that split a loop [0, n) into
// one contiguous chunk per thread, the caller running chunk 0. Generated
// kernels reach the process-wide pool through tessel_rt_parallel_for.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "src/runtime/kernel_abi.h"

namespace tessel::rt {

class ThreadPool {
 public:
  // num_threads counts the caller: 1 means no workers. Clamped to [1, kMaxThreads].
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  static constexpr int kMaxThreads = 1024;

  // The process-wide pool: TESSEL_NUM_THREADS at first use, else the machine's cores.
  static ThreadPool& global();

  // Runs body over [0, n); chunk i of num_threads() runs on thread i (0: the
  // caller). Runs inline, serially, when called from inside a pool's loop or
  // while another thread's loop occupies this pool. n <= 0 returns at once.
  void parallel_for(int64_t n, tessel_rt_parallel_body body, void* closure);

  template <typename F>
  void parallel_for(int64_t n, F&& f) {
    auto trampoline = [](int64_t begin, int64_t end, void* closure) {
      (*static_cast<F*>(closure))(begin, end);
    };
    parallel_for(n, +trampoline, static_cast<void*>(&f));
  }

  // Waits for a running loop, then replaces the workers.
  void set_num_threads(int num_threads);
  int num_threads() const { return num_threads_.load(std::memory_order_relaxed); }

  // The static chunk [begin, end) of thread `index` of `threads` over [0, n):
  // sizes differ by at most one, earlier chunks are the larger.
  static std::pair<int64_t, int64_t> chunk(int64_t n, int threads, int index);

 private:
  void start_workers(int num_threads);
  void stop_workers();
  void worker_main(int index, uint64_t start_generation);
  void run_chunk(int index);

  std::mutex dispatch_mutex_;  // one loop at a time; held across a whole dispatch
  std::atomic<int> num_threads_{1};
  std::vector<std::thread> workers_;

  // The current loop, written before generation_ is bumped.
  int64_t n_ = 0;
  tessel_rt_parallel_body body_ = nullptr;
  void* closure_ = nullptr;
  bool stop_ = false;

  std::atomic<uint64_t> generation_{0};
  std::atomic<int> remaining_{0};  // workers yet to finish the current loop
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  int sleepers_ = 0;  // guarded by wake_mutex_
  std::mutex done_mutex_;
  std::condition_variable done_;
};

// The global pool's thread count (tessel_set_num_threads / tessel_get_num_threads).
void set_num_threads(int num_threads);
int get_num_threads();

}  // namespace tessel::rt
