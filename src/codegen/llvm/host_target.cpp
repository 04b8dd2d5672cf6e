// Host CPU detection through LLVM's TargetParser.
#include "src/codegen/llvm/host_target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>

#include "src/codegen/llvm/llvm_module_impl.h"

namespace tessel::codegen {

CpuTarget host_cpu_target() {
  CpuTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  // Disabled features are spelled out too: the CPU name implies its family's
  // features (znver4 implies AVX-512), which a virtual machine may not offer.
  for (const auto& [name, enabled] : llvm::sys::getHostCPUFeatures())
    t.features.push_back((enabled ? "+" : "-") + name.str());
  std::sort(t.features.begin(), t.features.end());
  return t;
}

int vector_register_bits(const CpuTarget& target) {
  const llvm::MCSubtargetInfo* info = make_target_machine(target)->getMCSubtargetInfo();
  if (!llvm::Triple(target.triple).isX86()) return 128;
  if (info->checkFeatures("+avx512f")) return 512;
  if (info->checkFeatures("+avx")) return 256;
  return 128;
}

std::string llvm_version() {
  return LLVM_VERSION_STRING;
}

}  // namespace tessel::codegen
