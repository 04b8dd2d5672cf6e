// What the GPU runtime needs of a compiled CUDA program, as plain data: per
// function, its launches in order (kernel name, grid, block, shared bytes)
// and where each launch's arguments come from (a parameter of the function
// or an offset into its scratch), and the formats of the run-time checks
// the kernels can fail. The CUDA backend fills it from its CudaProgram; the
// runner (gpu_runner.h) executes it on any GpuDevice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::rt {

struct GpuArg {
  enum class Kind : uint8_t { kParam, kScratch };
  Kind kind = Kind::kParam;
  uint64_t value = 0;  // the parameter's number, or the byte offset into the scratch
};

struct GpuLaunch {
  std::string kernel;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint64_t shared_bytes = 0;
  bool has_barrier = false;
  std::vector<GpuArg> args;  // then, last, the function's error slot
};

struct GpuFunction {
  std::string symbol;
  uint32_t num_inputs = 0, num_outputs = 0;
  std::vector<uint64_t> param_bytes;  // inputs, then outputs
  uint64_t scratch_bytes = 0;
  std::vector<GpuLaunch> launches;
};

// A run-time check: "{}" in the format for each of its `values` values.
struct GpuAssert {
  std::string format;
  int32_t values = 0;
};

// The compiled kernels for a GPU: the CUBIN for one architecture, and PTX
// the driver compiles for a newer one. Empty for the emulator.
struct CudaImage {
  int32_t sm = 0;  // the CUBIN's architecture (90: sm_90)
  std::string cubin;
  std::string ptx;
};

struct GpuProgram {
  std::vector<GpuFunction> functions;
  std::vector<GpuAssert> asserts;
  CudaImage image;
};

// The checked binary form a GPU model library embeds ("TSLGPU\0\0", the
// format version, the program, its checksum64 last).
std::vector<uint8_t> serialize_gpu_program(const GpuProgram& program);
// Throws PlanError on anything short, corrupt or inconsistent (an argument
// naming no parameter, a block of more than 1024 threads, a checksum mismatch).
GpuProgram deserialize_gpu_program(const uint8_t* data, size_t size);

// What a failed check of a launch leaves in the function's error slot
// (struct tessel_error of the generated code's prelude).
struct GpuErrorSlot {
  int32_t state = 0;
  int32_t id = 0;
  int64_t values[4] = {0, 0, 0, 0};
};

}  // namespace tessel::rt
