// Timing and profiles of a compiled model: what `tessel run --repeat` and
// `--profile` print. Medians of timed runs after warm-up runs.
#pragma once

#include <ostream>
#include <vector>

#include "src/driver/compiled_model.h"
#include "src/driver/roofline.h"
#include "tuner/median.h"

namespace tessel::driver {

struct Latency {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int runs = 0;
};

// A user error when TESSEL_NUM_THREADS is set to anything but a thread
// count: the in-process pool would otherwise start with its default.
void check_thread_environment();

using tune::median;  // the median of v (0 when empty)

// `warmup` untimed runs, then `repeat` timed ones.
Latency time_runs(CompiledModel& model, const std::vector<Tensor>& inputs, int repeat, int warmup = 3);

// Prints the latency line:
// "latency: median 12.345 ms, min 12.001 ms, max 13.100 ms over 20 runs (2 threads)".
void print_latency(const Latency& l, int threads, std::ostream& out);

struct KernelProfile {
  KernelInfo kernel;
  double median_ms = 0;
};

struct ModelProfile {
  std::vector<KernelProfile> kernels;  // in plan order
  Latency end_to_end;                  // of the profiled runs
  // The median over runs of each run's time outside its kernels: a run
  // slowed down by the OS is slowed inside some kernel, so this stays what
  // the runtime itself costs (the medians of the parts need not add up to
  // the median of the whole).
  double outside_kernels_ms = 0;
  int threads = 1;
  double kernel_sum_ms() const;
};

// One warm-up run, then `repeat` profiled runs: each kernel's median time and
// the end-to-end latency.
ModelProfile profile_model(CompiledModel& model, const std::vector<Tensor>& inputs, int repeat);

// Per kernel: its share of the time, median time, FLOPs, bytes, GFLOP/s and,
// given the machine's roofline at the model's threads, its arithmetic
// intensity, % of the roofline bound at that intensity and whether it is
// memory- or compute-bound; then the end-to-end median.
void print_profile(const ModelProfile& profile, const RooflinePoint* roof, std::ostream& out);

}  // namespace tessel::driver
