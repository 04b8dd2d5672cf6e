// EmulatedCudaLibrary: write the text to a private temporary folder, compile
// it to a shared library, dlopen it, hand it the launcher, the barrier and
// the error reporter (cuda_emulator_abi.h).
#include "src/codegen/cuda/cuda_emulator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "ir/core/diagnostics.h"
#include "ir/core/subprocess.h"
#include "src/codegen/cuda/cuda_emulator_abi.h"
#include "src/codegen/cuda/cuda_prelude.h"

namespace tessel::codegen {

namespace emu {
TESSEL_CUDA_EMULATOR_ABI(TESSEL_CUDA_ABI_CODE)
}  // namespace emu

namespace {

KernelErrorReporter g_report = nullptr;  // set by every library's constructor to the same runtime function

// The barrier an emulated __syncthreads waits at.
void sync_block(void* barrier) {
  static_cast<std::barrier<>*>(barrier)->arrive_and_wait();
}

emu::tessel_dim3 thread_index(unsigned t, const unsigned* block) {
  return {t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])};
}

// One block's threads one after another (no barrier: nothing can tell), or
// each on an OS thread of its own, all meeting at the block's barrier.
void run_block(const emu::tessel_launch_dims& d, emu::tessel_dim3 block, unsigned char* arena,
               emu::tessel_emu_thread_fn run, void* closure) {
  unsigned threads = d.block[0] * d.block[1] * d.block[2];
  if (!d.has_barrier) {
    for (unsigned t = 0; t < threads; ++t) {
      emu::tessel_emu_thread self{block, thread_index(t, d.block), nullptr, arena};
      run(&self, closure);
    }
    return;
  }
  std::barrier<> sync{std::ptrdiff_t(threads)};
  std::vector<std::thread> team;
  team.reserve(threads);
  for (unsigned t = 0; t < threads; ++t)
    team.emplace_back([&, t] {
      emu::tessel_emu_thread self{block, thread_index(t, d.block), &sync, arena};
      run(&self, closure);
      sync.arrive_and_drop();  // a thread that returned no longer holds the others back
    });
  for (std::thread& t : team) t.join();
}

// The launcher: blocks one after another, each with its shared arena filled
// with 0xff bytes (NaN as floats), so that a read the schedule did not order
// after its write shows in the result.
int launch(const emu::tessel_launch_dims* d, emu::tessel_emu_thread_fn run, void* closure) {
  try {
    std::vector<unsigned char> arena(std::max<unsigned long long>(16, d->shared_bytes));
    for (unsigned bz = 0; bz < d->grid[2]; ++bz)
      for (unsigned by = 0; by < d->grid[1]; ++by)
        for (unsigned bx = 0; bx < d->grid[0]; ++bx) {
          std::fill(arena.begin(), arena.end(), 0xff);
          run_block(*d, {bx, by, bz}, arena.data(), run, closure);
        }
    return 0;
  } catch (const std::exception& e) {  // no more threads, no memory
    std::string message = std::string("the CUDA emulator could not run a launch: ") + e.what();
    if (g_report) g_report(message.c_str(), nullptr, 0);
    return 1;
  }
}

std::vector<std::string> host_compiler() {
  for (const char* name : {"TESSEL_HOST_CXX", "CXX"})
    if (const char* v = std::getenv(name); v && *v) return split_words(v);
  return {"c++"};
}

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

}  // namespace

EmulatedCudaLibrary::EmulatedCudaLibrary(const std::string& source, KernelErrorReporter report)
    : dir_(private_folder()) {
  std::filesystem::path text = dir_ / "kernels.cpp", library = dir_ / "kernels.so";
  std::ofstream(text) << source;
  std::vector<std::string> argv = host_compiler();
  for (const char* flag : {"-std=c++20", "-O1", "-fwrapv", "-fPIC", "-shared", "-pthread", "-w"})
    argv.push_back(flag);
  argv.push_back(std::string("-D") + kCudaEmulationMacro);
  for (const std::string& a : {std::string("-o"), library.string(), text.string()}) argv.push_back(a);
  FinishedProcess done = run_capturing(argv);
  TESSEL_USER_CHECK(done.spawn_error.empty(), Span{})
      << "cannot run the host C++ compiler '" << argv[0] << "' to emulate CUDA (" << done.spawn_error
      << "); set TESSEL_HOST_CXX to a C++20 compiler";
  TESSEL_USER_CHECK(done.exit_status == 0, Span{})
      << "compiling the emulated CUDA C failed: " << command_line(argv) << "\n"
      << done.output;
  handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  TESSEL_USER_CHECK(handle_ != nullptr, Span{}) << "cannot load " << library.string() << ": " << dlerror();
  using Bind = void (*)(emu::tessel_emu_report_fn, emu::tessel_emu_launch_fn, emu::tessel_emu_sync_fn);
  auto bind = reinterpret_cast<Bind>(dlsym(handle_, "tessel_emu_bind_runtime"));
  TESSEL_ICHECK(bind != nullptr) << "the emulated CUDA library has no tessel_emu_bind_runtime";
  g_report = report;
  bind(reinterpret_cast<emu::tessel_emu_report_fn>(report), launch, sync_block);
}

EmulatedCudaLibrary::~EmulatedCudaLibrary() {
  if (handle_) dlclose(handle_);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

KernelFn EmulatedCudaLibrary::entry(const std::string& symbol) const {
  void* f = dlsym(handle_, symbol.c_str());
  TESSEL_ICHECK(f != nullptr) << "the emulated CUDA library has no function " << symbol;
  return reinterpret_cast<KernelFn>(f);
}

}  // namespace tessel::codegen
