// time_runs, print_latency, print_profile.
#include "src/driver/run_compiled.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "ir/core/diagnostics.h"
#include "src/runtime/plan.h"
#include "src/runtime/thread_pool.h"

namespace tessel::driver {

void check_thread_environment() {
  try {
    rt::threads_from_environment();
  } catch (const rt::StatusError& e) {
    TESSEL_USER_CHECK(false, Span{}) << e.what();
  }
}

namespace {

std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

}  // namespace

Latency time_runs(CompiledModel& model, const std::vector<Tensor>& inputs, int repeat, int warmup) {
  TESSEL_USER_CHECK(repeat >= 1, Span{}) << "--repeat must be at least 1";
  for (int i = 0; i < warmup; ++i) model.run(inputs);
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    model.run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return Latency{median(ms), *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
                 repeat};
}

void print_latency(const Latency& l, int threads, std::ostream& out) {
  out << "latency: median " << format("%.3f", l.median_ms) << " ms, min " << format("%.3f", l.min_ms)
      << " ms, max " << format("%.3f", l.max_ms) << " ms over " << l.runs << " runs (" << threads
      << (threads == 1 ? " thread)" : " threads)") << "\n";
}

double ModelProfile::kernel_sum_ms() const {
  double sum = 0;
  for (const KernelProfile& k : kernels) sum += k.median_ms;
  return sum;
}

ModelProfile profile_model(CompiledModel& model, const std::vector<Tensor>& inputs, int repeat) {
  TESSEL_USER_CHECK(repeat >= 1, Span{}) << "a profile needs at least one run";
  std::vector<KernelInfo> kernels = model.kernels();
  model.run(inputs);  // warm-up
  std::vector<std::vector<double>> per_kernel(kernels.size());
  std::vector<double> totals, outside;
  for (int r = 0; r < repeat; ++r) {
    std::vector<double> seconds;
    auto start = std::chrono::steady_clock::now();
    model.run(inputs, &seconds);
    totals.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    double in_kernels = 0;
    for (size_t k = 0; k < kernels.size(); ++k) {
      per_kernel[k].push_back(seconds[k] * 1e3);
      in_kernels += seconds[k] * 1e3;
    }
    outside.push_back(totals.back() - in_kernels);
  }
  ModelProfile p;
  p.outside_kernels_ms = median(outside);
  for (size_t k = 0; k < kernels.size(); ++k) p.kernels.push_back({kernels[k], median(per_kernel[k])});
  p.end_to_end = {median(totals), *std::min_element(totals.begin(), totals.end()),
                  *std::max_element(totals.begin(), totals.end()), repeat};
  p.threads = model.num_threads();
  return p;
}

void print_profile(const ModelProfile& p, const RooflinePoint* roof, std::ostream& out) {
  double sum = p.kernel_sum_ms();
  bool usage = std::any_of(p.kernels.begin(), p.kernels.end(), [](const KernelProfile& k) {
    return k.kernel.registers > 0 || k.kernel.shared_bytes > 0;
  });
  out << "kernel                                          share   median ms       MFLOP        MB   GFLOP/s";
  out << (roof ? "   FLOP/B   %roof  bound" : "") << (usage ? "   regs  spill B  shared B" : "") << "\n";
  for (const KernelProfile& k : p.kernels) {
    std::string name = k.kernel.name.substr(0, 46);
    name.resize(46, ' ');
    double gflops = k.median_ms > 0 ? k.kernel.flops / (k.median_ms * 1e6) : 0;
    out << name << format("  %5.1f%%", sum > 0 ? 100 * k.median_ms / sum : 0) << format("  %10.4f", k.median_ms)
        << format("  %10.2f", k.kernel.flops / 1e6) << format("  %8.3f", k.kernel.bytes / 1e6)
        << format("  %8.2f", gflops);
    if (roof) {
      RooflinePlace place = place_on_roofline(*roof, k.kernel.flops, k.kernel.bytes, k.median_ms / 1e3);
      out << format("  %7.2f", place.intensity) << format("  %5.1f%%", place.percent)
          << (k.kernel.flops == 0 ? "  -" : place.compute_bound ? "  compute" : "  memory");
    }
    if (usage)  // registers and spills as ptxas reported them; "-" where it did not (the emulator)
      out << (k.kernel.registers > 0
                  ? format("  %5.0f", k.kernel.registers) + format("  %7.0f", double(k.kernel.spill_bytes))
                  : std::string("      -        -"))
          << format("  %8.0f", double(k.kernel.shared_bytes));
    out << "\n";
  }
  out << "end to end: median " << format("%.3f", p.end_to_end.median_ms) << " ms over " << p.end_to_end.runs
      << " runs (" << p.kernels.size() << " kernels, " << format("%.3f", sum) << " ms in kernels)\n";
  if (roof)
    out << "roofline at " << p.threads << (p.threads == 1 ? " thread: " : " threads: ") << format("%.1f", roof->gflops)
        << " GFLOP/s, " << format("%.1f", roof->gbps) << " GB/s, ridge " << format("%.2f", roof->ridge())
        << " FLOP/byte (over 100%: bytes from cache; L2 " << format("%.1f", roof->cache_gbps) << " GB/s)\n";
}

}  // namespace tessel::driver
