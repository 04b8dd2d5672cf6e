// The runtime's thread pool: coverage, static contiguous chunks, nesting,
// concurrent callers, resizing, no spinning when oversubscribed, and the
// check of TESSEL_NUM_THREADS.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "src/runtime/plan.h"
#include "src/runtime/thread_pool.h"
#include "tessel/runtime.h"

namespace tessel::rt {
namespace {

struct Chunk {
  int64_t begin, end;
  std::thread::id thread;
};

TEST(RuntimeThreadPool, EveryIndexRunsExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(2), int64_t(7), int64_t(1000), int64_t(1000000)}) {
      std::vector<std::atomic<uint8_t>> hits(static_cast<size_t>(n));
      pool.parallel_for(n, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) hits[size_t(i)].fetch_add(1, std::memory_order_relaxed);
      });
      int64_t wrong = std::count_if(hits.begin(), hits.end(), [](const auto& h) { return h.load() != 1; });
      EXPECT_EQ(wrong, 0) << "n=" << n << " threads=" << threads;
    }
  }
}

// A loop dispatched before the new workers have started: they must still run
// their chunks (a worker that read its start generation itself, late, missed
// the first loop and the caller waited forever; ctest's timeout reports it).
TEST(RuntimeThreadPool, FirstLoopOfAFreshPoolRunsOnEveryWorker) {
  for (int round = 0; round < 300; ++round) {
    ThreadPool pool(4);
    std::atomic<int64_t> sum{0};
    pool.parallel_for(4, [&](int64_t begin, int64_t end) { sum += end - begin; });
    ASSERT_EQ(sum.load(), 4) << "round " << round;
  }
}

TEST(RuntimeThreadPool, ChunksAreStaticAndContiguousOnePerThread) {
  for (int threads : {2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : {int64_t(2), int64_t(7), int64_t(1000)}) {
      std::mutex m;
      std::vector<Chunk> chunks;
      pool.parallel_for(n, [&](int64_t begin, int64_t end) {
        std::lock_guard<std::mutex> lock(m);
        chunks.push_back({begin, end, std::this_thread::get_id()});
      });
      std::sort(chunks.begin(), chunks.end(),
                [](const Chunk& a, const Chunk& b) { return a.begin < b.begin; });
      // One call per non-empty chunk, exactly the balanced split, each on its own thread.
      std::vector<std::pair<int64_t, int64_t>> expected;
      for (int i = 0; i < threads; ++i) {
        int64_t q = n / threads, r = n % threads;
        int64_t begin = i * q + std::min<int64_t>(i, r), end = begin + q + (i < r);
        if (begin < end) expected.push_back({begin, end});
      }
      ASSERT_EQ(chunks.size(), expected.size()) << "n=" << n << " threads=" << threads;
      for (size_t i = 0; i < chunks.size(); ++i) {
        EXPECT_EQ(chunks[i].begin, expected[i].first);
        EXPECT_EQ(chunks[i].end, expected[i].second);
        if (i == 0) continue;
        EXPECT_EQ(chunks[i].begin, chunks[i - 1].end);
        EXPECT_NE(chunks[i].thread, chunks[0].thread);
      }
      EXPECT_EQ(chunks.front().thread, std::this_thread::get_id()) << "the caller runs chunk 0";
      // Sizes differ by at most one.
      auto size = [](const Chunk& c) { return c.end - c.begin; };
      auto [lo, hi] = std::minmax_element(chunks.begin(), chunks.end(),
                                          [&](const Chunk& a, const Chunk& b) { return size(a) < size(b); });
      EXPECT_LE(size(*hi) - size(*lo), 1);
    }
  }
}

TEST(RuntimeThreadPool, ChunkFormulaDoesNotOverflow) {
  int64_t n = int64_t(1) << 62;
  auto [begin, end] = ThreadPool::chunk(n, 1024, 1023);
  EXPECT_EQ(end, n);
  EXPECT_EQ(end - begin, n / 1024);
}

TEST(RuntimeThreadPool, NestedCallRunsInlineOnTheSameThread) {
  ThreadPool pool(4);
  std::atomic<int> inner_calls{0}, wrong{0};
  pool.parallel_for(4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      std::thread::id outer = std::this_thread::get_id();
      pool.parallel_for(100, [&](int64_t b, int64_t e) {
        inner_calls.fetch_add(1);
        if (b != 0 || e != 100 || std::this_thread::get_id() != outer) wrong.fetch_add(1);
      });
      // The process-wide pool sees the same thread-local nesting flag.
      ThreadPool::global().parallel_for(10, [&](int64_t b, int64_t e) {
        if (b != 0 || e != 10 || std::this_thread::get_id() != outer) wrong.fetch_add(1);
      });
    }
  });
  EXPECT_EQ(inner_calls.load(), 4);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(RuntimeThreadPool, TwoCallersConcurrentlyAreBothCorrect) {
  ThreadPool pool(3);
  constexpr int64_t kN = 100000;
  constexpr int kRounds = 200;
  auto caller = [&](std::vector<int64_t>& sums) {
    for (int r = 0; r < kRounds; ++r) {
      std::atomic<int64_t> sum{0};
      pool.parallel_for(kN, [&](int64_t begin, int64_t end) {
        int64_t s = 0;
        for (int64_t i = begin; i < end; ++i) s += i + r;
        sum.fetch_add(s);
      });
      sums.push_back(sum.load());
    }
  };
  std::vector<int64_t> a, b;
  std::thread ta(caller, std::ref(a)), tb(caller, std::ref(b));
  ta.join();
  tb.join();
  ASSERT_EQ(a.size(), size_t(kRounds));
  ASSERT_EQ(b.size(), size_t(kRounds));
  for (int r = 0; r < kRounds; ++r) {
    int64_t expected = kN * (kN - 1) / 2 + kN * r;
    EXPECT_EQ(a[size_t(r)], expected);
    EXPECT_EQ(b[size_t(r)], expected);
  }
}

