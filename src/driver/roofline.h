// The machine's roofline: peak f32 arithmetic (an FMA micro-kernel generated
// for the target, codegen/llvm/peak_kernel.h) and memory bandwidth (a STREAM
// triad, a[i] = b[i] + s * c[i], over arrays far larger than the caches; and
// over arrays that stay in the L2 cache, the ceiling of a kernel whose bytes
// come from there), each on one thread and on every core. Measured once per machine and cached
// in ${TESSEL_CACHE:-~/.cache/tessel}/roofline.json; `tessel roofline`,
// `tessel run --profile` and the fusion report read it.
#pragma once

#include <ostream>
#include <string>

#include "src/codegen/target.h"

namespace tessel::driver {

struct RooflinePoint {
  double gflops = 0;      // peak f32 GFLOP/s
  double gbps = 0;        // main memory bandwidth, GB/s: the roof
  double cache_gbps = 0;  // the same triad on arrays that stay in the L2 cache: a ceiling above it
  double ridge() const { return gbps > 0 ? gflops / gbps : 0; }  // FLOP per byte where the two bounds meet
};

struct Roofline {
  std::string machine;  // the cache key: CPU, vector width, features, cores
  int cores = 1;
  RooflinePoint one_thread, all_threads;
  // The point for `threads`: one thread's peak times the threads, at most all
  // cores'; bandwidth likewise.
  RooflinePoint at(int threads) const;
};

struct RooflineOptions {
  double fma_seconds = 0.05;              // per timed FMA run
  int64_t triad_bytes = 3 * (256 << 20);  // the three arrays together (at least 4x the last-level cache)
  int64_t cache_triad_bytes = 3 * (48 << 10);  // per thread: within any L2, beyond any L1
  int repeats = 5;                        // the best of these runs counts
};

// Measures now (a few seconds). Only for a target this host can run (a user
// error naming the missing features otherwise).
Roofline measure_roofline(const codegen::Target& target, const RooflineOptions& options = {});

// The cached roofline of this machine, measured (and cached) when there is
// none or `remeasure`; a cache file that cannot be read is reported on
// `notes` and replaced. Where it came from is said on `notes` too.
Roofline machine_roofline(const codegen::Target& target, bool remeasure, std::ostream& notes,
                          const RooflineOptions& options = {});

std::string roofline_cache_path();

// Where a kernel sits: its arithmetic intensity (FLOP per byte), the roofline
// bound at that intensity, achieved / bound, and which bound it is under.
struct RooflinePlace {
  double intensity = 0;
  double bound_gflops = 0;
  double percent = 0;
  bool compute_bound = false;
};
RooflinePlace place_on_roofline(const RooflinePoint& roof, double flops, double bytes, double seconds);

// The table `tessel roofline` prints.
void print_roofline(const Roofline& r, std::ostream& out);

}  // namespace tessel::driver
