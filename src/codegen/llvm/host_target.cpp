// Host CPU detection through LLVM's TargetParser.
#include "src/codegen/llvm/host_target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>

namespace tessel::codegen {

CpuTarget host_cpu_target() {
  CpuTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  for (const auto& [name, enabled] : llvm::sys::getHostCPUFeatures())
    if (enabled) t.features.push_back("+" + name.str());
  std::sort(t.features.begin(), t.features.end());
  return t;
}

std::string llvm_version() {
  return LLVM_VERSION_STRING;
}

}  // namespace tessel::codegen
