// The emulated library: the text written to a private temporary folder,
// compiled to a shared library by the host compiler and dlopened; its kernel
// table goes to the runtime's emulated device (src/runtime/gpu/emulated_device.h),
// which unloads it when closed.
#include "src/codegen/cuda/cuda_emulator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "ir/core/diagnostics.h"
#include "ir/core/subprocess.h"
#include "src/codegen/cuda/cuda_prelude.h"
#include "src/runtime/gpu/emulated_device.h"

namespace tessel::codegen {

namespace {

std::vector<std::string> host_compiler() {
  for (const char* name : {"TESSEL_HOST_CXX", "CXX"})
    if (const char* v = std::getenv(name); v && *v) return split_words(v);
  return {"c++"};
}

}  // namespace

std::filesystem::path private_folder() {
  static std::atomic<int> counter{0};
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("tessel_cuda_emu_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  TESSEL_USER_CHECK(std::filesystem::create_directory(dir, ec), Span{})
      << "cannot create " << dir.string() << ": " << ec.message();
  return dir;
}

std::vector<std::string> host_compile_command(const std::string& source_path, const std::string& output_path,
                                              bool shared_library) {
  std::vector<std::string> argv = host_compiler();
  for (const char* flag : {"-std=c++20", "-O1", "-fwrapv", "-fPIC", "-pthread", "-w"}) argv.push_back(flag);
  argv.push_back(shared_library ? "-shared" : "-c");
  argv.push_back(std::string("-D") + kCudaEmulationMacro);
  for (const std::string& a : {std::string("-o"), output_path, source_path}) argv.push_back(a);
  return argv;
}

void run_host_compiler(const std::vector<std::string>& argv) {
  FinishedProcess done = run_capturing(argv);
  TESSEL_USER_CHECK(done.spawn_error.empty(), Span{})
      << "cannot run the host C++ compiler '" << argv[0] << "' (" << done.spawn_error
      << "); set TESSEL_HOST_CXX to a C++20 compiler";
  TESSEL_USER_CHECK(done.exit_status == 0, Span{})
      << "compiling the CUDA C for this host failed: " << command_line(argv) << "\n"
      << done.output;
}

std::unique_ptr<rt::GpuDevice> open_emulated_device(const std::string& source) {
  std::filesystem::path dir = private_folder();
  auto remove_dir = [dir] {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  };
  void* handle = nullptr;
  try {
    std::filesystem::path text = dir / "kernels.cpp", library = dir / "kernels.so";
    std::ofstream(text) << source;
    run_host_compiler(host_compile_command(text.string(), library.string(), true));
    handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    TESSEL_USER_CHECK(handle != nullptr, Span{}) << "cannot load " << library.string() << ": " << dlerror();
  } catch (...) {
    remove_dir();
    throw;
  }
  auto close = [handle, remove_dir] {
    dlclose(handle);
    remove_dir();
  };
  auto* kernels = dlsym(handle, "tessel_emu_kernels");
  auto* count = static_cast<const unsigned*>(dlsym(handle, "tessel_emu_kernel_count"));
  if (!kernels || !count) close();
  TESSEL_ICHECK(kernels && count) << "the emulated CUDA library has no kernel table";
  return rt::open_emulated_device({kernels, *count}, close);
}

}  // namespace tessel::codegen
