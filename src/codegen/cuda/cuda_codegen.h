// Flattened tensor IR -> CUDA C. Each top-level loop nest of a function (a
// stage: a padding copy, a conv, its epilogue) becomes one __global__ kernel,
// launched with the grid and thread block its bound loops give
// (blockIdx.* / threadIdx.* extents); the function's intermediates live in
// global scratch between the launches; shared buffers are views of one
// dynamic shared arena per block; barriers are __syncthreads.
//
//   CudaProgram p = generate_cuda({{"k0", flat_func}}, target.gpu);
//   p.source;                       // the prelude, the kernels, and (under
//                                   // TESSEL_CUDA_EMULATION) a thread entry per kernel
//   p.functions[0].launches[0];     // kernel name, grid, block, shared bytes
//   rt::GpuProgram table = gpu_program(p);  // what the GPU runtime runs
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/codegen/backend.h"
#include "src/runtime/gpu/gpu_program.h"

namespace tessel::codegen {

struct CudaLaunch {
  std::string kernel;  // the __global__ function's name
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t shared_bytes = 0;  // dynamic shared memory per block
  bool has_barrier = false;
  std::vector<tir::Buffer> buffers;  // its parameters in order (then the error slot)
};

// One tensor-IR function: its launches in order and the global scratch
// (the function's intermediates, at byte offsets of one allocation).
struct CudaFunction {
  std::string symbol;
  std::vector<tir::Buffer> params;  // inputs, then outputs
  size_t num_inputs = 0;
  std::vector<tir::Buffer> scratch;
  std::vector<int64_t> scratch_offsets;
  int64_t scratch_bytes = 0;
  std::vector<CudaLaunch> launches;
};

// A run-time check of the generated code (a gathered index out of range):
// the kernels know it by its number.
struct CudaAssert {
  std::string format;  // "{}" for each value, as AssertNode
  int values = 0;
};

struct CudaProgram {
  std::string source;
  std::vector<CudaFunction> functions;
  std::vector<CudaAssert> asserts;
};

// A user error when a launch cannot run on the target: a thread-bound loop
// whose extent is not a constant, more threads per block or shared memory
// than the architecture allows.
CudaProgram generate_cuda(const std::vector<KernelSource>& kernels, const GpuTarget& gpu);

// The program's launch table for the runtime (src/runtime/gpu/gpu_runner.h).
rt::GpuProgram gpu_program(const CudaProgram& program);

}  // namespace tessel::codegen
