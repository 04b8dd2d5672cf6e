// The GPU backend behind the Backend interface: CUDA C from the tensor IR
// (cuda_codegen.h), compiled by NVRTC for the target's architecture; for
// "cuda-emulated", compiled as C++ for this host and run here instead
// (cuda_emulator.h).
#pragma once

#include <memory>

#include "src/codegen/backend.h"

namespace tessel::codegen {

// A user error when the target cannot be served here: cuda without NVRTC.
std::unique_ptr<Backend> make_cuda_backend(const Target& target);

}  // namespace tessel::codegen
