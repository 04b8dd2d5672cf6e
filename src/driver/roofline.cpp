#include "src/driver/roofline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/core/diagnostics.h"
#include "src/codegen/llvm/peak_kernel.h"
#include "src/codegen/machine_cache.h"

namespace tessel::driver {

namespace {

using Clock = std::chrono::steady_clock;

// Runs body(t) on `threads` threads started together; the seconds from the
// first start to the last end.
double run_together(int threads, const std::function<void(int)>& body) {
  std::atomic<bool> go{false};
  std::vector<Clock::time_point> start(static_cast<size_t>(threads)), end(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      start[size_t(t)] = Clock::now();
      body(t);
      end[size_t(t)] = Clock::now();
    });
  go.store(true, std::memory_order_release);
  for (std::thread& th : pool) th.join();
  return std::chrono::duration<double>(*std::max_element(end.begin(), end.end()) -
                                       *std::min_element(start.begin(), start.end()))
      .count();
}

double peak_gflops(const codegen::PeakKernel& k, int threads, const RooflineOptions& o) {
  auto rounds_of = [&](int64_t rounds) {
    std::vector<float> sinks(size_t(threads) * 16);
    return run_together(threads, [&](int t) {
      int64_t n = rounds;
      void* args[] = {&n, &sinks[size_t(t) * 16]};
      k.fn(args);
    });
  };
  int64_t probe = 100000;
  double probe_seconds = std::max(rounds_of(probe), 1e-6);
  int64_t rounds = std::max<int64_t>(probe, int64_t(double(probe) * o.fma_seconds / probe_seconds));
  double best = 0;
  for (int r = 0; r < o.repeats; ++r)
    best = std::max(best, double(rounds) * k.flops_per_round * threads / rounds_of(rounds) / 1e9);
  return best;
}

struct Arrays {
  std::unique_ptr<float[]> a, b, c;
  int64_t n;
};

void triad_slice(Arrays& x, int t, int threads) {
  int64_t begin = x.n * t / threads, end = x.n * (t + 1) / threads;
  float* __restrict a = x.a.get();
  const float* __restrict b = x.b.get();
  const float* __restrict c = x.c.get();
  for (int64_t i = begin; i < end; ++i) a[i] = b[i] + 3.0f * c[i];
}

double triad_gbps(Arrays& x, int threads, const RooflineOptions& o) {
  run_together(threads, [&](int t) {  // first touch by the thread that will stream the slice
    int64_t begin = x.n * t / threads, end = x.n * (t + 1) / threads;
    std::fill(x.a.get() + begin, x.a.get() + end, 0.0f);
    std::fill(x.b.get() + begin, x.b.get() + end, 1.0f);
    std::fill(x.c.get() + begin, x.c.get() + end, 2.0f);
  });
  double best = 0;
  for (int r = 0; r < o.repeats; ++r) {
    double seconds = run_together(threads, [&](int t) { triad_slice(x, t, threads); });
    best = std::max(best, 3.0 * 4.0 * double(x.n) / seconds / 1e9);
  }
  return best;
}

// Each thread streams its own arrays, small enough to stay in its L2 cache,
// back and forth (a = b + s c, then b = a + s c: no pass repeats the last).
double cache_triad_gbps(int threads, const RooflineOptions& o) {
  std::vector<Arrays> arrays(static_cast<size_t>(threads));
  int64_t n = std::max<int64_t>(256, o.cache_triad_bytes / 12);
  int64_t passes = std::max<int64_t>(8, (int64_t(64) << 20) / (12 * n));
  run_together(threads, [&](int t) {
    Arrays& x = arrays[size_t(t)];
    x.n = n;
    x.a.reset(new float[size_t(n)]);
    x.b.reset(new float[size_t(n)]);
    x.c.reset(new float[size_t(n)]);
    std::fill(x.a.get(), x.a.get() + n, 0.0f);
    std::fill(x.b.get(), x.b.get() + n, 1.0f);
    std::fill(x.c.get(), x.c.get() + n, 1e-6f);
  });
  double best = 0;
  for (int r = 0; r < o.repeats; ++r) {
    double seconds = run_together(threads, [&](int t) {
      Arrays& x = arrays[size_t(t)];
      for (int64_t p = 0; p < passes; ++p) {
        triad_slice(x, 0, 1);
        std::swap(x.a, x.b);
      }
    });
    best = std::max(best, 12.0 * double(n) * double(passes) * threads / seconds / 1e9);
  }
  return best;
}

// Bumped when a measurement changes: 2, the peak kernel no longer copies its
// accumulators every round (version 1 read a quarter of the peak on cores
// with two 512-bit FMA pipes).
constexpr int kRooflineVersion = 2;

std::string machine_key(const codegen::Target& t) {
  return t.cpu.cpu + " " + std::to_string(t.cpu.vector_bits) + "-bit " + std::to_string(t.cpu.cores) +
         " cores features " + codegen::features_hash(t.cpu);
}

nlohmann::json to_json(const RooflinePoint& p) {
  return {{"gflops", p.gflops}, {"gbps", p.gbps}, {"cache_gbps", p.cache_gbps}};
}

RooflinePoint point_from(const nlohmann::json& j) {
  RooflinePoint p{j.at("gflops").get<double>(), j.at("gbps").get<double>(), j.at("cache_gbps").get<double>()};
  if (!(p.gflops > 0 && p.gbps > 0 && p.cache_gbps > 0)) throw std::runtime_error("a peak that is not positive");
  return p;
}

}  // namespace

