// CUDA C compiled in this process by NVRTC (nvrtc_library.h) for one GPU
// architecture: the PTX, and the CUBIN a driver loads without compiling.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessel::codegen {

// What ptxas reports of one kernel for the real architecture.
struct KernelResources {
  int registers = 0;
  int64_t stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0;
};

struct NvrtcResult {
  std::string ptx;
  std::vector<char> cubin;
  std::string log;                                   // NVRTC's log of the CUBIN compile (ptxas's report)
  std::map<std::string, KernelResources> resources;  // per __global__ function
};

// The per-kernel lines of a ptxas --verbose log ("Compiling entry function
// 'k' for 'sm_90'", "... bytes stack frame, ... bytes spill stores, ...",
// "Used N registers, ...").
std::map<std::string, KernelResources> parse_ptxas_report(const std::string& log);

// A user error when NVRTC is missing, and an internal error with NVRTC's log
// (the generated text first lines around it) when the text does not compile:
// generated code that NVRTC rejects is Tessel's bug.
// fast_math: --use_fast_math (GpuTarget::fast_math).
NvrtcResult nvrtc_compile(const std::string& source, const std::string& name, int sm, bool fast_math = false);

}  // namespace tessel::codegen
