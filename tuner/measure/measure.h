// Measuring a candidate: built for the target through its backend, run on
// given inputs, its outputs checked against expected ones, then timed, all in
// a child process (run_isolated) with a timeout, so that a candidate that
// crashes, hangs or computes something else is a recorded error, not the
// end of the session. Between timed runs a buffer is written
// (MeasureOptions::flush_bytes) and the inputs a model run finds in cache
// are read again (MeasureOptions::warm_inputs), so that every run starts from
// the cache level it would in a model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/core/tensor.h"
#include "ir/tensor/function.h"
#include "src/codegen/backend.h"
#include "src/codegen/target.h"

namespace tessel::tune {

struct MeasureOptions {
  int threads = 1;            // the child's thread pool
  int repeat = 5;             // timed runs, after one checked run and the warm-up runs
  // Untimed runs before the timed ones: the first runs of a fresh process are
  // slower (its allocator and page tables settle), by up to several times.
  int warmup = 3;
  double timeout_s = 10;      // for building, checking and timing together
  // Bytes written between timed runs, so that the candidate's data is not
  // in the caches closer than they would be in a model run (0: none). Four
  // times the L2 leaves them in the last-level cache, where a model's
  // activations and weights are when it runs again and again on a machine
  // whose last-level cache holds them; 64 MiB sends them back to memory.
  int64_t flush_bytes = int64_t(64) << 20;
  // For GPU code, device memory written between timed runs, measured with
  // the device's events: several times the L2 of the GPUs Tessel targets,
  // so that each run reads its data from device memory, as the first
  // kernel reading a weight does in a model run. (cuda-emulated writes
  // flush_bytes: its device memory is this CPU's.)
  int64_t gpu_flush_bytes = int64_t(256) << 20;
  // The inputs (by position; empty: none) that a model run finds in cache:
  // activations its previous kernel has just written, read after each flush.
  // Measured cold, a kernel that reads a large activation once looked slower
  // than one that reads it several times, and the session chose the second.
  std::vector<bool> warm_inputs;
  double rtol = 1e-4, atol = 1e-5;  // for the check against the expected outputs
};

struct Measurement {
  std::vector<double> times_ms;  // one per timed run
  std::string error;             // why there are none
  codegen::KernelUsage usage;    // what ptxas reported of a GPU candidate's kernels

  bool ok() const { return error.empty() && !times_ms.empty(); }
};

// `flat` is a flattened function (tir_passes::flatten_blocks) whose inputs
// are `inputs`, in order; `expected` (when not empty) are its outputs as the
// reference computes them.
Measurement measure_candidate(const codegen::Target& target, const tir::PrimFunc& flat,
                              const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected,
                              const MeasureOptions& options = {});

// A candidate's time over a baseline's (the default schedule's), both timed
// in one child process, alternately run by run (each run after the flush
// and warm reads measure_candidate makes), options.repeat pairs: the median
// of the pairs' ratios. Timed minutes apart, two schedules' times also
// differ by how fast the machine was then; run by run, they do not.
struct Comparison {
  double ratio = 0;   // candidate / baseline
  std::string error;  // why there is none (as Measurement::error)

  bool ok() const { return error.empty() && ratio > 0; }
};

Comparison compare_with_baseline(const codegen::Target& target, const tir::PrimFunc& baseline,
                                 const tir::PrimFunc& candidate, const std::vector<Tensor>& inputs,
                                 const std::vector<Tensor>& expected, const MeasureOptions& options = {});

// Random inputs for a task's function: floats uniform in [-1, 1]; integers
// (indices) and booleans zero, which every index check accepts.
std::vector<Tensor> random_task_inputs(const tir::PrimFunc& f, uint64_t seed);

// `options` with the tolerance a candidate's outputs are checked to against
// `expected`: candidates sum in other orders than the default, so it scales
// with the outputs' magnitude, far below what a wrong schedule gets wrong.
MeasureOptions checked_against(const std::vector<Tensor>& expected, MeasureOptions options);

// `flat` built and run once, for a schedule known to be good (the
// default), whose outputs the candidates must match: host code in this
// process on one thread; GPU code in a child process (run_isolated), since
// a GPU driver started in this process would not work in the measuring
// children forked from it. A user error when it fails.
std::vector<Tensor> run_once(const codegen::Target& target, const tir::PrimFunc& flat,
                             const std::vector<Tensor>& inputs, double timeout_s = 120);

}  // namespace tessel::tune
