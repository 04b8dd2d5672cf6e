// The LLVM backend's interface in a build without LLVM: the llvm target is
// refused with the reason; the host CPU is described without LLVM's tables
// (only what a GPU target needs of it: the triple and the cores).
#include <sys/utsname.h>

#include "ir/core/diagnostics.h"
#include "src/codegen/llvm/cpu_features.h"
#include "src/codegen/llvm/host_target.h"
#include "src/codegen/llvm/llvm_backend.h"
#include "src/codegen/llvm/peak_kernel.h"
#include "src/codegen/llvm/target_probe.h"

namespace tessel::codegen {

namespace {

const char* const kWithoutLlvm =
    "target llvm is unavailable: this Tessel was built without LLVM (cmake -DTESSEL_WITH_LLVM=OFF); "
    "its targets are cuda and cuda-emulated";

}  // namespace

struct JitModule::Impl {};
JitModule::~JitModule() = default;

bool llvm_available() {
  return false;
}

CpuTarget host_cpu_target() {
  CpuTarget t;
  utsname name{};
  std::string machine = uname(&name) == 0 ? name.machine : "unknown";
  t.triple = machine + "-unknown-linux-gnu";
  t.cpu = "generic";
  return t;
}

void check_cpu_target(const CpuTarget&) {
  TESSEL_USER_ERROR(Span{}) << kWithoutLlvm;
}

int vector_register_bits(const CpuTarget&) {
  return 128;
}

std::string llvm_version() {
  return "none (built with -DTESSEL_WITH_LLVM=OFF)";
}

std::vector<std::string> resolved_cpu_features(const CpuTarget& target) {
  return target.features;
}

std::optional<std::string> llvm_cannot_generate(const CpuTarget&) {
  return std::string(kWithoutLlvm);
}

PeakKernel compile_peak_kernel(const CpuTarget&, int) {
  TESSEL_USER_ERROR(Span{}) << kWithoutLlvm;
  return {};
}

int measure_fmas_in_flight(const CpuTarget&) {
  return 0;
}  // unknown: nothing can measure it

std::unique_ptr<Backend> make_llvm_backend(const Target&) {
  TESSEL_USER_ERROR(Span{}) << kWithoutLlvm;
  return nullptr;
}

}  // namespace tessel::codegen
