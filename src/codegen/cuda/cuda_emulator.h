// Generated CUDA C run on this CPU: the same text compiled as C++ by the
// host's C++ compiler ($TESSEL_HOST_CXX, else $CXX, else c++) with the
// prelude's emulation of the CUDA execution model (cuda_prelude.h), loaded
// with dlopen, behind the GpuDevice seam the CUDA driver also implements:
// "device memory" is host memory, a launch runs its blocks one after
// another. For testing generated GPU code and the GPU runtime where there is
// no GPU: slow, not a way to run models fast.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "src/runtime/gpu/gpu_device.h"

namespace tessel::codegen {

// A user error with the compiler's output when the host compiler is
// missing or rejects the text.
std::unique_ptr<rt::GpuDevice> open_emulated_device(const std::string& source);

// The host compiler's command for generated CUDA C compiled for emulation:
// to a shared library, or to an object (-c) for a model library.
std::vector<std::string> host_compile_command(const std::string& source_path, const std::string& output_path,
                                              bool shared_library);
// Runs it; a user error with its output when it fails.
void run_host_compiler(const std::vector<std::string>& argv);

// A new empty folder under the temporary directory, for this process alone.
std::filesystem::path private_folder();

}  // namespace tessel::codegen
