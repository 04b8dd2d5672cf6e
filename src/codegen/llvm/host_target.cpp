// Host CPU detection through LLVM's TargetParser.
#include "src/codegen/llvm/host_target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <memory>
#include <set>

#include "ir/core/diagnostics.h"

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

void check_cpu_target(const CpuTarget& target) {
  const llvm::Target& t = llvm_target_for(target.triple);
  // Asked with no CPU and no features, LLVM prints nothing while answering.
  std::unique_ptr<llvm::MCSubtargetInfo> info(t.createMCSubtargetInfo(target.triple, "", ""));
  TESSEL_USER_CHECK(info->isCPUStringValid(target.cpu), Span{})
      << "unknown CPU '" << target.cpu << "' for " << target.triple << " (-mcpu takes LLVM's names: znver4, "
      << "skylake-avx512, x86-64-v3, ...)";
  std::set<std::string> known;
  for (const llvm::SubtargetFeatureKV& f : info->getAllProcessorFeatures()) known.insert(f.Key);
  for (const std::string& f : target.features)
    TESSEL_USER_CHECK(known.count(f.substr(1)), Span{})
        << "unknown CPU feature '" << f.substr(1) << "' for " << target.triple << " (-mattr=+avx2,-avx512f, ...)";
}

int vector_register_bits(const CpuTarget& target) {
  if (!llvm::Triple(target.triple).isX86()) return 128;
  // The subtarget info belongs to the target machine: keep the machine alive
  // while it is read.
  std::unique_ptr<llvm::TargetMachine> machine = make_target_machine(target);
  const llvm::MCSubtargetInfo* info = machine->getMCSubtargetInfo();
  if (info->checkFeatures("+avx512f")) return 512;
  if (info->checkFeatures("+avx")) return 256;
  return 128;
}

bool llvm_available() {
  return true;
}

std::string llvm_version() {
  return LLVM_VERSION_STRING;
}

}  // namespace tessel::codegen
