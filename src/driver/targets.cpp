// served_target, check_runs_here and the reports of `tessel target` and `tessel version`.
#include "src/driver/targets.h"

#include <google/protobuf/stubs/common.h>

#include <algorithm>
#include <sstream>

#include "ir/core/diagnostics.h"
#include "src/codegen/backend.h"
#include "src/codegen/cuda/nvrtc_library.h"
#include "src/codegen/llvm/host_target.h"
#include "src/runtime/gpu/cuda_driver.h"
#include "tuner/cost_model/xgboost_info.h"
#include "tuner/measure/isolated.h"

namespace tessel::driver {

namespace {

std::string cuda_target_line() {
  std::string why = codegen::cuda_target_unavailable_reason();
  if (why.empty()) return "cuda, cuda-emulated";
  return "cuda-emulated; cuda unavailable: " + why.substr(0, why.find('\n'));
}

}  // namespace

codegen::Target served_target(const std::string& spec, const std::vector<std::string>& extra_options) {
  codegen::Target target = codegen::parse_target(spec, extra_options);
  codegen::make_backend(target);  // a user error when this build cannot serve it
  return target;
}

void check_runs_here(const codegen::Target& target) {
  std::vector<std::string> lacking = codegen::features_host_lacks(target);
  std::string list;
  for (const std::string& f : lacking) list += (list.empty() ? "" : ", ") + f;
  TESSEL_USER_CHECK(lacking.empty(), Span{})
      << "this CPU lacks " << list << ", which the target's code uses: it cannot run here "
      << "(tessel compile can still build a library for a machine that has them)";
}

std::string target_report(const std::string& spec) {
  codegen::Target target = served_target(spec);
  check_runs_here(target);
  return codegen::describe(target);
}

const char* tessel_version() { return "0.1.0"; }

std::string version_report() {
  codegen::CpuTarget cpu = codegen::host_target().cpu;
  std::ostringstream os;
  os << "tessel " << tessel_version() << "\n"
     << "LLVM " << codegen::llvm_version() << "\n"
     << "NVRTC " << codegen::nvrtc_description() << "\n"
     << "targets " << (codegen::llvm_available() ? "llvm, " : "") << cuda_target_line() << "\n"
     << "XGBoost " << tune::xgboost_version() << "\n"
     << "protobuf " << google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION) << "\n"
     << "host " << cpu.triple << " cpu " << cpu.cpu << ", "
     << std::count_if(cpu.features.begin(), cpu.features.end(),
                      [](const std::string& f) { return f[0] == '+'; })
     << " features, " << cpu.vector_bits << "-bit vectors\n";
  return os.str();
}

std::string log_target(const codegen::Target& target) {
  bool emulated = target.kind == codegen::TargetKind::kCuda && target.gpu.emulated;
  std::string out = emulated ? "cuda-emulated" : codegen::target_kind_name(target.kind);
  if (target.kind == codegen::TargetKind::kLlvm) {
    out += " -mcpu=" + target.cpu.cpu + " -vector-bits=" + std::to_string(target.cpu.vector_bits);
    // The default schedules' register tiles follow it, so records measured
    // on a core with other pipelines are another target's.
    if (target.cpu.fmas_in_flight > 0) out += " -fmas-in-flight=" + std::to_string(target.cpu.fmas_in_flight);
    if (target.cpu.min_parallel_cycles > 0)
      out += " -parallel-cycles=" + std::to_string(target.cpu.min_parallel_cycles);
  } else {
    out += " -arch=sm_" + std::to_string(target.gpu.sm);
    if (target.gpu.fast_math) out += " -fast-math";
  }
  return out;
}

// Raised when a change to code generation or to the default schedules makes
// the same model run at other speeds (revision 2: masked tails masking only
// their last vector, a tile's rows emitted as one-vector loops; 3: a direct
// conv's channel tiles inside its rows where its input leaves L2; 4: every
// depthwise region channels-last, its tile two vectors wide, one-vector
// tiles of the most rows, pooling tiles several vectors wide; 5: channels-
// last positions padded for a tile of more accumulators than FMAs in
// flight, a 1x1 conv's padding positions read in place), so that a tuning
// log measured on the earlier code is reported instead of applied: its
// layout and schedule choices were decided by times that no longer hold.
constexpr int kCodegenRevision = 5;

std::string compiler_version() {
  return std::string(tessel_version()) + "+codegen." + std::to_string(kCodegenRevision);
}

std::string gpu_unavailable_reason() {
  tune::IsolatedResult probe = tune::run_isolated([] { return rt::cuda_driver_unavailable_reason(); }, 60);
  return probe.ok ? probe.output : probe.error;
}

}  // namespace tessel::driver
