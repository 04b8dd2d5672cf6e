// The engine of a CPU model library: its kernels on host memory through
// PlanExecutor, an arena per context.
#include <cstdlib>

#include "src/runtime/cpu_features.h"
#include "src/runtime/kernel_abi.h"
#include "src/runtime/model_engine.h"
#include "src/runtime/plan_executor.h"
#include "src/runtime/thread_pool.h"

namespace tessel::rt {

namespace {

struct ArenaContext final : ModelEngine::Context {
  std::unique_ptr<uint8_t, decltype(&std::free)> arena{nullptr, &std::free};
};

class CpuEngine final : public ModelEngine {
 public:
  explicit CpuEngine(PlanExecutor executor) : executor_(std::move(executor)) {}
  const Plan& plan() const override { return executor_.plan(); }
  const std::string& device() const override {
    static const std::string cpu = "cpu";
    return cpu;
  }
  std::unique_ptr<Context> new_context() const override {
    auto c = std::make_unique<ArenaContext>();
    uint64_t bytes = plan().arena_bytes;
    if (bytes > 0) {
      c->arena.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
      if (!c->arena)
        throw StatusError(TESSEL_ERR_OUT_OF_MEMORY,
                          "out of memory allocating a " + std::to_string(bytes) + "-byte arena");
    }
    return c;
  }
  void run(Context& context, const tessel_tensor* inputs, int32_t num_inputs, tessel_tensor* outputs,
           int32_t num_outputs, double* kernel_seconds) const override {
    context.data_dependent_sizes.clear();
    std::vector<int64_t> sizes(plan().data_dependent.size());
    executor_.run(inputs, num_inputs, outputs, num_outputs, static_cast<ArenaContext&>(context).arena.get(),
                  kernel_seconds, sizes.data());
    context.data_dependent_sizes = std::move(sizes);
  }

 private:
  PlanExecutor executor_;
};

}  // namespace

// Corruption first, then whether this CPU can run the kernels, then the environment's thread count.
std::unique_ptr<ModelEngine> load_model_engine() {
  Plan plan = deserialize_plan(tessel_model_plan, size_t(tessel_model_plan_size));
  validate_plan(plan, tessel_model_kernel_count, tessel_model_weights_size);
  verify_weights_checksum(plan, tessel_model_weights, tessel_model_weights_size);
  check_cpu_features(plan.cpu_features);
  threads_from_environment();
  std::vector<tessel_kernel_fn> kernels(tessel_model_kernels,
                                        tessel_model_kernels + tessel_model_kernel_count);
  return std::make_unique<CpuEngine>(PlanExecutor(std::move(plan), std::move(kernels), tessel_model_weights));
}

}  // namespace tessel::rt
