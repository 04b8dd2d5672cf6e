// EmulatedDevice: write the text to a private temporary folder, compile it
// to a shared library, dlopen it, hand it the barrier (cuda_emulator_abi.h);
// launches run each block's threads through the library's thread entries.
#include "src/codegen/cuda/cuda_emulator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "ir/core/diagnostics.h"
#include "ir/core/subprocess.h"
#include "src/codegen/cuda/cuda_emulator_abi.h"
#include "src/codegen/cuda/cuda_prelude.h"
#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::codegen {

namespace emu {
TESSEL_CUDA_EMULATOR_ABI(TESSEL_CUDA_ABI_CODE)
}  // namespace emu

namespace {

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

// Blocks one after another, each with its shared arena filled with 0xff
// bytes (NaN as floats), so that a read the schedule did not order after its
// write shows in the result.
void run_launch(const rt::GpuLaunch& l, emu::tessel_emu_thread_fn run, void** params) {
  emu::tessel_launch_dims d{{l.grid[0], l.grid[1], l.grid[2]},
                            {l.block[0], l.block[1], l.block[2]},
                            l.shared_bytes,
                            l.has_barrier ? 1 : 0};
  try {
    std::vector<unsigned char> arena(std::max<unsigned long long>(16, d.shared_bytes));
    for (unsigned bz = 0; bz < d.grid[2]; ++bz)
      for (unsigned by = 0; by < d.grid[1]; ++by)
        for (unsigned bx = 0; bx < d.grid[0]; ++bx) {
          std::fill(arena.begin(), arena.end(), 0xff);
          run_block(d, {bx, by, bz}, arena.data(), run, params);
        }
  } catch (const std::system_error& e) {  // no more threads
    throw rt::StatusError(TESSEL_ERR_KERNEL_FAILED,
                          "the CUDA emulator could not run " + l.kernel + ": " + e.what());
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

// Device memory is host memory filled with 0xff bytes (NaN as floats), so
// that a kernel reading what nothing wrote shows in its result.
class EmulatedDevice final : public rt::GpuDevice {
 public:
  explicit EmulatedDevice(const std::string& source);
  ~EmulatedDevice() override;
  EmulatedDevice(const EmulatedDevice&) = delete;
  EmulatedDevice& operator=(const EmulatedDevice&) = delete;

  std::string name() const override { return "the CUDA emulator on this CPU"; }
  rt::DevicePtr alloc(uint64_t bytes) override {
    uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, rounded);
    if (!p)
      throw rt::StatusError(TESSEL_ERR_OUT_OF_MEMORY, "out of memory allocating " + std::to_string(bytes) +
                                                          " bytes of emulated device memory");
    std::memset(p, 0xff, rounded);
    return reinterpret_cast<rt::DevicePtr>(p);
  }
  void release(rt::DevicePtr p) override { std::free(host(p)); }
  void upload(rt::DevicePtr dst, const void* src, uint64_t bytes) override {
    std::memcpy(host(dst), src, bytes);
  }
  void download(void* dst, rt::DevicePtr src, uint64_t bytes) override { std::memcpy(dst, host(src), bytes); }
  void copy(rt::DevicePtr dst, rt::DevicePtr src, uint64_t bytes) override {
    std::memmove(host(dst), host(src), bytes);
  }
  void zero(rt::DevicePtr dst, uint64_t bytes) override { std::memset(host(dst), 0, bytes); }

  void* kernel(const std::string& name) override {
    void* f = dlsym(handle_, (name + "_thread").c_str());
    if (!f)
      throw rt::StatusError(TESSEL_ERR_CORRUPT_MODEL, "the emulated CUDA library has no kernel " + name);
    return f;
  }
  void launch(void* kernel, const rt::GpuLaunch& l, void** params) override {
    run_launch(l, reinterpret_cast<emu::tessel_emu_thread_fn>(kernel), params);
  }
  void synchronize() override {}  // launches finish before they return

  // Launches finish before they return: an event is the time it is recorded.
  void* create_event() override { return new std::chrono::steady_clock::time_point(); }
  void destroy_event(void* e) override { delete static_cast<std::chrono::steady_clock::time_point*>(e); }
  void record_event(void* e) override {
    *static_cast<std::chrono::steady_clock::time_point*>(e) = std::chrono::steady_clock::now();
  }
  double seconds_between(void* start, void* end) override {
    return std::chrono::duration<double>(*static_cast<std::chrono::steady_clock::time_point*>(end) -
                                         *static_cast<std::chrono::steady_clock::time_point*>(start))
        .count();
  }

 private:
  static void* host(rt::DevicePtr p) { return reinterpret_cast<void*>(p); }

  std::filesystem::path dir_;
  void* handle_ = nullptr;
};

EmulatedDevice::EmulatedDevice(const std::string& source) : dir_(private_folder()) {
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
  using Bind = void (*)(emu::tessel_emu_sync_fn);
  auto bind = reinterpret_cast<Bind>(dlsym(handle_, "tessel_emu_bind_runtime"));
  TESSEL_ICHECK(bind != nullptr) << "the emulated CUDA library has no tessel_emu_bind_runtime";
  bind(sync_block);
}

EmulatedDevice::~EmulatedDevice() {
  if (handle_) dlclose(handle_);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace

std::unique_ptr<rt::GpuDevice> open_emulated_device(const std::string& source) {
  return std::make_unique<EmulatedDevice>(source);
}

}  // namespace tessel::codegen
