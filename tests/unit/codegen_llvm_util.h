// What the LLVM backend's tests share: a scheduled function compiled through
// O3 and run by the JIT, a vectorized unary function, the host's feature sets.
#pragma once

#include <string>
#include <vector>

#include "ir/core/tensor.h"
#include "ir/tensor/function.h"
#include "src/codegen/llvm/llvm_module.h"

namespace tessel::codegen_test {

// Compiles func (scheduled, not flattened) and runs it on inputs; the
// optimised LLVM IR in *ir when given.
std::vector<Tensor> run_compiled(const tir::PrimFunc& func, const std::vector<Tensor>& inputs,
                                 std::string* ir = nullptr,
                                 const codegen::CpuTarget& target = codegen::host_cpu_target());

// A function y = f(x) over n elements, the loop vectorized.
tir::PrimFunc unary_func(tir::Intrinsic op, DType t, int64_t n);

// The host, and on an AVX-512 host the same CPU without it: the vector width
// and the reciprocal estimate (14 bits or 12 before the Newton step) differ.
std::vector<codegen::CpuTarget> host_feature_sets();

}  // namespace tessel::codegen_test
