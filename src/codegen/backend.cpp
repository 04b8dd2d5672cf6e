// make_backend: the backend that serves a target kind.
#include "src/codegen/backend.h"

#include "ir/core/diagnostics.h"
#include "src/codegen/cuda/nvrtc_library.h"
#include "src/codegen/llvm/llvm_backend.h"

namespace tessel::codegen {

std::unique_ptr<Backend> make_backend(const Target& target) {
  if (target.kind == TargetKind::kLlvm) return make_llvm_backend(target);
  TESSEL_USER_CHECK(false, Span{}) << "target cuda is unavailable: " << cuda_target_unavailable_reason();
  return nullptr;
}

}  // namespace tessel::codegen
