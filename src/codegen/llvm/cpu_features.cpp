// resolved_cpu_features through LLVM's subtarget tables.
#include "src/codegen/llvm/cpu_features.h"

#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>

#include <algorithm>
#include <memory>

#include "ir/core/diagnostics.h"
#include "src/codegen/llvm/llvm_module_impl.h"

namespace tessel::codegen {

std::vector<std::string> resolved_cpu_features(const CpuTarget& target) {
  const llvm::Target& t = llvm_target_for(target.triple);
  std::string features;
  for (const std::string& f : target.features) features += (features.empty() ? "" : ",") + f;
  std::unique_ptr<llvm::MCSubtargetInfo> info(t.createMCSubtargetInfo(target.triple, target.cpu, features));
  TESSEL_ICHECK(info) << "LLVM made no subtarget for " << target.cpu;
  std::vector<std::string> resolved;
  for (const llvm::SubtargetFeatureKV& f : info->getAllProcessorFeatures()) {
    bool on = info->checkFeatures("+" + std::string(f.Key));
    resolved.push_back((on ? "+" : "-") + std::string(f.Key));
  }
  std::sort(resolved.begin(), resolved.end());
  return resolved;
}

}  // namespace tessel::codegen
