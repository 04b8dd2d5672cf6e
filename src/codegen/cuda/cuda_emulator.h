// Generated CUDA C run on this CPU: the same text compiled as C++ by the
// host's C++ compiler ($TESSEL_HOST_CXX, else $CXX, else c++) with the
// prelude's emulation of the CUDA execution model (cuda_prelude.h), loaded
// with dlopen. Each function's host entry, int symbol(void* const* args),
// runs its launches on host memory. For testing generated GPU code where
// there is no GPU: slow, not a way to run models fast.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "src/codegen/backend.h"

namespace tessel::codegen {

// How the generated code reports a failed run-time check (tessel_rt_kernel_error's signature).
using KernelErrorReporter = void (*)(const char* format, const int64_t* values, int32_t count);

class EmulatedCudaLibrary {
 public:
  // A user error with the compiler's output when the host compiler is
  // missing or rejects the text.
  EmulatedCudaLibrary(const std::string& source, KernelErrorReporter report);
  ~EmulatedCudaLibrary();
  EmulatedCudaLibrary(const EmulatedCudaLibrary&) = delete;
  EmulatedCudaLibrary& operator=(const EmulatedCudaLibrary&) = delete;

  // The host entry of a function; an internal error when the library has none.
  KernelFn entry(const std::string& symbol) const;

 private:
  std::filesystem::path dir_;
  void* handle_ = nullptr;
};

}  // namespace tessel::codegen
