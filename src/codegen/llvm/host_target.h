// The CPU that code is generated for: LLVM's view of the host (name and
// features), which `--target llvm -mcpu=... -mattr=...` will override.
#pragma once

#include <string>
#include <vector>

#include "src/codegen/target.h"

namespace tessel::codegen {

// The host CPU: name, features, vector width, cores and cache sizes.
CpuTarget host_cpu_target();
// A user error naming the CPU or feature when LLVM does not know it for the
// triple (LLVM itself would only warn, then fail or ignore it).
void check_cpu_target(const CpuTarget& target);
// The width of the vector registers the target's code uses: 512 with
// AVX-512F, 256 with AVX, else 128 (what the default schedules tile for).
int vector_register_bits(const CpuTarget& target);
std::string llvm_version();
// Whether this build has the LLVM backend (cmake -DTESSEL_WITH_LLVM, on by default).
bool llvm_available();

}  // namespace tessel::codegen
