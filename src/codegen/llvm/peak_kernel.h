// A micro-kernel that measures the target's peak f32 arithmetic, as the
// roofline needs it: generated for the target's own vector width, so that
// the peak is what code from this backend can reach on this machine.
//
//   int fma_peak(void** args)   // args[0]: int64_t* rounds, args[1]: float* sink
//     acc_j = fma(acc_j, a, b) for j < accumulators, `rounds` times; *sink = sum of acc
#pragma once

#include <memory>

#include "src/codegen/llvm/llvm_module.h"

namespace tessel::codegen {

struct PeakKernel {
  std::unique_ptr<JitModule> code;
  KernelFn fn = nullptr;
  int accumulators = 0;
  double flops_per_round = 0;  // accumulators x lanes x 2
};

// accumulators 0: independent accumulators enough to keep two FMA pipes busy
// through their latency, within the target's vector registers.
PeakKernel compile_peak_kernel(const CpuTarget& target, int accumulators = 0);

// How many independent vector FMAs one core of this host overlaps (the FMA
// latency times the FMAs issued per cycle at the target's vector width): the
// time of one dependent chain over the time per FMA of many, rounded to a
// power of two. Runs on the calling thread, for about a millisecond.
int measure_fmas_in_flight(const CpuTarget& target);

}  // namespace tessel::codegen
