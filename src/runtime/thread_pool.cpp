// ThreadPool: workers spin briefly on a generation counter, then sleep on a
// condition variable; the caller runs chunk 0 and waits for the rest the same way.
// An oversubscribed pool (threads > cores) skips the spin.
#include "src/runtime/thread_pool.h"

#include "src/runtime/tracer.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <system_error>

#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::rt {

namespace {

// Iterations a waiting thread polls before it blocks: a few hundred
// microseconds, so the loops of one model run (a kernel's padding stage, its
// reduction, its epilogue, the next kernel) never pay a futex wake-up, which
// costs tens of microseconds on a virtual machine (4000 iterations: SqueezeNet
// on 2 threads 14.6 ms; 40000: 10-13 ms; 1 thread: 17-24 ms on this VM).
// ThreadPool::kSpinIterations; spin_budget says when not to spin at all.

// True on pool workers, and on a caller while it runs its own chunk: a
// parallel_for from there runs inline.
thread_local bool t_in_parallel_region = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

int clamp_threads(int n) {
  return std::clamp(n, 1, ThreadPool::kMaxThreads);
}

// An invalid TESSEL_NUM_THREADS is reported where the environment is read at
// a boundary (tessel_model_load, the command line); the pool itself, started
// from inside a kernel's first loop, cannot throw and takes the cores.
int default_num_threads() {
  try {
    if (int n = threads_from_environment()) return n;
  } catch (const StatusError&) {
  }
  return clamp_threads(ThreadPool::available_cores());
}

}  // namespace

ThreadPool::ThreadPool(int num_threads, int cores) : cores_(cores > 0 ? cores : available_cores()) {
  start_workers(clamp_threads(num_threads));
}

ThreadPool::~ThreadPool() {
  stop_workers();
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(default_num_threads());
  return pool;
}

int ThreadPool::available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1, int(std::thread::hardware_concurrency()));
}

int ThreadPool::spin_budget(int threads, int cores) {
  return threads <= cores ? kSpinIterations : 0;
}

std::pair<int64_t, int64_t> ThreadPool::chunk(int64_t n, int threads, int index) {
  int64_t q = n / threads, r = n % threads;
  int64_t begin = index * q + std::min<int64_t>(index, r);
  return {begin, begin + q + (index < r ? 1 : 0)};
}

// Polls done() up to the spin budget, yielding the core every kYieldEvery
// polls: on a machine busy with other processes the thread waited for may be
// runnable on this very core. The caller blocks afterwards if done() is still false.
template <typename Done>
void ThreadPool::spin_until(Done done) {
  constexpr int kYieldEvery = 64;
  int budget = spin_iterations(), i = 0;
  if (budget == 0) return;
  for (; i < budget && !done(); ++i) {
    if (i % kYieldEvery == kYieldEvery - 1)
      sched_yield();
    else
      cpu_relax();
  }
  spin_polls_.fetch_add(uint64_t(i), std::memory_order_relaxed);
}

void ThreadPool::run_chunk(int index) {
  auto [begin, end] = chunk(n_, num_threads(), index);
  if (begin >= end) return;
  if (!trace_) return body_(begin, end, closure_);
  double start = Tracer::now();
  body_(begin, end, closure_);
  Tracer::record(TESSEL_TRACE_CHUNK, index, start, Tracer::now());
}

namespace {

// A loop run whole on the calling thread; traced as thread 0's chunk unless
// it is nested in another loop's chunk (which the trace already holds).
void run_inline(int64_t n, tessel_rt_parallel_body body, void* closure) {
  if (t_in_parallel_region || !Tracer::on()) return body(0, n, closure);
  double start = Tracer::now();
  body(0, n, closure);
  Tracer::record(TESSEL_TRACE_CHUNK, 0, start, Tracer::now());
}

}  // namespace

