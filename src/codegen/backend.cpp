// make_backend: the backend that serves a target kind.
#include "src/codegen/backend.h"

#include "ir/core/diagnostics.h"
#include "src/codegen/cuda/cuda_backend.h"
#include "src/codegen/llvm/llvm_backend.h"

namespace tessel::codegen {

std::unique_ptr<Backend> make_backend(const Target& target) {
  if (target.kind == TargetKind::kLlvm) return make_llvm_backend(target);
  return make_cuda_backend(target);
}

}  // namespace tessel::codegen
