// The runtime's thread pool: persistent workers that split a loop [0, n) into
// one contiguous chunk per thread, the caller running chunk 0. Generated
// kernels reach the process-wide pool through tessel_rt_parallel_for.
// More threads than cores are honoured: such a pool never spins, its threads
// block until woken, so a waiting thread never takes a core from a working one.
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
  // cores: the cores this process may run on (available_cores() when 0),
  // against which the pool decides whether waiting threads may spin.
  explicit ThreadPool(int num_threads, int cores = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  static constexpr int kMaxThreads = 1024;

  // The process-wide pool: TESSEL_NUM_THREADS at first use when valid
  // (threads_from_environment), else available_cores().
  static ThreadPool& global();

  // The CPUs of this process's affinity mask (at least 1).
  static int available_cores();

  // Polls a waiting thread makes before it blocks: kSpinIterations when every
  // thread can have a core of its own, 0 when threads > cores (a spinning
  // waiter would hold the core the thread it waits for needs).
  static int spin_budget(int threads, int cores);
  int spin_iterations() const { return spin_iterations_.load(std::memory_order_relaxed); }
  static constexpr int kSpinIterations = 40000;

  // Polls made so far by threads of this pool waiting to be woken or for a
  // loop's workers: always 0 for an oversubscribed pool.
  uint64_t spin_polls() const { return spin_polls_.load(std::memory_order_relaxed); }

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
  template <typename Done>
  void spin_until(Done done);

  std::mutex dispatch_mutex_;  // one loop at a time; held across a whole dispatch
  std::atomic<int> num_threads_{1};
  const int cores_;
  std::atomic<int> spin_iterations_{0};
  std::atomic<uint64_t> spin_polls_{0};
  std::vector<std::thread> workers_;

  // The current loop, written before generation_ is bumped.
  int64_t n_ = 0;
  tessel_rt_parallel_body body_ = nullptr;
  void* closure_ = nullptr;
  bool trace_ = false;  // the dispatching thread runs a traced run (tracer.h)
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

// TESSEL_NUM_THREADS: 0 when unset or empty, else its value, a whole number
// from 1 to ThreadPool::kMaxThreads; anything else (a sign, letters, 0, more
// than kMaxThreads) throws StatusError(TESSEL_ERR_INVALID_ARGUMENT) quoting it.
int threads_from_environment();
// The same check on a given value (nullptr: unset).
int parse_num_threads(const char* value);

}  // namespace tessel::rt
