// Traced runs: every step on the calling thread with its parallel chunks on
// the threads that ran them, inside the step; the same through a model.so;
// one traced run at a time; and the Chrome trace the command writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "src/driver/chrome_trace.h"
#include "src/driver/compile_model.h"
#include "src/driver/pipeline.h"
#include "src/driver/run_inputs.h"
#include "src/runtime/tracer.h"
#include "tessel/error.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

std::string example() { return std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx"; }

driver::PipelineOptions example_shapes() {
  driver::PipelineOptions o;
  o.import.input_shapes["image"] = {1, 1, 28, 28};
  return o;
}

// Each step once on thread 0 in plan order; each chunk inside its step's span.
void expect_well_formed(const driver::TracedRun& run, size_t steps, int threads) {
  std::vector<const tessel_trace_span*> step_spans(steps, nullptr);
  for (const tessel_trace_span& s : run.spans) {
    ASSERT_GE(s.step, 0);
    ASSERT_LT(size_t(s.step), steps);
    EXPECT_LE(s.begin_seconds, s.end_seconds);
    if (s.kind == TESSEL_TRACE_STEP) {
      EXPECT_EQ(s.thread, 0);
      EXPECT_EQ(step_spans[size_t(s.step)], nullptr) << "step " << s.step << " twice";
      step_spans[size_t(s.step)] = &s;
    } else {
      EXPECT_EQ(s.kind, TESSEL_TRACE_CHUNK);
      EXPECT_GE(s.thread, 0);
      EXPECT_LT(s.thread, threads);
    }
  }
  for (size_t i = 0; i < steps; ++i) ASSERT_NE(step_spans[i], nullptr) << "step " << i << " missing";
  for (size_t i = 1; i < steps; ++i) EXPECT_LE(step_spans[i - 1]->end_seconds, step_spans[i]->begin_seconds);
  for (const tessel_trace_span& s : run.spans)
    if (s.kind == TESSEL_TRACE_CHUNK) {
      EXPECT_GE(s.begin_seconds, step_spans[size_t(s.step)]->begin_seconds);
      EXPECT_LE(s.end_seconds, step_spans[size_t(s.step)]->end_seconds);
    }
}

TEST(Trace, StepsOnTheCallerAndChunksOnTheThreadsThatRanThem) {
  graph::Graph g = driver::load_graph(example(), example_shapes());
  driver::JitModel model(driver::compile_graph(g, {}));
  model.set_num_threads(2);
  std::vector<Tensor> inputs = driver::random_inputs(model.inputs(), 1);
  driver::TracedRun run;
  std::vector<Tensor> traced = model.run_traced(inputs, run);
  expect_well_formed(run, model.kernels().size(), 2);
  EXPECT_EQ(run.kernel_seconds.size(), model.kernels().size());
  bool worker = std::any_of(run.spans.begin(), run.spans.end(), [](auto& s) { return s.thread == 1; });
  EXPECT_TRUE(worker) << "a parallel kernel's second chunk runs on worker 1";
  std::vector<Tensor> plain = model.run(inputs);
  EXPECT_EQ(std::memcmp(traced[0].raw(), plain[0].raw(), size_t(plain[0].nbytes())), 0);
  driver::TracedRun quiet;
  model.set_num_threads(1);
  model.run_traced(inputs, quiet);
  expect_well_formed(quiet, model.kernels().size(), 1);
}

TEST(Trace, OneTracedRunAtATime) {
  tessel_trace_span spans[4];
  ASSERT_TRUE(rt::Tracer::begin(spans, 4));
  EXPECT_FALSE(rt::Tracer::begin(spans, 4));
  graph::Graph g = driver::load_graph(example(), example_shapes());
  driver::JitModel model(driver::compile_graph(g, {}));
  driver::TracedRun run;
  EXPECT_THROW(model.run_traced(driver::random_inputs(model.inputs(), 1), run), UserError);
  EXPECT_EQ(rt::Tracer::end(), 0);
  EXPECT_NO_THROW(model.run_traced(driver::random_inputs(model.inputs(), 1), run));
}

TEST(Trace, AModelLibraryTracesLikeTheJit) {
  std::filesystem::path so = std::filesystem::path(testing::TempDir()) / "traced_tiny_cnn.so";
  graph::Graph g = driver::load_graph(example(), example_shapes());
  driver::export_shared_library(driver::compile_graph(g, {}), so.string());
  std::unique_ptr<driver::CompiledModel> lib = driver::load_model_library(so.string());
  driver::TracedRun run;
  lib->run_traced(driver::random_inputs(lib->inputs(), 1), run);
  expect_well_formed(run, lib->kernels().size(), lib->num_threads());
}

TEST(Trace, TheChromeTraceHasASliceForEverySpanAndNamesEveryThread) {
  graph::Graph g = driver::load_graph(example(), example_shapes());
  driver::JitModel model(driver::compile_graph(g, {}));
  model.set_num_threads(2);
  std::vector<driver::TracedRun> runs(2);
  for (driver::TracedRun& r : runs) model.run_traced(driver::random_inputs(model.inputs(), 1), r);
  nlohmann::json trace = driver::chrome_trace(model.kernels(), runs);
  size_t slices = 0, names = 0;
  double first_run_end = 0, second_run_begin = 1e30;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    if (e["ph"] == "M") names += e["name"] == "thread_name";
    if (e["ph"] != "X") continue;
    ++slices;
    double ts = e["ts"], end = ts + e["dur"].get<double>();
    if (e["args"]["run"] == 0) first_run_end = std::max(first_run_end, end);
    else second_run_begin = std::min(second_run_begin, ts);
  }
  EXPECT_EQ(slices, runs[0].spans.size() + runs[1].spans.size());
  EXPECT_EQ(names, 2u) << "caller and worker 1";
  EXPECT_LT(first_run_end, second_run_begin) << "runs follow each other";
}

TEST(TraceCli, RunWritesAChromeTrace) {
  std::filesystem::path out = std::filesystem::path(testing::TempDir()) / "tessel_trace.json";
  std::filesystem::remove(out);
  cli_test::Result r = cli_test::run_tessel(
      {"run", example(), "--input-shape", "image=1x1x28x28", "--threads", "2", "--trace", out.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(cli_test::contains(r.out, "3 runs")) << r.out;
  nlohmann::json trace = nlohmann::json::parse(std::ifstream(out));
  EXPECT_FALSE(trace.at("traceEvents").empty());
  cli_test::expect_user_error(cli_test::run_tessel({"run", example(), "--input-shape", "image=1x1x28x28", "--trace",
                                                    "/nonexistent/dir/t.json"}),
                              "cannot write the trace /nonexistent/dir/t.json");
}

}  // namespace
}  // namespace tessel
