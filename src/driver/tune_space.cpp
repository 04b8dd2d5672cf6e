#include "src/driver/tune_space.h"

#include "ir/core/diagnostics.h"
#include "src/runtime/gpu/cuda_driver.h"
#include "tuner/measure/isolated.h"

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
    // Asked in a child: a driver started in this process would not work in the measuring children.
    tune::IsolatedResult probe =
        tune::run_isolated([] { return "ok" + rt::cuda_driver_unavailable_reason(); }, 60);
    std::string why = !probe.ok ? probe.error : probe.output.substr(2);
    TESSEL_USER_CHECK(why.empty(), Span{})
        << "tessel tune --target cuda measures candidates on a GPU, and this machine has none it can use ("
        << why << "); --target cuda-emulated searches on the CUDA emulator, whose times are this CPU's";
  }
  described = gpu.emulated ? "sm_" + std::to_string(gpu.sm) + " emulated on this CPU"
                           : "sm_" + std::to_string(gpu.sm);
  return *gpu_schedule_options(compile);
}

}  // namespace tessel::driver
