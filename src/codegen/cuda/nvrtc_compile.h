// CUDA C compiled in this process by NVRTC (nvrtc_library.h) for one GPU
// architecture: the PTX, and the CUBIN a driver loads without compiling.
#pragma once

#include <string>
#include <vector>

namespace tessel::codegen {

struct NvrtcResult {
  std::string ptx;
  std::vector<char> cubin;
  std::string log;  // NVRTC's warnings, if any
};

// A user error when NVRTC is missing, and an internal error with NVRTC's log
// (the generated text first lines around it) when the text does not compile:
// generated code that NVRTC rejects is Tessel's bug.
NvrtcResult nvrtc_compile(const std::string& source, const std::string& name, int sm);

}  // namespace tessel::codegen
