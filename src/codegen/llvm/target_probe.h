// Whether LLVM can generate code for a CPU target at all. Some combinations
// it knows each part of, it cannot select: a 32-bit CPU for a 64-bit triple,
// x86-64 without SSE returning a float. LLVM reports those by ending the
// process, deep in code generation; the probe finds them before, as a
// message.
#pragma once

#include <optional>
#include <string>

#include "src/codegen/target.h"

namespace tessel::codegen {

// Compiles a probe module, with what every kernel has (f32 vectors of the
// target's width, a libm call, a float argument and result, i64 index
// arithmetic), to an object in memory for the target. nullopt when that
// works, else LLVM's reason. Requires a target check_cpu_target's name and
// feature checks accepted.
std::optional<std::string> llvm_cannot_generate(const CpuTarget& target);

}  // namespace tessel::codegen
