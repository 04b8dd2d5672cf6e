// Sequences and optionals (adapters_sequence.cpp, graph_importer_values.cpp):
// resolved while importing into the tensor ops on their elements; sequence
// and optional graph inputs and outputs as the tensors they hold; a Loop
// carrying a sequence unrolled. Run on the reference and compiled; what would
// need a structure decided by a run is refused by name.
#include <gtest/gtest.h>

#include <set>

#include "ir/graph/printer.h"
#include "src/driver/compile_model.h"
#include "src/passes/dead_code.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

void sequence_value_info(onnx::ValueInfoProto* vi, const std::string& name, int64_t len) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(len);
}

void sequence_output(ModelBuilder& b, const std::string& name) {
  auto* vi = b.g->add_output();
  vi->set_name(name);
  vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
}

Tensor floats(std::vector<double> v) {
  return f32(v, {int64_t(v.size())});
}

// The outputs on the reference and compiled, which must agree exactly. As
// in the pipeline, what no output reads (an erased element) is removed first.
std::vector<Tensor> run_both(ModelBuilder& b, const std::vector<Tensor>& inputs,
                             onnx_frontend::ImportOptions o = {}) {
  graph::Graph ref = b.import(o);
  std::vector<Tensor> r = reference::Executor(ref).run(inputs);
  graph::Graph g = b.import(o);
  passes::eliminate_dead_code(g);
  std::vector<Tensor> compiled = driver::JitModel(driver::compile_graph(g, {})).run(inputs);
  EXPECT_EQ(r.size(), compiled.size());
  for (size_t k = 0; k < r.size() && k < compiled.size(); ++k)
    for (int64_t i = 0; i < r[k].numel(); ++i)
      EXPECT_EQ(r[k].get_f64(i), compiled[k].get_f64(i)) << "output " << k << "[" << i << "]";
  return r;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_f64(i));
  return out;
}

std::vector<std::string> output_names(const graph::Graph& g) {
  std::vector<std::string> names;
  for (const graph::Value* v : g.outputs()) names.push_back(v->name);
  return names;
}

TEST(SequenceOnnx, SplitEditAndConcatBecomeSlicesAndAConcat) {
  // x [6] split in pieces of 2; insert y at position 1, erase the last piece,
  // stack the three along a new axis 0: [[0,1],[10,11],[2,3]].
  ModelBuilder b(17);
  b.input("x", {6});
  b.input("y", {2});
  b.int64_initializer("two", {}, {2});
  b.int64_initializer("one", {}, {1});
  b.node("SplitToSequence", {"x", "two"}, {"pieces"});
  b.node("SequenceInsert", {"pieces", "y", "one"}, {"inserted"});
  b.node("SequenceErase", {"inserted"}, {"erased"});
  ModelBuilder::set_int(b.node("ConcatFromSequence", {"erased"}, {"z"}), "axis", 0);
  ModelBuilder::set_int(b.g->mutable_node(3), "new_axis", 1);
  b.node("SequenceLength", {"erased"}, {"n"});
  b.output("z");
  b.output("n");
  graph::Graph g = b.import();
  std::multiset<std::string> ops;
  for (const graph::Node* n : g.nodes()) ops.insert(n->op);
  EXPECT_EQ(ops, (std::multiset<std::string>{"Slice", "Slice", "Slice", "Unsqueeze", "Unsqueeze", "Unsqueeze",
                                             "Concat"}))
      << graph::print_graph(g);
  std::vector<Tensor> out = run_both(b, {floats({0, 1, 2, 3, 4, 5}), floats({10, 11})});
  EXPECT_EQ(out[0].shape(), (Dims{3, 2}));
  EXPECT_EQ(values(out[0]), (std::vector<double>{0, 1, 10, 11, 2, 3}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{3}));
}

