// What code is generated for: a Target, parsed once from a spec such as
// "llvm -mcpu=znver3 -mattr=+avx2" or "cuda -arch=sm_90" (or "cuda-emulated": CUDA C run on this CPU), and
// read by every stage that depends on the machine (graph passes, schedules, codegen).
//
//   Target t = parse_target("llvm");          // the host CPU, as LLVM sees it
//   t.cpu.vector_bits;                        // 512 on AVX-512, 256 on AVX2
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::codegen {

enum class TargetKind { kLlvm, kCuda };

struct CpuTarget {
  std::string triple;
  std::string cpu;                    // "znver5"
  std::vector<std::string> features;  // "+avx2", "-avx512f", ...: enabled and disabled
  int vector_bits = 0;                // the vector registers the code uses (512, 256, 128)
  int fmas_in_flight = 0;             // vector FMAs one core overlaps (latency x issue rate); 0: unknown
  int cores = 0;                      // this host's cores (what the schedules fill)
  // A kernel estimated to run shorter than this many cycles on one core stays
  // serial (sched::CpuScheduleOptions::min_parallel_cycles); 0: the schedule's
  // own. Lower where waking the other cores is cheap (no virtual machine).
  int64_t min_parallel_cycles = 0;
  int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // per core / shared; 0 where unknown
};

struct GpuTarget {
  int sm = 90;  // compute capability * 10: sm_90 for H100 and H200
  int max_threads_per_block = 1024;
  int64_t shared_bytes_per_block = 48 * 1024;  // without opting in to more
  int64_t shared_bytes_per_sm = 0;
  // The threads the GPU keeps resident at once: multiprocessors x threads per
  // multiprocessor of the architecture's flagship (the default schedules ask
  // whether a thread per output would fill it).
  int64_t resident_threads = 132 * 2048;
  int registers_per_sm = 64 * 1024;
  // -fast-math: NVRTC's --use_fast_math (exp, tanh, erf, division and
  // square roots by the hardware's approximations, denormals flushed).
  // Not under emulation, whose math is the host's.
  bool fast_math = false;
  // "cuda-emulated": the generated CUDA C runs on this CPU (cuda_emulator.h), to test it without a GPU.
  bool emulated = false;
};

struct Target {
  TargetKind kind = TargetKind::kLlvm;
  CpuTarget cpu;  // for llvm: the CPU; for cuda: the host that drives the GPU
  GpuTarget gpu;  // for cuda only
};

// A user error naming the part of spec that is wrong: an unknown kind,
// option, CPU or feature (checked against LLVM's tables), an architecture
// outside what NVRTC compiles for. extra_options are appended to the spec's
// own (the CLI's separate -mcpu / -mattr).
Target parse_target(std::string_view spec, const std::vector<std::string>& extra_options = {});

// The host CPU as LLVM detects it, as an llvm target.
Target host_target();

// What a command compiles for unless told: the host CPU, or, in a build
// without LLVM, a GPU (cuda).
Target default_target();
const char* default_target_spec();  // "llvm", or "cuda" without LLVM

// The features the target's code needs that this host's CPU lacks ("avx512f"):
// code with them would stop on an illegal instruction here. Empty for cuda.
std::vector<std::string> features_host_lacks(const Target& target);

// Several lines, one fact each, as `tessel target` prints them.
std::string describe(const Target& target);

const char* target_kind_name(TargetKind kind);

// 16 hex digits naming the CPU's feature list (for keys of what is measured per machine).
std::string features_hash(const CpuTarget& cpu);

}  // namespace tessel::codegen
