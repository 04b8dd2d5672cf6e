// The text every generated CUDA C file starts with: the scalar helpers that
// give the tensor IR's semantics (ir/tensor/scalar_semantics.h) to CUDA C
// (floor division, NaN-propagating min/max, x86 float-to-int, 16-bit floats
// stored as bits, the error slot a failed assert fills), written once for
// both ways the text is compiled: by NVRTC for a GPU, and as C++ for this
// host by the emulator (cuda_emulator.h), where the prelude also supplies
// blockIdx/threadIdx, __syncthreads and the shared arena of a thread block.
#pragma once

#include <string>

namespace tessel::codegen {

// The macro the emulator defines (-D) when it compiles generated CUDA C as C++.
inline constexpr const char* kCudaEmulationMacro = "TESSEL_CUDA_EMULATION";

// The prelude text; generated code follows it in one translation unit.
const std::string& cuda_prelude();

}  // namespace tessel::codegen