TEST(SequenceOnnx, SequenceInputsAndOutputsAreTheirElements) {
  // xs: a sequence input of three [2] tensors; ys = xs with its last element
  // doubled appended; last = SequenceAt(xs, -1).
  ModelBuilder b(17);
  sequence_value_info(b.g->add_input(), "xs", 2);
  b.int64_initializer("minus_one", {}, {-1});
  b.node("SequenceAt", {"xs", "minus_one"}, {"last"});
  b.node("Add", {"last", "last"}, {"doubled"});
  b.node("SequenceInsert", {"xs", "doubled"}, {"ys"});
  sequence_output(b, "ys");
  b.output("last");
  onnx_frontend::ImportOptions o;
  o.sequence_lengths["xs"] = 3;
  graph::Graph g = b.import(o);
  std::vector<std::string> inputs;
  for (const graph::Value* v : g.inputs()) inputs.push_back(v->name);
  EXPECT_EQ(inputs, (std::vector<std::string>{"xs[0]", "xs[1]", "xs[2]"}));
  EXPECT_EQ(output_names(g), (std::vector<std::string>{"ys[0]", "ys[1]", "ys[2]", "ys[3]", "last"}));
  std::vector<Tensor> out = run_both(b, {floats({1, 2}), floats({3, 4}), floats({5, 6})}, o);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(values(out[3]), (std::vector<double>{10, 12}));
  EXPECT_EQ(values(out[4]), (std::vector<double>{5, 6}));
}

// A Loop of `trips` iterations whose body appends x * i to a sequence it
// carries; the output stacks the sequence.
ModelBuilder growing_loop(bool trips_known) {
  ModelBuilder b(17);
  b.input("x", {2});
  if (trips_known) {
    b.int64_initializer("trips", {}, {3});
  } else {
    b.input("trips", {}, onnx::TensorProto::INT64);
  }
  b.node("SequenceEmpty", {}, {"empty"});
  onnx::NodeProto* loop = b.node("Loop", {"trips", "", "empty"}, {"grown"});
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = a->mutable_g();
  ModelBuilder::value_info(body->add_input(), "i", {}, onnx::TensorProto::INT64);
  ModelBuilder::value_info(body->add_input(), "cond", {}, onnx::TensorProto::BOOL);
  sequence_value_info(body->add_input(), "seq", 2);
  auto add = [&](const std::string& op, std::vector<std::string> ins, const std::string& out) {
    return ModelBuilder::subgraph_node(body, op, ins, out);
  };
  add("Identity", {"cond"}, "cond_out");
  ModelBuilder::set_int(add("Cast", {"i"}, "fi"), "to", onnx::TensorProto::FLOAT);
  add("Mul", {"x", "fi"}, "step");
  add("SequenceInsert", {"seq", "step"}, "seq_out");
  body->add_output()->set_name("cond_out");
  body->add_output()->set_name("seq_out");
  ModelBuilder::set_int(b.node("ConcatFromSequence", {"grown"}, {"stacked"}), "axis", 0);
  ModelBuilder::set_int(b.g->mutable_node(2), "new_axis", 1);
  b.output("stacked");
  return b;
}

TEST(SequenceOnnx, ALoopCarryingASequenceIsUnrolled) {
  ModelBuilder b = growing_loop(true);
  std::vector<Tensor> out = run_both(b, {floats({1, 2})});
  EXPECT_EQ(out[0].shape(), (Dims{3, 2}));
  EXPECT_EQ(values(out[0]), (std::vector<double>{0, 0, 1, 2, 2, 4}));
}

TEST(SequenceOnnx, OptionalInputsHoldAValueOrNothing) {
  ModelBuilder b(18);
  auto* vi = b.g->add_input();
  vi->set_name("maybe");
  auto* tt = vi->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(2);
  b.node("OptionalHasElement", {"maybe"}, {"has"});
  b.output("has");
  std::vector<Tensor> present = run_both(b, {floats({1, 2})});
  EXPECT_EQ(present[0].get_f64(0), 1);
  onnx_frontend::ImportOptions o;
  o.empty_optionals.insert("maybe");
  graph::Graph empty = b.import(o);
  EXPECT_TRUE(empty.inputs().empty());
  std::vector<Tensor> absent = run_both(b, {}, o);
  EXPECT_EQ(absent[0].get_f64(0), 0);

  b.node("OptionalGetElement", {"maybe"}, {"value"});
  b.output("value");
  try {
    b.import(o);
    ADD_FAILURE() << "imported";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("reads an empty optional"), std::string::npos) << e.what();
  }
  std::vector<Tensor> got = run_both(b, {floats({1, 2})});
  EXPECT_EQ(b.import().outputs()[1]->name, "value");
  EXPECT_EQ(values(got[1]), (std::vector<double>{1, 2}));
}

