// A GPU through the CUDA driver API, libcuda opened with dlopen
// ($TESSEL_LIBCUDA, else libcuda.so.1), so that Tessel starts where there is
// no driver and only running on a GPU needs one. The program is loaded as
// its CUBIN when the GPU is the architecture it was compiled for, else as
// its PTX, which the driver compiles for a newer GPU.
#pragma once

#include <memory>
#include <string>

#include "src/runtime/gpu/gpu_device.h"

namespace tessel::rt {

// Why this process cannot open the CUDA driver (no library, a stub library,
// no GPU), or empty when it can.
std::string cuda_driver_unavailable_reason();

// The first GPU with the image loaded; a StatusError saying why not (no
// driver, no GPU, a GPU older than the image's architecture).
std::unique_ptr<GpuDevice> open_cuda_device(const CudaImage& image);

}  // namespace tessel::rt
