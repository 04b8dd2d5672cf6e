// The CPU backend behind the Backend interface: LlvmModule for build and
// export, JitModule for load.
#pragma once

#include <memory>

#include "src/codegen/backend.h"

namespace tessel::codegen {

std::unique_ptr<Backend> make_llvm_backend(const Target& target);

}  // namespace tessel::codegen