TEST(RuntimeThreadPool, SetNumThreadsResizes) {
  ThreadPool pool(2);
  pool.set_num_threads(5);
  EXPECT_EQ(pool.num_threads(), 5);
  std::mutex m;
  std::vector<std::thread::id> ids;
  pool.parallel_for(5, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(m);
    ids.push_back(std::this_thread::get_id());
  });
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()) - ids.begin(), 5);
  pool.set_num_threads(1);
  EXPECT_EQ(pool.num_threads(), 1);
  pool.set_num_threads(0);  // clamped
  EXPECT_EQ(pool.num_threads(), 1);

  int before = get_num_threads();
  set_num_threads(3);
  EXPECT_EQ(get_num_threads(), 3);
  set_num_threads(before);
  EXPECT_EQ(get_num_threads(), before);
}

TEST(RuntimeThreadPool, CEntryPointUsesTheGlobalPool) {
  std::atomic<int64_t> sum{0};
  auto body = [](int64_t begin, int64_t end, void* closure) {
    int64_t s = 0;
    for (int64_t i = begin; i < end; ++i) s += i;
    static_cast<std::atomic<int64_t>*>(closure)->fetch_add(s);
  };
  tessel_rt_parallel_for(1000, body, &sum);
  EXPECT_EQ(sum.load(), 999 * 1000 / 2);
  tessel_rt_parallel_for(-5, body, &sum);  // n <= 0: nothing
  EXPECT_EQ(sum.load(), 999 * 1000 / 2);
}

// More threads than cores: a spinning waiter held the core of the thread it
// waited for (8 threads on 2 cores: 0.03 ms -> 34-96 ms a run of the tiny CNN,
// seconds at 64). Such a pool never polls; its threads block until woken.
TEST(RuntimeThreadPool, AnOversubscribedPoolNeverSpins) {
  EXPECT_EQ(ThreadPool::spin_budget(8, 2), 0);
  EXPECT_EQ(ThreadPool::spin_budget(3, 2), 0);
  EXPECT_EQ(ThreadPool::spin_budget(2, 2), ThreadPool::kSpinIterations);
  EXPECT_EQ(ThreadPool::spin_budget(1, 1), ThreadPool::kSpinIterations);

  ThreadPool pool(8, /*cores=*/2);
  EXPECT_EQ(pool.spin_iterations(), 0);
  for (int round = 0; round < 200; ++round) {
    std::atomic<int64_t> sum{0};
    pool.parallel_for(1000, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) sum.fetch_add(i, std::memory_order_relaxed);
    });
    ASSERT_EQ(sum.load(), 999 * 1000 / 2) << "round " << round;
  }
  EXPECT_EQ(pool.spin_polls(), 0u);

  pool.set_num_threads(2);  // fits the cores again: may spin
  EXPECT_EQ(pool.spin_iterations(), ThreadPool::kSpinIterations);
  pool.set_num_threads(3);
  EXPECT_EQ(pool.spin_iterations(), 0);
}

TEST(RuntimeThreadPool, TheDefaultCoreCountIsTheAffinityMask) {
  int cores = ThreadPool::available_cores();
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, int(std::max(1u, std::thread::hardware_concurrency())));
  ThreadPool fits(cores), over(cores + 1);
  EXPECT_EQ(fits.spin_iterations(), ThreadPool::kSpinIterations);
  EXPECT_EQ(over.spin_iterations(), 0);
}

TEST(RuntimeThreadPool, NumThreadsFromTheEnvironmentIsCheckedNotIgnored) {
  EXPECT_EQ(parse_num_threads(nullptr), 0);
  EXPECT_EQ(parse_num_threads(""), 0);
  EXPECT_EQ(parse_num_threads("1"), 1);
  EXPECT_EQ(parse_num_threads("8"), 8);
  EXPECT_EQ(parse_num_threads("1024"), 1024);
  for (const char* bad :
       {"0", "-1", "+4", " 4", "4 ", "4x", "abc", "1025", "2048", "99999999999999999999", "1e3", "0x10"}) {
    try {
      parse_num_threads(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const StatusError& e) {
      EXPECT_EQ(e.status(), TESSEL_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("TESSEL_NUM_THREADS='" + std::string(bad) + "'"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("1 to 1024"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tessel::rt
