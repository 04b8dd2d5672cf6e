// PlanExecutor with two kernels written here (add, then relu through an arena
// buffer): results, tensor checks with their status and message, output copies,
// an output cut to the extent a third kernel writes.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "src/runtime/plan_executor.h"
#include "tests/unit/runtime_test_plan.h"

namespace tessel::rt {
namespace {

bool aligned(void* const* args, int n) {
  for (int i = 0; i < n; ++i)
    if (!args[i] || reinterpret_cast<uintptr_t>(args[i]) % 64) return false;
  return true;
}

// t = x + w over 6 floats.
int32_t add_kernel(void* const* args) {
  if (!aligned(args, 3)) return 7;
  auto x = static_cast<const float*>(args[0]), w = static_cast<const float*>(args[1]);
  auto t = static_cast<float*>(args[2]);
  for (int i = 0; i < 6; ++i) t[i] = x[i] + w[i];
  return 0;
}

int32_t relu_kernel(void* const* args) {
  if (!aligned(args, 2)) return 7;
  auto t = static_cast<const float*>(args[0]);
  auto y = static_cast<float*>(args[1]);
  for (int i = 0; i < 6; ++i) y[i] = t[i] > 0 ? t[i] : 0;
  return 0;
}

int32_t failing_kernel(void* const*) {
  return 3;
}

alignas(64) const float kWeights[16] = {1, -2, 3, -4, 5, -6};

struct Fixture {
  alignas(64) float x[6] = {1, 1, 1, 1, 1, 1};
  alignas(64) float y[6] = {};
  alignas(64) uint8_t arena[64] = {};
  int64_t shape[2] = {2, 3};
  tessel_tensor in{x, TESSEL_F32, 2, shape};
  tessel_tensor out{y, TESSEL_F32, 2, shape};
};

void expect_status(const std::function<void()>& f, int status, const std::string& substring) {
  try {
    f();
    ADD_FAILURE() << "no error; expected status " << status << " with '" << substring << "'";
  } catch (const StatusError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  }
}

TEST(RuntimeExecutor, RunsTheStepsInOrder) {
  PlanExecutor exec(add_relu_plan(), {add_kernel, relu_kernel}, kWeights);
  Fixture f;
  double seconds[2] = {-1, -1};
  exec.run(&f.in, 1, &f.out, 1, f.arena, seconds);
  const float expected[6] = {2, 0, 4, 0, 6, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(f.y[i], expected[i]) << i;
  EXPECT_GE(seconds[0], 0);
  EXPECT_GE(seconds[1], 0);
}

int64_t g_extent = 0;

// Writes g_extent as the extent of y's axis 1.
int32_t extent_kernel(void* const* args) {
  *static_cast<int64_t*>(args[0]) = g_extent;
  return 0;
}

TEST(RuntimeExecutor, AnOutputOfDataDependentExtentIsCutToIt) {
  Plan p = add_relu_plan();
  p.buffers.push_back({Storage::kArena, 0, 64, 8});
  p.arena_bytes = 128;
  p.steps.push_back({2, "extent", {4}, 0, 0});
  p.data_dependent = {{0, 1, 4}};
  PlanExecutor exec(p, {add_kernel, relu_kernel, extent_kernel}, kWeights);
  Fixture f;
  alignas(64) uint8_t arena[128] = {};
  int64_t extent = -1;
  g_extent = 2;
  exec.run(&f.in, 1, &f.out, 1, arena, nullptr, &extent);
  EXPECT_EQ(extent, 2);
  const float front[4] = {2, 0, 0, 6};  // rows {2, 0, 4} and {0, 6, 0} cut to 2 columns
  for (int i = 0; i < 4; ++i) EXPECT_EQ(f.y[i], front[i]) << i;
  g_extent = 4;
  expect_status([&] { exec.run(&f.in, 1, &f.out, 1, arena); }, TESSEL_ERR_KERNEL_FAILED,
                "output 'y': the kernels found 4 entries along axis 1, outside its bound 3");
}

TEST(RuntimeExecutor, MisalignedCallerTensorsAreStaged) {
  PlanExecutor exec(add_relu_plan(), {add_kernel, relu_kernel}, kWeights);
  Fixture f;
  alignas(64) float xbuf[8] = {0, 1, 1, 1, 1, 1, 1, 0}, ybuf[8] = {};
  f.in.data = xbuf + 1;
  f.out.data = ybuf + 1;
  exec.run(&f.in, 1, &f.out, 1, f.arena);  // the kernels fail with 7 on a misaligned pointer
  EXPECT_EQ(ybuf[1], 2);
  EXPECT_EQ(ybuf[2], 0);
  EXPECT_EQ(ybuf[5], 6);
  EXPECT_EQ(ybuf[7], 0);
}

TEST(RuntimeExecutor, TensorChecksNameTheTensor) {
  PlanExecutor exec(add_relu_plan(), {add_kernel, relu_kernel}, kWeights);
  Fixture f;
  int64_t rank1[1] = {6}, swapped[2] = {3, 2};
  tessel_tensor t = f.in;
  t.rank = 1;
  t.shape = rank1;
  expect_status([&] { exec.run(&t, 1, &f.out, 1, f.arena); }, TESSEL_ERR_SHAPE_MISMATCH,
                "input 'x': expected shape [2,3], got [6]");
  t = f.out;
  t.shape = swapped;
  expect_status([&] { exec.run(&f.in, 1, &t, 1, f.arena); }, TESSEL_ERR_SHAPE_MISMATCH,
                "output 'y': expected shape [2,3], got [3,2]");
  t = f.in;
  t.dtype = TESSEL_I32;
  expect_status([&] { exec.run(&t, 1, &f.out, 1, f.arena); }, TESSEL_ERR_DTYPE_MISMATCH,
                "input 'x': expected dtype f32, got i32");
  t = f.in;
  t.data = nullptr;
  expect_status([&] { exec.run(&t, 1, &f.out, 1, f.arena); }, TESSEL_ERR_INVALID_ARGUMENT,
                "input 'x': data is NULL");
  t = f.in;
  t.shape = nullptr;
  expect_status([&] { exec.run(&t, 1, &f.out, 1, f.arena); }, TESSEL_ERR_INVALID_ARGUMENT, "shape is NULL");
  tessel_tensor two[2] = {f.in, f.in};
  expect_status([&] { exec.run(two, 2, &f.out, 1, f.arena); }, TESSEL_ERR_INVALID_ARGUMENT,
                "expected 1 inputs, got 2");
  expect_status([&] { exec.run(&f.in, 1, &f.out, 0, f.arena); }, TESSEL_ERR_INVALID_ARGUMENT,
                "expected 1 outputs, got 0");
  expect_status([&] { exec.run(nullptr, 1, &f.out, 1, f.arena); }, TESSEL_ERR_INVALID_ARGUMENT,
                "inputs is NULL");
  expect_status([&] { exec.run(&f.in, 1, &f.out, 1, nullptr); }, TESSEL_ERR_INVALID_ARGUMENT, "arena");
}

TEST(RuntimeExecutor, KernelFailureNamesTheStep) {
  PlanExecutor exec(add_relu_plan(), {add_kernel, failing_kernel}, kWeights);
  Fixture f;
  expect_status([&] { exec.run(&f.in, 1, &f.out, 1, f.arena); }, TESSEL_ERR_KERNEL_FAILED,
                "step 1 'relu' (kernel 1) failed with status 3");
}

TEST(RuntimeExecutor, InvalidPlanIsRefused) {
  EXPECT_THROW(PlanExecutor(add_relu_plan(), {add_kernel}, kWeights), PlanError);
  EXPECT_THROW(PlanExecutor(add_relu_plan(), {add_kernel, nullptr}, kWeights), PlanError);
  EXPECT_THROW(PlanExecutor(add_relu_plan(), {add_kernel, relu_kernel}, nullptr), PlanError);
}

TEST(RuntimeExecutor, OutputsHeldElsewhereAreCopied) {
  // Outputs: y (relu), x_again (the input), y_again (a second name of y), w (a weight), t (the arena).
  Plan p = add_relu_plan();
  TensorSpec spec = p.outputs[0];
  for (const char* name : {"x_again", "y_again", "w", "t"}) {
    spec.name = name;
    p.outputs.push_back(spec);
  }
  p.output_buffers = {3, 0, 3, 1, 2};
  PlanExecutor exec(p, {add_kernel, relu_kernel}, kWeights);
  Fixture f;
  alignas(64) float outs[4][16] = {};
  std::vector<tessel_tensor> out = {f.out};
  for (auto& o : outs) out.push_back({o, TESSEL_F32, 2, f.shape});
  exec.run(&f.in, 1, out.data(), int32_t(out.size()), f.arena);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(outs[0][i], 1) << i;                // x_again
    EXPECT_EQ(outs[1][i], f.y[i]) << i;           // y_again
    EXPECT_EQ(outs[2][i], kWeights[i]) << i;      // w
    EXPECT_EQ(outs[3][i], 1 + kWeights[i]) << i;  // t, before relu
  }
  EXPECT_EQ(f.y[1], 0);
  EXPECT_EQ(f.y[2], 4);
}

}  // namespace
}  // namespace tessel::rt
