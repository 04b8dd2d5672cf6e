// What the ONNX importer accepts: tensor encodings, Constant forms, external
// data, symbolic dimensions bound by --input-shape, folding of Shape chains.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "ir/graph/printer.h"
#include "src/frontend/onnx/importer.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_frontend {
namespace {

namespace fs = std::filesystem;
using onnx_test::ModelBuilder;

onnx::TensorProto* float_initializer(ModelBuilder& b, const std::string& name, std::vector<float> values,
                                     bool raw) {
  auto* t = b.g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(int64_t(values.size()));
  if (raw) t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  else
    for (float v : values) t->add_float_data(v);
  return t;
}

std::vector<double> run_single(const graph::Graph& g, const Tensor& x) {
  return reference::Executor(g).run({x})[0].to_f64_vector();
}

Tensor vec(std::vector<float> v) {
  Tensor t(DType::kF32, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set_f64(int64_t(i), v[i]);
  return t;
}

TEST(Importer, RawAndTypedInitializersDecodeAlike) {
  for (bool raw : {false, true}) {
    ModelBuilder b;
    b.input("x", {int64_t(3)});
    float_initializer(b, "w", {1.5f, -2.0f, 0.25f}, raw);
    b.node("Add", {"x", "w"}, {"y"});
    b.output("y");
    graph::Graph g = b.import();
    EXPECT_EQ(run_single(g, vec({1, 1, 1})), (std::vector<double>{2.5, -1.0, 1.25})) << "raw=" << raw;
  }
}

TEST(Importer, ConstantNodeFormsBecomeConstants) {
  ModelBuilder b;
  b.input("x", {int64_t(2)});
  auto* c = b.node("Constant", {}, {"k"});
  auto* a = c->add_attribute();
  a->set_name("value_floats");
  a->set_type(onnx::AttributeProto::FLOATS);
  a->add_floats(10);
  a->add_floats(20);
  b.node("Mul", {"x", "k"}, {"y"});
  b.output("y");
  graph::Graph g = b.import();
  EXPECT_EQ(g.num_nodes(), 1u);  // the Constant node left no node behind
  EXPECT_EQ(run_single(g, vec({2, 3})), (std::vector<double>{20, 60}));
}

TEST(Importer, InputShapeBindsSymbolicDimensions) {
  ModelBuilder b;
  b.input("x", {std::string("N"), int64_t(4)});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_EQ(b.import().outputs()[0]->type.str(), "f32[N, 4]");
  ImportOptions o;
  o.input_shapes["x"] = {2, 4};
  EXPECT_EQ(b.import(o).outputs()[0]->type.str(), "f32[2, 4]");
  o.input_shapes["x"] = {2, 5};
  try {
    b.import(o);
    FAIL() << "a binding that contradicts a fixed dimension must be refused";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_input_shape("x=1x3x224x224"), (std::pair<std::string, Dims>{"x", {1, 3, 224, 224}}));
  EXPECT_THROW(parse_input_shape("x=1xAx2"), UserError);
  EXPECT_THROW(parse_input_shape("1x3"), UserError);
}

TEST(Importer, ShapeOfStaticTensorFoldsIntoReshape) {
  ModelBuilder b;
  b.input("x", {int64_t(2), int64_t(3), int64_t(4)});
  b.node("Shape", {"x"}, {"s"});
  // Reshape x to [2, 12] through a shape computed from Shape(x): [s[0], -1].
  auto* idx = b.node("Constant", {}, {"i0"});
  auto* a = idx->add_attribute();
  a->set_name("value_ints");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(0);
  b.node("Gather", {"s", "i0"}, {"d0"});
  auto* m1 = b.node("Constant", {}, {"minus1"});
  auto* am = m1->add_attribute();
  am->set_name("value_ints");
  am->set_type(onnx::AttributeProto::INTS);
  am->add_ints(-1);
  auto* cat = b.node("Concat", {"d0", "minus1"}, {"target"});
  auto* axis = cat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  b.output("y");
  graph::Graph g = b.import();
  ASSERT_EQ(g.num_nodes(), 1u) << graph::print_graph(g);
  EXPECT_EQ(g.nodes()[0]->op, "Reshape");
  EXPECT_EQ(g.outputs()[0]->type.str(), "f32[2, 12]");
}

TEST(Importer, ExternalDataInsideTheModelFolderLoads) {
  fs::path dir = fs::temp_directory_path() / ("tessel_ext_" + std::to_string(::getpid()));
  fs::create_directories(dir / "weights");
  std::vector<float> w = {0.5f, 1.5f};
  {
    std::ofstream f(dir / "weights" / "w.bin", std::ios::binary);
    f.write("PADDING!", 8);
    f.write(reinterpret_cast<const char*>(w.data()), 8);
  }
  ModelBuilder b;
  b.input("x", {int64_t(2)});
  auto* t = b.g->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair{"location", "weights/w.bin"}, {"offset", "8"}, {"length", "8"}}) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  b.node("Mul", {"x", "w"}, {"y"});
  b.output("y");
  graph::Graph g = b.import({}, dir.string());
  EXPECT_EQ(run_single(g, vec({2, 2})), (std::vector<double>{1.0, 3.0}));
  fs::remove_all(dir);
}

TEST(Importer, OldOpsetAttributesBecomeInputs) {
  // Clip-6 takes min/max as attributes; the canonical Clip takes inputs.
  ModelBuilder b(9);
  b.input("x", {int64_t(4)});
  auto* n = b.node("Clip", {"x"}, {"y"});
  for (auto [name, v] : {std::pair{"min", -1.0f}, {"max", 2.0f}}) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  b.output("y");
  graph::Graph g = b.import();
  EXPECT_EQ(run_single(g, vec({-5, 0.5, 3, 2})), (std::vector<double>{-1, 0.5, 2, 2}));
}

TEST(Importer, OpUsedBeforeItsOpsetIsRefused) {
  ModelBuilder b(13);  // LayerNormalization arrived in opset 17
  b.input("x", {int64_t(2), int64_t(4)});
  b.node("LayerNormalization", {"x"}, {"y"}, "ln");
  b.output("y");
  try {
    b.import();
    FAIL() << "LayerNormalization at opset 13 must be refused";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'ln'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("added in opset 17"), std::string::npos) << e.what();
  }
}

TEST(Importer, ValueDefinedTwiceIsRefused) {
  ModelBuilder b;
  b.input("x", {int64_t(2)});
  b.node("Relu", {"x"}, {"y"}, "first");
  b.node("Neg", {"x"}, {"y"}, "second");
  b.output("y");
  try {
    b.import();
    FAIL() << "two nodes defining 'y' must be refused";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'second'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("already defines"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessel::onnx_frontend
