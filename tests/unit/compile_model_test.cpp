// The CPU compiler end to end: graphs compiled in memory (JIT) and exported
// as model.so match the reference executor; the execution plan reuses arena
// memory and copies outputs that no kernel writes; bad libraries and bad
// inputs are clear errors.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ir/graph/op_registry.h"
#include "src/driver/check_job.h"
#include "src/driver/compile_model.h"
#include "src/driver/execution_plan.h"
#include "src/driver/pipeline.h"
#include "src/driver/run_inputs.h"
#include "src/reference/executor.h"
#include "tessel/error.h"
#include "tessel/runtime.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

const std::string kTinyCnn = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";

graph::Graph tiny_cnn() {
  driver::PipelineOptions options;
  options.import.input_shapes["image"] = {1, 1, 28, 28};
  return driver::load_graph(kTinyCnn, options);
}

void expect_matches_reference(const graph::Graph& g, driver::CompiledModel& model, uint64_t seed) {
  std::vector<Tensor> inputs = driver::random_inputs(g, seed);
  std::vector<Tensor> want = reference::Executor(g).run(inputs);
  std::vector<Tensor> got = model.run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    driver::ErrorStats e = driver::error_stats(got[i], want[i]);
    EXPECT_LE(e.max_rel, 1e-5) << "output " << i << " max abs " << e.max_abs;
  }
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("tessel_compile_test_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

TEST(CompileModel, TinyCnnInMemoryMatchesTheReferenceWithEveryFusionAndSchedule) {
  graph::Graph g = tiny_cnn();
  for (const char* fusion : {"none", "simple"}) {
    for (const char* schedule : {"none", "default"}) {
      driver::CompileOptions options;
      options.fusion = passes::parse_fusion_policy(fusion);
      options.schedule = driver::parse_schedule_kind(schedule);
      driver::JitModel model(driver::compile_graph(g, options));
      SCOPED_TRACE(std::string(fusion) + " " + schedule);
      expect_matches_reference(g, model, 3);
    }
  }
}

TEST(CompileModel, ThePlanSharesArenaMemoryAndAlignsWeights) {
  graph::Graph g = tiny_cnn();
  driver::CompileOptions options;
  options.fusion = passes::FusionPolicy::kNone;  // many intermediates
  driver::CompiledGraph c = driver::compile_graph(g, options);
  driver::ExecutionPlan p = driver::build_execution_plan(g, c.kernels);
  EXPECT_GT(p.unshared_arena_bytes, 0u);
  EXPECT_LT(p.plan.arena_bytes, p.unshared_arena_bytes);
  for (const rt::BufferSlot& slot : p.plan.buffers)
    if (slot.storage == rt::Storage::kWeight || slot.storage == rt::Storage::kArena) {
      EXPECT_EQ(slot.offset % 64, 0u);
    }
  EXPECT_EQ(p.plan.steps.size(), c.kernels.size());
}

TEST(CompileModel, ExportedLibraryRunsLikeTheJit) {
  TempDir dir;
  graph::Graph g = tiny_cnn();
  fs::path so = dir.path / "tiny.so";
  driver::export_shared_library(driver::compile_graph(g, {}), so.string());
  std::unique_ptr<driver::CompiledModel> lib = driver::load_model_library(so.string());
  ASSERT_EQ(lib->inputs().size(), 1u);
  EXPECT_EQ(lib->inputs()[0].name, "image");
  EXPECT_EQ(lib->inputs()[0].shape, (std::vector<int64_t>{1, 1, 28, 28}));
  EXPECT_FALSE(lib->kernels().empty());
  expect_matches_reference(g, *lib, 11);
  lib->set_num_threads(1);
  EXPECT_EQ(lib->num_threads(), 1);
  expect_matches_reference(g, *lib, 12);
}

// The C ABI's promise: one model, one context per thread, runs at the same
// time give the answers they give one after another (the thread pool is shared;
// a loop that finds it busy runs inline).
TEST(CompileModel, TwoContextsRunConcurrentlyFromTwoThreads) {
  TempDir dir;
  graph::Graph g = tiny_cnn();
  fs::path so = dir.path / "tiny.so";
  driver::export_shared_library(driver::compile_graph(g, {}), so.string());
  void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(handle) << dlerror();
  auto fn = [&](const char* name) {
    void* f = dlsym(handle, name);
    EXPECT_TRUE(f) << name;
    return f;
  };
  auto load = reinterpret_cast<tessel_model* (*)()>(fn("tessel_model_load"));
  auto unload = reinterpret_cast<void (*)(tessel_model*)>(fn("tessel_model_unload"));
  auto create = reinterpret_cast<tessel_context* (*)(const tessel_model*)>(fn("tessel_context_create"));
  auto destroy = reinterpret_cast<void (*)(tessel_context*)>(fn("tessel_context_destroy"));
  auto run = reinterpret_cast<int (*)(tessel_context*, const tessel_tensor*, int32_t, tessel_tensor*, int32_t)>(
      fn("tessel_context_run"));
  tessel_model* model = load();
  ASSERT_TRUE(model);
  const int64_t in_shape[] = {1, 1, 28, 28}, out_shape[] = {1, 10};
  std::vector<Tensor> inputs = {driver::random_inputs(g, 21)[0], driver::random_inputs(g, 22)[0]};
  auto run_once = [&](tessel_context* ctx, const Tensor& x) {
    Tensor y(DType::kF32, {1, 10});
    tessel_tensor in = {const_cast<void*>(x.raw()), TESSEL_F32, 4, in_shape};
    tessel_tensor out = {y.raw(), TESSEL_F32, 2, out_shape};
    EXPECT_EQ(run(ctx, &in, 1, &out, 1), 0);
    return y;
  };
  tessel_context* contexts[2] = {create(model), create(model)};
  ASSERT_TRUE(contexts[0] && contexts[1]);
  std::vector<Tensor> want = {run_once(contexts[0], inputs[0]), run_once(contexts[0], inputs[1])};
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        Tensor y = run_once(contexts[t], inputs[size_t(t)]);
        if (std::memcmp(y.raw(), want[size_t(t)].raw(), y.nbytes()) != 0) ++mismatches;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  for (tessel_context* c : contexts) destroy(c);
  unload(model);
  dlclose(handle);
}

TEST(CompileModel, LibrariesThatAreNotTesselModelsAreUserErrors) {
  TempDir dir;
  auto expect_error = [](const std::string& path, const std::string& text) {
    try {
      driver::load_model_library(path);
      ADD_FAILURE() << path << " loaded";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_error((dir.path / "missing.so").string(), "no such file");
  std::ofstream(dir.path / "text.so") << "not an ELF file";
  expect_error((dir.path / "text.so").string(), "is not a loadable shared library");
  expect_error("/lib/x86_64-linux-gnu/libm.so.6", "is not a Tessel model library: it lacks tessel_abi_version");
}

TEST(CompileModel, WrongInputsAreUserErrorsThroughTheCAbi) {
  TempDir dir;
  graph::Graph g = tiny_cnn();
  fs::path so = dir.path / "tiny.so";
  driver::export_shared_library(driver::compile_graph(g, {}), so.string());
  std::unique_ptr<driver::CompiledModel> lib = driver::load_model_library(so.string());
  auto expect_error = [&](const std::vector<Tensor>& inputs, const std::string& text) {
    try {
      lib->run(inputs);
      ADD_FAILURE() << "ran";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_error({Tensor(DType::kF32, {1, 1, 28, 27})}, "image");
  expect_error({Tensor(DType::kF64, {1, 1, 28, 28})}, "image");
  expect_error({}, "input");
}

TEST(CompileModel, OutputsThatAreInputsOrRepeatedAreCopied) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {2, 3}));
  graph::Node* relu = g.add_node("Relu", "relu", {x}, {"y"});
  graph::infer_node(*relu);
  g.set_outputs({relu->outputs[0], x, relu->outputs[0]});
  driver::JitModel model(driver::compile_graph(g, {}));
  Tensor in(DType::kF32, {2, 3});
  for (int i = 0; i < 6; ++i) in.data<float>()[i] = float(i) - 2.5f;
  std::vector<Tensor> out = model.run({in});
  ASSERT_EQ(out.size(), 3u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(out[0].data<float>()[i], std::max(0.0f, float(i) - 2.5f));
    EXPECT_EQ(out[1].data<float>()[i], float(i) - 2.5f);
    EXPECT_EQ(out[2].data<float>()[i], out[0].data<float>()[i]);
  }
}

TEST(CompileModel, CheckReportsEveryOutputAndKernel) {
  graph::Graph g = tiny_cnn();
  driver::CheckOptions options;
  options.per_kernel = true;
  std::ostringstream out;
  EXPECT_EQ(driver::run_check(g, options, out), 0) << out.str();
  EXPECT_NE(out.str().find("check passed"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("kernel 0 "), std::string::npos) << out.str();
}

}  // namespace
}  // namespace tessel
