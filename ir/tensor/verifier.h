// Verifier of the tensor IR: variables defined before use (loop variables in
// their loop, iteration variables inside their block), one index per buffer
// dimension, dtypes consistent, block names unique, each block's body and init
// written only in its iteration variables and its bindings only in loop
// variables, declared regions covering the accesses, thread-bound loops only
// where the target allows them (and no tag bound twice on one path).
#pragma once

#include <string>
#include <vector>

#include "ir/tensor/function.h"

namespace tessel::tir {

struct VerifyOptions {
  bool allow_thread_bindings = false;  // true for GPU targets
  bool allow_parallel = true;          // CPU parallel loops
};

// Every problem found, one message each; empty when the function is valid.
std::vector<std::string> verify_problems(const PrimFunc& func, const VerifyOptions& options = {});
// Throws an internal error listing the problems.
void verify(const PrimFunc& func, const VerifyOptions& options = {});

}  // namespace tessel::tir
