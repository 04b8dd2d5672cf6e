// Internal to the CUDA backend: a reduction across the threads of a block.
// A schedule may bind a reduction loop to threadIdx (the threads of a block
// share one output); in flattened tensor IR that is a threadIdx loop whose
// body, under serial loops and guards, is one store X[I] = X[I] op e with
// indices I that use none of the loops inside it. Each thread then combines
// its iterations in a register, the block combines the threads' values
// (warp shuffles, then one value per warp through shared memory), and one
// thread adds the result to X[I]. Any other threadIdx loop that writes one
// place from every thread is a race, and is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/tensor/function.h"

namespace tessel::codegen::cuda_detail {

struct CrossThreadReduction {
  const tir::StoreNode* store = nullptr;
  tir::ExprKind op = tir::ExprKind::kAdd;  // kAdd, kMul, kMax or kMin
  tir::Expr operand;                       // e
};

// The reduction loop performs, if it is one; nullopt for a loop whose
// stores each depend on its thread. An internal error for a threadIdx loop
// whose threads would all write one place otherwise, or combine a type other
// than f32 and f64.
std::optional<CrossThreadReduction> cross_thread_reduction(const tir::ForNode& loop);

// The prelude's block-wide combine for op and dtype ("tessel_block_add_f32").
std::string block_reduce_function(tir::ExprKind op, DType dtype);

// The identity of op, as a C float constant.
std::string reduce_identity(tir::ExprKind op);

// The shared scratch a block reduction needs: one value per thread (the
// emulator's exchange uses it all; a GPU, one per warp).
int64_t block_reduce_scratch_bytes(int64_t threads);

}  // namespace tessel::codegen::cuda_detail
