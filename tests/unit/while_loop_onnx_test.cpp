// While loops (adapters_while.cpp): a Loop whose body computes its condition,
// or whose trip count only a run knows, as a Scan with a while_state. Worked
// by hand on the reference executor and compiled; what it stacks per
// iteration comes out cut to the iterations that ran; a loop stacking without
// a bound is refused by name.
#include <gtest/gtest.h>

#include "src/driver/compile_model.h"
#include "src/passes/dead_code.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

constexpr int kI64 = onnx::TensorProto::INT64;
constexpr int kBool = onnx::TensorProto::BOOL;

onnx::NodeProto* add(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins,
                     const std::string& out) {
  return ModelBuilder::subgraph_node(g, op, ins, out);
}

void initializer(onnx::GraphProto* g, const std::string& name, float v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(v);
}

// y = y0; while (y < limit and M allows) y = y * 2; with `stack`, each
// iteration's y is also a scan output. M: a constant `trips`, a graph input
// "m" (trips == -2), or omitted (-1).
ModelBuilder doubling_loop(int64_t trips, bool stack) {
  ModelBuilder b(13);
  b.input("y0", {1});
  b.input("limit", {1});
  std::string m;
  if (trips >= 0) {
    b.int64_initializer("trips", {}, {trips});
    m = "trips";
  } else if (trips == -2) {
    b.input("m", {}, kI64);
    m = "m";
  }
  std::vector<std::string> outs{"y"};
  if (stack) outs.push_back("ys");
  onnx::NodeProto* loop = b.node("Loop", {m, "", "y0"}, outs, "loop");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = a->mutable_g();
  ModelBuilder::value_info(body->add_input(), "i", {}, kI64);
  ModelBuilder::value_info(body->add_input(), "cond", {}, kBool);
  ModelBuilder::value_info(body->add_input(), "y_in", {1}, onnx::TensorProto::FLOAT);
  initializer(body, "two", 2);
  add(body, "Mul", {"y_in", "two"}, "y_out");
  add(body, "Less", {"y_out", "limit"}, "below");  // reads the outer graph's limit
  add(body, "Squeeze", {"below"}, "cond_out");
  body->add_output()->set_name("cond_out");
  body->add_output()->set_name("y_out");
  if (stack) {
    add(body, "Identity", {"y_out"}, "scanned");
    body->add_output()->set_name("scanned");
  }
  for (const std::string& o : outs) b.output(o);
  return b;
}

Tensor one_float(double v) {
  Tensor t(DType::kF32, {1});
  t.set_f64(0, v);
  return t;
}

// Every output on the reference executor and compiled: shapes and values.
void expect_both(ModelBuilder& b, const std::vector<Tensor>& inputs, const std::vector<Dims>& shapes,
                 const std::vector<std::vector<double>>& want) {
  graph::Graph ref = b.import();
  std::vector<Tensor> r = reference::Executor(ref).run(inputs);
  graph::Graph g = b.import();
  passes::eliminate_dead_code(g);
  std::vector<Tensor> c = driver::JitModel(driver::compile_graph(g, {})).run(inputs);
  ASSERT_EQ(r.size(), want.size());
  ASSERT_EQ(c.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(r[k].shape(), shapes[k]) << "reference, output " << k;
    EXPECT_EQ(r[k].to_f64_vector(), want[k]) << "reference, output " << k;
    EXPECT_EQ(c[k].shape(), shapes[k]) << "LLVM, output " << k;
    EXPECT_EQ(c[k].to_f64_vector(), want[k]) << "LLVM, output " << k;
  }
}

TEST(WhileLoop, TheBodysConditionEndsIt) {
  ModelBuilder b = doubling_loop(-1, false);  // M omitted: only the condition bounds it
  graph::Graph g = b.import();
  bool while_scan = false;
  for (const graph::Node* n : g.nodes())
    while_scan |= n->op == "Scan" && n->attrs.get_int("while_state") == 0;
  EXPECT_TRUE(while_scan);
  // 1 -> 2 -> ... -> 128, the first value not below 100.
  expect_both(b, {one_float(1), one_float(100)}, {{1}}, {{128}});
  // The first iteration always runs (the condition given is true).
  expect_both(b, {one_float(1000), one_float(100)}, {{1}}, {{2000}});
}

TEST(WhileLoop, ATripCountKnownOnlyAtRunTimeBoundsIt) {
  ModelBuilder b = doubling_loop(-2, false);
  Tensor m = Tensor::from_i64({3}, {});
  expect_both(b, {one_float(1), one_float(100), m}, {{1}}, {{8}});  // M ends it
  expect_both(b, {one_float(1), one_float(3), m}, {{1}}, {{4}});    // the condition does
  expect_both(b, {one_float(1), one_float(100), Tensor::from_i64({0}, {})}, {{1}}, {{1}});  // none runs
}

TEST(WhileLoop, WhatItStacksComesOutCutToTheIterationsThatRan) {
  ModelBuilder b = doubling_loop(10, true);
  expect_both(b, {one_float(1), one_float(20)}, {{1}, {5, 1}}, {{32}, {2, 4, 8, 16, 32}});
  expect_both(b, {one_float(3), one_float(1000)}, {{1}, {9, 1}},
              {{1536}, {6, 12, 24, 48, 96, 192, 384, 768, 1536}});
}

TEST(WhileLoop, StackingWithoutABoundIsRefusedByName) {
  for (int64_t trips : {int64_t(-1), int64_t(-2)}) {
    ModelBuilder b = doubling_loop(trips, true);
    expect_import_error(b,
                        "node 'loop' (Loop): stacks scan output 0 in a loop whose number of iterations "
                        "nothing bounds");
  }
}

}  // namespace
}  // namespace tessel::onnx_test