RooflinePoint Roofline::at(int threads) const {
  if (threads <= 1) return one_thread;
  return {std::min(one_thread.gflops * threads, all_threads.gflops),
          std::min(one_thread.gbps * threads, all_threads.gbps),
          std::min(one_thread.cache_gbps * threads, all_threads.cache_gbps)};
}

Roofline measure_roofline(const codegen::Target& target, const RooflineOptions& o) {
  TESSEL_USER_CHECK(target.kind == codegen::TargetKind::kLlvm, Span{})
      << "the roofline is measured on this machine's CPU (target llvm); the GPU's comes with the CUDA backend";
  std::vector<std::string> lacking = codegen::features_host_lacks(target);
  TESSEL_USER_CHECK(lacking.empty(), Span{}) << "this CPU lacks " << lacking.front()
                                             << ": its roofline cannot be measured here";
  Roofline r;
  r.machine = machine_key(target);
  r.cores = std::max(1, target.cpu.cores);
  codegen::PeakKernel kernel = codegen::compile_peak_kernel(target.cpu);
  r.one_thread.gflops = peak_gflops(kernel, 1, o);
  r.all_threads.gflops = r.cores > 1 ? peak_gflops(kernel, r.cores, o) : r.one_thread.gflops;
  Arrays x;
  x.n = std::max<int64_t>(1024, o.triad_bytes / 12);
  x.a.reset(new float[size_t(x.n)]);
  x.b.reset(new float[size_t(x.n)]);
  x.c.reset(new float[size_t(x.n)]);
  r.one_thread.gbps = triad_gbps(x, 1, o);
  r.all_threads.gbps = r.cores > 1 ? triad_gbps(x, r.cores, o) : r.one_thread.gbps;
  r.one_thread.cache_gbps = cache_triad_gbps(1, o);
  r.all_threads.cache_gbps = r.cores > 1 ? cache_triad_gbps(r.cores, o) : r.one_thread.cache_gbps;
  return r;
}

std::string roofline_cache_path() {
  return codegen::tessel_cache_dir() + "/roofline.json";
}

Roofline machine_roofline(const codegen::Target& target, bool remeasure, std::ostream& notes,
                          const RooflineOptions& options) {
  namespace fs = std::filesystem;
  std::string path = roofline_cache_path(), key = machine_key(target);
  nlohmann::json cache = nlohmann::json::object();
  if (fs::exists(path)) {
    try {
      std::ifstream in(path);
      cache = nlohmann::json::parse(in);
      if (!cache.is_object()) throw std::runtime_error("not a JSON object");
      if (!remeasure && cache.contains(key)) {
        const nlohmann::json& e = cache.at(key);
        if (e.value("version", 0) == kRooflineVersion) {
          Roofline r{key, e.at("cores").get<int>(), point_from(e.at("one_thread")),
                     point_from(e.at("all_threads"))};
          notes << "roofline of " << key << " from " << path
                << " (tessel roofline --remeasure measures again)\n";
          return r;
        }
        notes << "the cached roofline of " << key << " was measured by an older Tessel; measuring again\n";
      }
    } catch (const std::exception& e) {
      notes << "ignoring the roofline cache " << path << ": it cannot be read (" << e.what() << "); measuring again\n";
      cache = nlohmann::json::object();
    }
  }
  notes << "measuring the roofline of " << key << " (a few seconds, once; cached in " << path << ")\n";
  Roofline r = measure_roofline(target, options);
  cache[key] = {{"version", kRooflineVersion},
                {"cores", r.cores},
                {"one_thread", to_json(r.one_thread)},
                {"all_threads", to_json(r.all_threads)}};
  // A cache that cannot be written is only a cache.
  if (std::error_code ec = codegen::replace_file(path, cache.dump(2) + "\n"))
    notes << "cannot write the roofline cache " << path << ": " << ec.message() << "\n";
  return r;
}

RooflinePlace place_on_roofline(const RooflinePoint& roof, double flops, double bytes, double seconds) {
  RooflinePlace p;
  if (bytes <= 0 || seconds <= 0) return p;
  p.intensity = flops / bytes;
  p.bound_gflops = std::min(roof.gflops, p.intensity * roof.gbps);
  p.compute_bound = p.intensity >= roof.ridge();
  double achieved = flops / seconds / 1e9;
  p.percent = p.bound_gflops > 0 ? 100.0 * achieved / p.bound_gflops : 0;
  return p;
}

void print_roofline(const Roofline& r, std::ostream& out) {
  char line[160];
  out << "machine " << r.machine << "\n";
  out << "threads   peak GFLOP/s   bandwidth GB/s   ridge FLOP/byte   L2 bandwidth GB/s\n";
  auto row = [&](int threads, const RooflinePoint& p) {
    std::snprintf(line, sizeof line, "%7d   %12.1f   %14.1f   %15.2f   %17.1f\n", threads, p.gflops, p.gbps,
                  p.ridge(), p.cache_gbps);
    out << line;
  };
  row(1, r.one_thread);
  if (r.cores > 1) row(r.cores, r.all_threads);
}

}  // namespace tessel::driver
