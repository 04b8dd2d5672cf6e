// The Scan op (ir/graph/scan.h) as the graph IR holds it, printed and
// checked, and run by every executor: the reference, the tensor IR and the
// compiled plan (JIT and model.so), whose loops copy states and slices
// around the body's kernels. Values are worked out by hand.
#include <gtest/gtest.h>

#include "ir/graph/op_registry.h"
#include "ir/graph/printer.h"
#include "ir/graph/scan.h"
#include "ir/graph/verifier.h"
#include "src/driver/compile_model.h"
#include "src/driver/tir_runner.h"
#include "src/reference/executor.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

using graph::Graph;
using graph::TensorType;
using graph::Value;

Tensor f32(const std::vector<double>& values, Dims shape) {
  Tensor t(DType::kF32, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set_f64(int64_t(i), values[i]);
  return t;
}

// h' = h + x, y = h' * k over 4 rows of xs, ys stacked from the back:
// %h_last, %ys = Scan(%h0, %xs, %k).
graph::Node* add_running_sum(Graph& g, Value* h0, Value* xs, Value* k, bool reverse_in, bool reverse_out) {
  auto body = std::make_shared<Graph>();
  body->name = "step";
  Value* h = body->add_input("h", TensorType(DType::kF32, {2}));
  Value* x = body->add_input("x", TensorType(DType::kF32, {2}));
  Value* kk = body->add_input("kk", TensorType(DType::kF32, {2}));
  graph::Node* sum = body->add_node("Add", "sum", {h, x}, {"h_next"});
  graph::infer_node(*sum);
  graph::Node* scaled = body->add_node("Mul", "scaled", {sum->outputs[0], kk}, {"y"});
  graph::infer_node(*scaled);
  body->set_outputs({sum->outputs[0], scaled->outputs[0]});
  graph::Attrs a;
  a.set("length", int64_t(4));
  a.set("num_states", int64_t(1));
  a.set("num_scan_inputs", int64_t(1));
  a.set("reverse_inputs", std::vector<int64_t>{reverse_in});
  a.set("reverse_outputs", std::vector<int64_t>{reverse_out});
  graph::Node* scan = g.add_node("Scan", "running", {h0, xs, k}, {"h_last", "ys"}, a);
  scan->body = body;
  graph::infer_node(*scan);
  return scan;
}

Graph running_sum_graph(bool reverse_in, bool reverse_out) {
  Graph g;
  Value* h0 = g.add_input("h0", TensorType(DType::kF32, {2}));
  Value* xs = g.add_input("xs", TensorType(DType::kF32, {4, 2}));
  Value* k = g.add_input("k", TensorType(DType::kF32, {2}));
  graph::Node* scan = add_running_sum(g, h0, xs, k, reverse_in, reverse_out);
  graph::Node* doubled = g.add_node("Add", "doubled", {scan->outputs[1], scan->outputs[1]}, {"ys2"});
  graph::infer_node(*doubled);
  g.set_outputs({scan->outputs[0], doubled->outputs[0]});
  return g;
}

const std::vector<Tensor> kInputs = {f32({1, -1}, {2}), f32({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}),
                                     f32({10, 100}, {2})};

// ys2[row] = 2 * y of the iteration that wrote the row.
std::vector<double> expected_ys2(bool reverse_in, bool reverse_out) {
  std::vector<double> h = {1, -1}, out(8);
  for (int t = 0; t < 4; ++t) {
    int row = reverse_in ? 3 - t : t, slot = reverse_out ? 3 - t : t;
    for (int j = 0; j < 2; ++j) {
      h[size_t(j)] += kInputs[1].get_f64(row * 2 + j);
      out[size_t(slot * 2 + j)] = 2 * h[size_t(j)] * (j == 0 ? 10 : 100);
    }
  }
  return out;
}

TEST(Scan, PrintsItsBodyAndVerifies) {
  Graph g = running_sum_graph(false, true);
  graph::verify_graph(g);
  std::string text = graph::print_graph(g);
  EXPECT_NE(
      text.find(
          "%h_last: f32[2], %ys: f32[4, 2] = Scan(%h0, %xs, %k) {length = 4, num_scan_inputs = 1, "
          "num_states = 1, reverse_inputs = [0], reverse_outputs = [1], run_when = 0, while_state = -1}  "
          "# node 'running'\n"
          "    body(%h: f32[2], %x: f32[2], %kk: f32[2]) {\n"
          "      %h_next: f32[2] = Add(%h, %x)  # node 'sum'\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("      return %h_next, %y\n    }\n"), std::string::npos) << text;
}

TEST(Scan, EveryExecutorRunsTheLoop) {
  for (bool reverse_in : {false, true})
    for (bool reverse_out : {false, true}) {
      SCOPED_TRACE(std::to_string(reverse_in) + std::to_string(reverse_out));
      std::vector<double> want_h = {1 + 16, -1 + 20};
      std::vector<double> want_ys = expected_ys2(reverse_in, reverse_out);
      Graph g = running_sum_graph(reverse_in, reverse_out);
      std::vector<Tensor> ref = reference::Executor(g).run(kInputs);
      EXPECT_EQ(ref[0].to_f64_vector(), want_h);
      EXPECT_EQ(ref[1].to_f64_vector(), want_ys);
      std::vector<Tensor> tir = driver::TirExecutor(g, passes::FusionPolicy::kDefault).run(kInputs);
      EXPECT_EQ(tir[1].to_f64_vector(), want_ys);
      driver::JitModel jit(driver::compile_graph(g, {}));
      std::vector<Tensor> compiled = jit.run(kInputs);
      EXPECT_EQ(compiled[0].to_f64_vector(), want_h);
      EXPECT_EQ(compiled[1].to_f64_vector(), want_ys);
    }
}

TEST(Scan, AModelLibraryRunsItsLoops) {
  cli_test::TempDir dir;
  Graph g = running_sum_graph(true, false);
  std::string so = (dir.path() / "scan.so").string();
  driver::CompiledGraph compiled = driver::compile_graph(g, {});
  ASSERT_EQ(compiled.plan.loops.size(), 1u);
  EXPECT_EQ(compiled.plan.loops[0].count, 4u);
  driver::export_shared_library(std::move(compiled), so);
  std::unique_ptr<driver::CompiledModel> lib = driver::load_model_library(so);
  std::vector<double> seconds;
  std::vector<Tensor> out = lib->run(kInputs, &seconds);
  EXPECT_EQ(out[1].to_f64_vector(), expected_ys2(true, false));
  for (double s : seconds) EXPECT_GE(s, 0);
}

// A Scan in a Scan's body: each row's running sum, the rows' last sums carried.
TEST(Scan, NestedScansRunTheirLoopsInside) {
  Graph g;
  Value* rows = g.add_input("rows", TensorType(DType::kF32, {3, 4, 2}));
  Value* h0 = g.add_input("h0", TensorType(DType::kF32, {2}));
  Value* k = g.add_input("k", TensorType(DType::kF32, {2}));
  auto outer_body = std::make_shared<Graph>();
  Value* carried = outer_body->add_input("carried", TensorType(DType::kF32, {2}));
  Value* row = outer_body->add_input("row", TensorType(DType::kF32, {4, 2}));
  Value* kk = outer_body->add_input("k_in", TensorType(DType::kF32, {2}));
  graph::Node* inner = add_running_sum(*outer_body, carried, row, kk, false, false);
  outer_body->set_outputs({inner->outputs[0], inner->outputs[1]});
  graph::Attrs a;
  a.set("length", int64_t(3));
  a.set("num_states", int64_t(1));
  a.set("num_scan_inputs", int64_t(1));
  graph::Node* outer = g.add_node("Scan", "outer", {h0, rows, k}, {"last", "all"}, a);
  outer->body = outer_body;
  graph::infer_node(*outer);
  g.set_outputs({outer->outputs[0], outer->outputs[1]});
  std::vector<double> values;
  for (int i = 0; i < 24; ++i) values.push_back(i % 5 - 2);
  std::vector<Tensor> inputs = {f32(values, {3, 4, 2}), f32({0.5, 1}, {2}), f32({2, 3}, {2})};
  std::vector<double> h = {0.5, 1}, want_all;
  for (int r = 0; r < 3; ++r)
    for (int t = 0; t < 4; ++t)
      for (int j = 0; j < 2; ++j) {
        h[size_t(j)] += values[size_t(r * 8 + t * 2 + j)];
        want_all.push_back(h[size_t(j)] * (j == 0 ? 2 : 3));
      }
  std::vector<Tensor> ref = reference::Executor(g).run(inputs);
  EXPECT_EQ(ref[0].to_f64_vector(), h);
  EXPECT_EQ(ref[1].to_f64_vector(), want_all);
  driver::CompiledGraph compiled = driver::compile_graph(g, {});
  ASSERT_EQ(compiled.plan.loops.size(), 2u);
  EXPECT_EQ(compiled.plan.loops[1].parent, 0);
  driver::JitModel jit(std::move(compiled));
  std::vector<Tensor> out = jit.run(inputs);
  EXPECT_EQ(out[0].to_f64_vector(), h);
  EXPECT_EQ(out[1].to_f64_vector(), want_all);
}

// (a, b) -> (a + b, a) four times from (1, 0): the body returns one state as
// the other's next, read after the first state's copy has overwritten it.
TEST(Scan, SwappedStatesAreCarriedCorrectly) {
  Graph g;
  Value* a0 = g.add_input("a0", TensorType(DType::kF32, {1}));
  Value* b0 = g.add_input("b0", TensorType(DType::kF32, {1}));
  auto body = std::make_shared<Graph>();
  Value* a = body->add_input("a", TensorType(DType::kF32, {1}));
  Value* b = body->add_input("b", TensorType(DType::kF32, {1}));
  graph::Node* sum = body->add_node("Add", "sum", {a, b}, {"s"});
  graph::infer_node(*sum);
  body->set_outputs({sum->outputs[0], a});
  graph::Attrs attrs;
  attrs.set("length", int64_t(4));
  attrs.set("num_states", int64_t(2));
  attrs.set("num_scan_inputs", int64_t(0));
  graph::Node* scan = g.add_node("Scan", "fibonacci", {a0, b0}, {"a_last", "b_last"}, attrs);
  scan->body = body;
  graph::infer_node(*scan);
  g.set_outputs({scan->outputs[0], scan->outputs[1]});
  std::vector<Tensor> inputs = {f32({1}, {1}), f32({0}, {1})};
  EXPECT_EQ(reference::Executor(g).run(inputs)[0].to_f64_vector(), std::vector<double>{5});
  driver::JitModel jit(driver::compile_graph(g, {}));
  std::vector<Tensor> out = jit.run(inputs);
  EXPECT_EQ(out[0].to_f64_vector(), std::vector<double>{5});
  EXPECT_EQ(out[1].to_f64_vector(), std::vector<double>{3});
}

TEST(Scan, ABodyThatDisagreesWithTheNodeIsAUserError) {
  Graph g;
  Value* h0 = g.add_input("h0", TensorType(DType::kF32, {3}));  // the body's state is f32[2]
  Value* xs = g.add_input("xs", TensorType(DType::kF32, {4, 2}));
  Value* k = g.add_input("k", TensorType(DType::kF32, {2}));
  try {
    add_running_sum(g, h0, xs, k, false, false);
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("input 0 has type f32[3], the body expects f32[2]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel
