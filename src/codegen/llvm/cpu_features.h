// A CPU's features as LLVM resolves them: the CPU name's own features with
// -mattr's changes applied, every one spelled out, so that later stages (the
// vector width, the features a model.so needs) read one explicit list.
#pragma once

#include <string>
#include <vector>

#include "src/codegen/target.h"

namespace tessel::codegen {

// "+avx2", "-avx512f", ... for every feature LLVM knows for the triple,
// sorted. Requires a target check_cpu_target accepted.
std::vector<std::string> resolved_cpu_features(const CpuTarget& target);

}  // namespace tessel::codegen