TEST(SequenceOnnx, WhatARunWouldDecideIsRefusedByName) {
  {  // a position only a run knows
    ModelBuilder b(17);
    b.input("x", {2});
    b.input("pos", {}, onnx::TensorProto::INT64);
    b.node("SequenceConstruct", {"x", "x"}, {"s"});
    b.node("SequenceAt", {"s", "pos"}, {"y"});
    b.output("y");
    expect_import_error(b, "needs its position known while compiling");
  }
  {  // a position outside the sequence
    ModelBuilder b(17);
    b.input("x", {2});
    b.int64_initializer("pos", {}, {2});
    b.node("SequenceConstruct", {"x", "x"}, {"s"});
    b.node("SequenceAt", {"s", "pos"}, {"y"});
    b.output("y");
    expect_import_error(b, "position 2 is outside a sequence of 2 elements");
  }
  {  // a tensor op given a sequence
    ModelBuilder b(17);
    b.input("x", {2});
    b.node("SequenceConstruct", {"x", "x"}, {"s"});
    b.node("Relu", {"s"}, {"y"}, "relu");
    b.output("y");
    expect_import_error(
        b, "node 'relu' (Relu): reads 's', a sequence of 2 f32 tensors, where it takes a tensor");
  }
  {  // a sequence input without its length
    ModelBuilder b(17);
    sequence_value_info(b.g->add_input(), "xs", 2);
    b.node("SequenceLength", {"xs"}, {"n"});
    b.output("n");
    expect_import_error(b, "give it (--sequence-length xs=N)");
  }
  {  // a loop carrying a sequence whose trip count only a run knows
    ModelBuilder b = growing_loop(false);
    expect_import_error(b, "needs a trip count M and a first condition known while compiling");
  }
  {  // a value of data-dependent extent put into a sequence
    ModelBuilder b(17);
    b.input("x", {4});
    b.node("NonZero", {"x"}, {"nz"});
    b.node("SequenceConstruct", {"nz"}, {"s"});
    b.node("SequenceLength", {"s"}, {"n"});
    b.output("n");
    expect_import_error(b, "sequences and optionals hold only values of fixed shape");
  }
  {  // more pieces than a sequence may hold
    ModelBuilder b(17);
    b.input("x", {int64_t(1) << 20});
    b.node("SplitToSequence", {"x"}, {"s"});
    b.node("SequenceLength", {"s"}, {"n"});
    b.output("n");
    expect_import_error(b, "splits into 1048576 tensors, more than a sequence may hold (65536)");
  }
  {  // an empty sequence concatenated
    ModelBuilder b(17);
    b.node("SequenceEmpty", {}, {"s"});
    ModelBuilder::set_int(b.node("ConcatFromSequence", {"s"}, {"y"}), "axis", 0);
    b.output("y");
    expect_import_error(b, "cannot concatenate an empty sequence");
  }
}

TEST(SequenceOnnx, ImportOptionsNamingNoSuchInputAreRefused) {
  ModelBuilder b(17);
  b.input("x", {2});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  onnx_frontend::ImportOptions o;
  o.sequence_lengths["x"] = 2;
  EXPECT_THROW(b.import(o), UserError);
  onnx_frontend::ImportOptions e;
  e.empty_optionals.insert("x");
  EXPECT_THROW(b.import(e), UserError);
}

}  // namespace
}  // namespace tessel::onnx_test