void ThreadPool::parallel_for(int64_t n, tessel_rt_parallel_body body, void* closure) {
  if (n <= 0) return;
  if (t_in_parallel_region || num_threads() == 1 || n == 1) return run_inline(n, body, closure);
  std::unique_lock<std::mutex> dispatch(dispatch_mutex_, std::try_to_lock);
  if (!dispatch.owns_lock()) return run_inline(n, body, closure);  // another thread's loop holds the workers

  n_ = n;
  body_ = body;
  closure_ = closure;
  trace_ = Tracer::on();
  remaining_.store(int(workers_.size()), std::memory_order_relaxed);
  bool wake;
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    generation_.fetch_add(1, std::memory_order_release);
    wake = sleepers_ > 0;
  }
  if (wake) wake_.notify_all();

  t_in_parallel_region = true;
  run_chunk(0);
  t_in_parallel_region = false;

  auto finished = [&] { return remaining_.load(std::memory_order_acquire) == 0; };
  spin_until(finished);
  if (!finished()) {
    std::unique_lock<std::mutex> lock(done_mutex_);
    done_.wait(lock, finished);
  }
}

void ThreadPool::worker_main(int index, uint64_t seen) {
  t_in_parallel_region = true;
  for (;;) {
    auto changed = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    spin_until(changed);
    if (!changed()) {
      std::unique_lock<std::mutex> lock(wake_mutex_);
      ++sleepers_;
      wake_.wait(lock, changed);
      --sleepers_;
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_) return;
    run_chunk(index);
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      {
        std::lock_guard<std::mutex> lock(done_mutex_);
      }  // the caller checks under this lock: no lost wake-up
      done_.notify_one();
    }
  }
}

void ThreadPool::start_workers(int num_threads) {
  stop_ = false;
  num_threads_.store(num_threads, std::memory_order_relaxed);
  spin_iterations_.store(spin_budget(num_threads, cores_), std::memory_order_relaxed);
  workers_.reserve(size_t(num_threads - 1));
  // The generation the workers start from is read here, not by each new thread:
  // a thread that started late would take the first loop's bump for its start
  // and never run that loop's chunk.
  uint64_t start = generation_.load(std::memory_order_acquire);
  for (int i = 1; i < num_threads; ++i) {
    try {
      workers_.emplace_back([this, i, start] { worker_main(i, start); });
    } catch (const std::system_error&) {
      break;  // the system refuses more threads: run with those it gave
    }
  }
  num_threads_.store(int(workers_.size()) + 1, std::memory_order_relaxed);
  // Fewer threads than asked: they may spin after all.
  spin_iterations_.store(spin_budget(this->num_threads(), cores_), std::memory_order_relaxed);
}

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void ThreadPool::set_num_threads(int num_threads) {
  num_threads = clamp_threads(num_threads);
  std::lock_guard<std::mutex> dispatch(dispatch_mutex_);
  if (num_threads == this->num_threads()) return;
  stop_workers();
  start_workers(num_threads);
}

void set_num_threads(int num_threads) {
  ThreadPool::global().set_num_threads(num_threads);
}

int get_num_threads() {
  return ThreadPool::global().num_threads();
}

int parse_num_threads(const char* value) {
  if (!value || !*value) return 0;
  std::string text(value);
  bool digits =
      text.size() <= 9 && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  long n = digits ? std::strtol(value, nullptr, 10) : 0;
  if (n < 1 || n > ThreadPool::kMaxThreads)
    throw StatusError(TESSEL_ERR_INVALID_ARGUMENT, "TESSEL_NUM_THREADS='" + text +
                                                       "' is not a thread count: a whole number from 1 to " +
                                                       std::to_string(ThreadPool::kMaxThreads));
  return int(n);
}

int threads_from_environment() {
  return parse_num_threads(std::getenv("TESSEL_NUM_THREADS"));
}

}  // namespace tessel::rt

extern "C" void tessel_rt_parallel_for(int64_t n, tessel_rt_parallel_body body, void* closure) {
  tessel::rt::ThreadPool::global().parallel_for(n, body, closure);
}
