// The CUDA emulator's device: "device memory" is host memory, and a launch
// runs its blocks one after another, each block's threads one after another
// or, when the kernel has barriers, each on an OS thread of its own meeting
// the others at a real barrier. The kernels are emulated code's thread
// entries (emulator_abi.h): a library the compiler built and loaded
// (src/codegen/cuda/cuda_emulator.h), or those linked into a model library.
// For testing generated GPU code and the GPU runtime where there is no GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "src/runtime/gpu/gpu_device.h"

namespace tessel::rt {

struct EmulatedKernelTable {
  const void* kernels = nullptr;  // tessel_emu_kernel[count]
  uint32_t count = 0;
};

// on_close runs when the device is destroyed (unloading the kernels' library).
std::unique_ptr<GpuDevice> open_emulated_device(EmulatedKernelTable table,
                                                std::function<void()> on_close = {});

}  // namespace tessel::rt
