// EmulatedDevice: host memory behind device pointers, the launcher, the
// barrier, and clock readings as events.
#include "src/runtime/gpu/emulated_device.h"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "src/runtime/gpu/emulator_abi.h"
#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::rt {

namespace emu {
TESSEL_CUDA_EMULATOR_ABI(TESSEL_CUDA_ABI_CODE)
}  // namespace emu

namespace {

// The barrier an emulated __syncthreads waits at.
void sync_block(void* barrier) {
  static_cast<std::barrier<>*>(barrier)->arrive_and_wait();
}

emu::tessel_dim3 thread_index(unsigned t, const uint32_t* block) {
  return {t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])};
}

// The blocks of a launch without barriers: each block's threads one after
// another (nothing can tell).
void run_serially(const GpuLaunch& l, emu::tessel_dim3 block, unsigned char* arena,
                  emu::tessel_emu_thread_fn run, void* closure) {
  unsigned threads = l.block[0] * l.block[1] * l.block[2];
  for (unsigned t = 0; t < threads; ++t) {
    emu::tessel_emu_thread self{block, thread_index(t, l.block), nullptr, nullptr, arena, nullptr};
    run(&self, closure);
  }
}

// The blocks of a launch with barriers, one after another, each GPU thread
// on an OS thread of a team that serves every block: the launching thread
// sets a block up (its barrier, its arena), releases the team at `start`
// and waits for it at `end`. A thread that returns early leaves its block's
// barrier (arrive_and_drop), not the team's.
class BlockTeam {
 public:
  BlockTeam(const GpuLaunch& l, emu::tessel_emu_thread_fn run, void* closure, unsigned char* arena)
      : launch_(l),
        threads_(l.block[0] * l.block[1] * l.block[2]),
        run_(run),
        closure_(closure),
        arena_(arena),
        exchange_(threads_),
        start_(std::ptrdiff_t(threads_) + 1),
        end_(std::ptrdiff_t(threads_) + 1) {
    team_.reserve(threads_);
    try {
      for (unsigned t = 0; t < threads_; ++t) team_.emplace_back([this, t] { serve(t); });
    } catch (...) {
      stop();
      throw;
    }
  }
  ~BlockTeam() { stop(); }

  void run_block(emu::tessel_dim3 block) {
    block_ = block;
    sync_.emplace(std::ptrdiff_t(threads_));
    start_.arrive_and_wait();
    end_.arrive_and_wait();
  }

 private:
  void serve(unsigned t) {
    while (true) {
      start_.arrive_and_wait();
      if (done_) return;
      emu::tessel_emu_thread self{block_,  thread_index(t, launch_.block),
                                  &*sync_, sync_block,
                                  arena_,  reinterpret_cast<unsigned char*>(exchange_.data())};
      run_(&self, closure_);
      sync_->arrive_and_drop();
      end_.arrive_and_wait();
    }
  }
  // Releases the team once more with nothing to run, so that its threads
  // end; threads that could not be created are dropped from the count.
  void stop() {
    done_ = true;
    for (size_t i = team_.size(); i < threads_; ++i) start_.arrive_and_drop();
    start_.arrive_and_wait();
    for (std::thread& t : team_) t.join();
    team_.clear();
  }

  const GpuLaunch& launch_;
  unsigned threads_;
  emu::tessel_emu_thread_fn run_;
  void* closure_;
  unsigned char* arena_;
  std::vector<uint64_t> exchange_;  // what a warp shuffle passes between threads
  std::barrier<> start_, end_;
  std::optional<std::barrier<>> sync_;
  emu::tessel_dim3 block_{};
  bool done_ = false;
  std::vector<std::thread> team_;
};

