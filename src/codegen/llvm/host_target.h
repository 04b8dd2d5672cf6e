// The CPU that code is generated for: LLVM's view of the host (name and
// features), which `--target llvm -mcpu=... -mattr=...` will override.
#pragma once

#include <string>
#include <vector>

namespace tessel::codegen {

struct CpuTarget {
  std::string triple;
  std::string cpu;                    // "znver5"
  std::vector<std::string> features;  // enabled features, "+avx512f", ...
};

CpuTarget host_cpu_target();
std::string llvm_version();

}  // namespace tessel::codegen
