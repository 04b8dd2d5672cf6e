#include "src/driver/tune_space.h"

#include "ir/core/diagnostics.h"
#include "src/driver/targets.h"

namespace tessel::driver {

tune::ScheduleSpace session_space(const CompileOptions& compile, std::string& described) {
  if (std::optional<sched::CpuScheduleOptions> cpu = cpu_schedule_options(compile)) {
    described = std::to_string(cpu->num_threads) + " thread(s)";
    return *cpu;
  }
  TESSEL_USER_CHECK(
      compile.target.kind == codegen::TargetKind::kCuda && compile.schedule == ScheduleKind::kDefault, Span{})
      << "tessel tune searches the default schedules' knobs: it needs --schedule default";
  const codegen::GpuTarget& gpu = compile.target.gpu;
  if (!gpu.emulated) {
    std::string why = gpu_unavailable_reason();
    TESSEL_USER_CHECK(why.empty(), Span{})
        << "tessel tune --target cuda measures candidates on a GPU, and this machine has none it can use ("
        << why << "); --target cuda-emulated searches on the CUDA emulator, whose times are this CPU's";
  }
  described = gpu.emulated ? "sm_" + std::to_string(gpu.sm) + " emulated on this CPU"
                           : "sm_" + std::to_string(gpu.sm);
  return *gpu_schedule_options(compile);
}

}  // namespace tessel::driver