// Blocks one after another, each with its shared arena filled with 0xff
// bytes (NaN as floats), so that a read the schedule did not order after its
// write shows in the result.
void run_launch(const GpuLaunch& l, emu::tessel_emu_thread_fn run, void** params) {
  try {
    std::vector<unsigned char> arena(std::max<uint64_t>(16, l.shared_bytes));
    std::optional<BlockTeam> team;
    if (l.has_barrier) team.emplace(l, run, params, arena.data());
    for (unsigned bz = 0; bz < l.grid[2]; ++bz)
      for (unsigned by = 0; by < l.grid[1]; ++by)
        for (unsigned bx = 0; bx < l.grid[0]; ++bx) {
          std::fill(arena.begin(), arena.end(), 0xff);
          if (team)
            team->run_block({bx, by, bz});
          else
            run_serially(l, {bx, by, bz}, arena.data(), run, params);
        }
  } catch (const std::system_error& e) {  // no more threads
    throw StatusError(TESSEL_ERR_KERNEL_FAILED,
                      "the CUDA emulator could not run " + l.kernel + ": " + e.what());
  }
}

using Clock = std::chrono::steady_clock;

// Device memory is host memory filled with 0xff bytes (NaN as floats), so
// that a kernel reading what nothing wrote shows in its result.
class EmulatedDevice final : public GpuDevice {
 public:
  EmulatedDevice(EmulatedKernelTable table, std::function<void()> on_close)
      : table_(table), on_close_(std::move(on_close)) {}
  ~EmulatedDevice() override {
    if (on_close_) on_close_();
  }

  std::string name() const override { return "the CUDA emulator on this CPU"; }
  DevicePtr alloc(uint64_t bytes) override {
    uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, rounded);
    if (!p)
      throw StatusError(TESSEL_ERR_OUT_OF_MEMORY, "out of memory allocating " + std::to_string(bytes) +
                                                      " bytes of emulated device memory");
    std::memset(p, 0xff, rounded);
    return reinterpret_cast<DevicePtr>(p);
  }
  void release(DevicePtr p) override { std::free(host(p)); }
  void upload(DevicePtr dst, const void* src, uint64_t bytes) override { std::memcpy(host(dst), src, bytes); }
  void download(void* dst, DevicePtr src, uint64_t bytes) override { std::memcpy(dst, host(src), bytes); }
  void copy(DevicePtr dst, DevicePtr src, uint64_t bytes) override {
    std::memmove(host(dst), host(src), bytes);
  }
  void zero(DevicePtr dst, uint64_t bytes) override { std::memset(host(dst), 0, bytes); }

  void* kernel(const std::string& name) override {
    const auto* kernels = static_cast<const emu::tessel_emu_kernel*>(table_.kernels);
    for (uint32_t i = 0; i < table_.count; ++i)
      if (kernels[i].name && name == kernels[i].name) return reinterpret_cast<void*>(kernels[i].run);
    throw StatusError(TESSEL_ERR_CORRUPT_MODEL, "the emulated CUDA code has no kernel " + name);
  }
  // One queue: what is queued runs before the call returns.
  void zero_on(void*, DevicePtr dst, uint64_t bytes) override { zero(dst, bytes); }
  void copy_on(void*, DevicePtr dst, DevicePtr src, uint64_t bytes) override { copy(dst, src, bytes); }
  void launch(void* kernel, const GpuLaunch& l, void** params, void*) override {
    run_launch(l, reinterpret_cast<emu::tessel_emu_thread_fn>(kernel), params);
  }
  void synchronize() override {}  // launches finish before they return
  void synchronize_stream(void*) override {}

  // Launches finish before they return: an event is the time it is recorded.
  void* create_event() override { return new Clock::time_point(); }
  void destroy_event(void* e) override { delete static_cast<Clock::time_point*>(e); }
  void record_event(void* e) override { *static_cast<Clock::time_point*>(e) = Clock::now(); }
  double seconds_between(void* start, void* end) override {
    return std::chrono::duration<double>(*static_cast<Clock::time_point*>(end) -
                                         *static_cast<Clock::time_point*>(start))
        .count();
  }

 private:
  static void* host(DevicePtr p) { return reinterpret_cast<void*>(p); }

  EmulatedKernelTable table_;
  std::function<void()> on_close_;
};

}  // namespace

std::unique_ptr<GpuDevice> open_emulated_device(EmulatedKernelTable table, std::function<void()> on_close) {
  return std::make_unique<EmulatedDevice>(table, std::move(on_close));
}

}  // namespace tessel::rt
