// The tensor IR interpreter: runs any PrimFunc on host tensors, before or
// after scheduling. Thread-bound code runs as TENSOR_IR.md describes: loops
// bound to blockIdx.* run one thread block after another; inside a thread
// block, statements without a barrier run for each thread (with its own local
// buffers; shared buffers belong to the block), and a barrier separates the
// phases. Out-of-bounds accesses, reads of never-written scratch memory and
// divergent barriers are reported as InterpreterError, never undefined.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/core/tensor.h"
#include "ir/tensor/function.h"

namespace tessel::tir {

class InterpreterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ThreadOrder { kForward, kReverse, kShuffled };

struct InterpretOptions {
  ThreadOrder thread_order = ThreadOrder::kForward;
  uint64_t shuffle_seed = 0;
};

// Runs func with inputs bound to func->inputs (by position); returns one
// tensor per func->outputs. Checks dtypes and shapes of the inputs.
std::vector<Tensor> interpret(const PrimFunc& func, const std::vector<Tensor>& inputs,
                              const InterpretOptions& options = {});

}  // namespace tessel::tir
