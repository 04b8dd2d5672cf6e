#include "src/runtime/runtime_symbols.h"

namespace tessel::rt {

std::vector<KernelRuntimeSymbol> kernel_runtime_symbols(ParallelFor parallel_for) {
  ParallelFor pool = parallel_for ? parallel_for : &tessel_rt_parallel_for;
  return {{"tessel_rt_parallel_for", reinterpret_cast<void*>(pool)},
          {"tessel_rt_kernel_error", reinterpret_cast<void*>(&tessel_rt_kernel_error)},
          {"tessel_rt_scratch_alloc", reinterpret_cast<void*>(&tessel_rt_scratch_alloc)},
          {"tessel_rt_scratch_free", reinterpret_cast<void*>(&tessel_rt_scratch_free)},
          {"tessel_rt_small_decode", reinterpret_cast<void*>(&tessel_rt_small_decode)},
          {"tessel_rt_small_encode", reinterpret_cast<void*>(&tessel_rt_small_encode)}};
}

}  // namespace tessel::rt
