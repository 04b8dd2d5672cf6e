// link_model_library: the last step of `tessel compile`, the model's object
// files and the model runtime (src/runtime/) linked into a model.so that
// exports only the C ABI of include/tessel/runtime.h.
#pragma once

#include <string>
#include <vector>

namespace tessel::driver {

// Which model runtime a library links: tessel_model_runtime, whose engine
// runs host kernels, or tessel_model_runtime_gpu, whose engine runs a GPU program.
enum class ModelRuntime { kCpu, kGpu };

// Runs ${CC:-cc} -shared on the objects and the model runtime archive
// (TESSEL_MODEL_RUNTIME_ARCHIVE, or TESSEL_MODEL_RUNTIME_GPU_ARCHIVE, in the
// environment overrides the one built with this compiler), with a version
// script that keeps every symbol but the ABI's local. Throws UserError with
// the linker's output when it fails or the compiler cannot be run.
void link_model_library(const std::vector<std::string>& object_files, const std::string& output_so,
                        ModelRuntime runtime = ModelRuntime::kCpu);

}  // namespace tessel::driver
