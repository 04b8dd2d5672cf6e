// The object a GPU model library is linked from (with the model runtime
// archive for GPUs, src/runtime/gpu/model_engine_gpu.cpp): the plan, the
// weights and the GPU program (launch table, CUBIN and PTX) as data, and,
// for the emulator, the kernels compiled for this host. The host C++
// compiler builds it: the data through .incbin, so no size is a problem.
#pragma once

#include <string>

#include "src/codegen/backend.h"
#include "src/codegen/cuda/cuda_codegen.h"
#include "src/runtime/gpu/gpu_program.h"

namespace tessel::codegen {

// program: its functions in the order of data.kernel_order. emulated_source:
// the CUDA C to compile in for the emulator, or empty for a GPU.
void write_cuda_model_object(const rt::GpuProgram& program, const std::string& emulated_source,
                             const ModelData& data, const std::string& path);

// The program's functions reordered as kernel_order names them; an internal
// error when one is missing.
rt::GpuProgram in_kernel_order(rt::GpuProgram program, const std::vector<std::string>& kernel_order);

}  // namespace tessel::codegen
