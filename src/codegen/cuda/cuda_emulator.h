// Generated CUDA C run on this CPU: the same text compiled as C++ by the
// host's C++ compiler ($TESSEL_HOST_CXX, else $CXX, else c++) with the
// prelude's emulation of the CUDA execution model (cuda_prelude.h), loaded
// with dlopen, behind the GpuDevice seam the CUDA driver also implements:
// "device memory" is host memory, a launch runs its blocks one after
// another. For testing generated GPU code and the GPU runtime where there is
// no GPU: slow, not a way to run models fast.
#pragma once

#include <memory>
#include <string>

#include "src/runtime/gpu/gpu_device.h"

namespace tessel::codegen {

// A user error with the compiler's output when the host compiler is
// missing or rejects the text.
std::unique_ptr<rt::GpuDevice> open_emulated_device(const std::string& source);

}  // namespace tessel::codegen
