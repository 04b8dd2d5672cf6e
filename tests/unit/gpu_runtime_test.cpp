// The GPU runtime above the device seam, on the emulator: a plan's steps on
// device memory (intermediates in the device arena, weights uploaded once),
// per-step times from the device's events, a failed check naming its step,
// and plans that do not fit the program refused.
#include <gtest/gtest.h>

#include "ir/tensor/interpreter.h"
#include "src/codegen/cuda/cuda_codegen.h"
#include "src/codegen/cuda/cuda_emulator.h"
#include "src/runtime/gpu/gpu_plan_executor.h"
#include "tests/unit/cuda_test_util.h"

namespace tessel::tir {
namespace {

rt::TensorSpec f32(const std::string& name, std::vector<int64_t> shape) {
  return {name, uint8_t(TESSEL_F32), std::move(shape)};
}

tessel_tensor view(Tensor& t) {
  return {t.raw(), TESSEL_F32, int32_t(t.rank()), t.shape().data()};
}

// out = (A x W) x W for 8 x 8 matrices: the weight W uploaded once, A x W in the arena.
struct TwoMatmuls {
  codegen::CudaProgram program =
      codegen::generate_cuda({{"k_mm", gpu_matmul(8, 8, 8)}}, codegen::GpuTarget{});
  rt::GpuRunner runner{codegen::gpu_program(program), codegen::open_emulated_device(program.source)};
  Tensor w = ramp({8, 8}, 0.25);

  rt::Plan plan() const {
    rt::Plan p;
    p.inputs = {f32("A", {8, 8})};
    p.outputs = {f32("out", {8, 8})};
    p.buffers = {{rt::Storage::kInput, 0, 0, 256},
                 {rt::Storage::kWeight, 0, 0, 256},
                 {rt::Storage::kArena, 0, 0, 256},
                 {rt::Storage::kOutput, 0, 0, 256}};
    p.steps = {{0, "first", {0, 1, 2}, 0, 0}, {0, "second", {2, 1, 3}, 0, 0}};
    p.output_buffers = {3};
    p.arena_bytes = 256;
    p.weights_bytes = 256;
    return p;
  }
};

TEST(GpuRuntime, APlanRunsItsStepsOnDeviceMemory) {
  TwoMatmuls m;
  rt::GpuPlanExecutor executor(m.plan(), m.runner, {0}, m.w.raw());
  auto workspace = executor.workspace();
  for (double scale : {0.5, -1.0}) {  // twice: the weights stay, the inputs change
    Tensor a = ramp({8, 8}, scale), out(DType::kF32, {8, 8});
    tessel_tensor in = view(a), result = view(out);
    std::vector<double> seconds(2, -1.0);
    executor.run(*workspace, &in, 1, &result, 1, seconds.data());
    PrimFunc mm = make_matmul_func(8, 8, 8);
    Tensor want = interpret(mm, {interpret(mm, {a, m.w})[0], m.w})[0];
    EXPECT_EQ(out.to_f64_vector(), want.to_f64_vector());
    for (double s : seconds) EXPECT_GE(s, 0.0);
  }
}

TEST(GpuRuntime, APlanThatDoesNotFitTheProgramIsRefused) {
  TwoMatmuls m;
  rt::Plan small = m.plan();  // A is 4 x 8, which k_mm reads as 8 x 8
  small.inputs[0].shape = {4, 8};
  small.buffers[0].bytes = 128;
  small.steps.pop_back();
  small.buffers[3].bytes = 256;
  small.steps[0].args = {0, 1, 3};
  try {
    rt::GpuPlanExecutor executor(small, m.runner, {0}, m.w.raw());
    FAIL() << "a step passing a buffer smaller than its parameter ran";
  } catch (const rt::PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("step 'first' passes a buffer of 128 bytes as parameter 0 of k_mm"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(rt::GpuPlanExecutor(m.plan(), m.runner, {1}, m.w.raw()), rt::PlanError);  // no function 1
}

// y = x[idx] twice, the second time with the indices of the second input.
TEST(GpuRuntime, AFailedCheckNamesItsStep) {
  PrimFunc gather = gpu_checked_gather();
  codegen::CudaProgram program = codegen::generate_cuda({{"k_gather", gather}}, codegen::GpuTarget{});
  rt::GpuRunner runner(codegen::gpu_program(program), codegen::open_emulated_device(program.source));
  rt::Plan p;
  p.inputs = {f32("x", {10}), {"good", uint8_t(TESSEL_I64), {4}}, {"bad", uint8_t(TESSEL_I64), {4}}};
  p.outputs = {f32("y1", {4}), f32("y2", {4})};
  p.buffers = {{rt::Storage::kInput, 0, 0, 40},
               {rt::Storage::kInput, 1, 0, 32},
               {rt::Storage::kInput, 2, 0, 32},
               {rt::Storage::kOutput, 0, 0, 16},
               {rt::Storage::kOutput, 1, 0, 16}};
  p.steps = {{0, "gather_good", {0, 1, 3}, 0, 0}, {0, "gather_bad", {0, 2, 4}, 0, 0}};
  p.output_buffers = {3, 4};
  rt::GpuPlanExecutor executor(p, runner, {0}, nullptr);
  Tensor xs = ramp({10}, 1.0), good(DType::kI64, {4}), bad(DType::kI64, {4}), y1(DType::kF32, {4}),
         y2(DType::kF32, {4});
  for (int64_t k = 0; k < 4; ++k) {
    good.set_f64(k, double(k));
    bad.set_f64(k, k == 3 ? 10.0 : 0.0);
  }
  tessel_tensor in[] = {view(xs),
                        {good.raw(), TESSEL_I64, 1, good.shape().data()},
                        {bad.raw(), TESSEL_I64, 1, bad.shape().data()}};
  tessel_tensor out[] = {view(y1), view(y2)};
  try {
    executor.run(*executor.workspace(), in, 3, out, 2);
    FAIL() << "an index out of range went unnoticed";
  } catch (const rt::StatusError& e) {
    EXPECT_EQ(e.status(), TESSEL_ERR_KERNEL_FAILED);
    EXPECT_EQ(std::string(e.what()),
              "step 1 'gather_bad' (kernel 0) failed: index 10 of element 3 is out of range");
  }
}

}  // namespace
}  // namespace tessel::tir
