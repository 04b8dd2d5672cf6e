// The runtime functions generated kernels call by name (kernel_abi.h), for
// whoever loads kernels into this process (a JIT-compiled model, a tuning
// candidate, a test): every one in one list, so that a loader cannot miss one
// added later (a kernel calling it would fail to link at load time).
#pragma once

#include <cstdint>
#include <vector>

#include "src/runtime/kernel_abi.h"

namespace tessel::rt {

using ParallelFor = void (*)(int64_t n, tessel_rt_parallel_body body, void* closure);

struct KernelRuntimeSymbol {
  const char* name;
  void* address;
};

// `parallel_for` runs the kernels' parallel loops: the process's pool
// (tessel_rt_parallel_for) unless given.
std::vector<KernelRuntimeSymbol> kernel_runtime_symbols(ParallelFor parallel_for = nullptr);

}  // namespace tessel::rt
