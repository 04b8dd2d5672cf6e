// Elementwise opset adapters: ONNX models built in memory, imported, checked
// for the canonical graph and run on the reference executor.
#include <onnx/onnx_pb.h>

#include "src/frontend/onnx/importer.h"
#include "tests/unit/elementwise_test_util.h"

namespace tessel::elementwise_test {
namespace {

void add_value_info(onnx::ValueInfoProto* vi, const std::string& name, int elem_type, const Dims& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// A model of one node; inputs and outputs are f32 of shape dims unless given.
struct ModelBuilder {
  onnx::ModelProto model;
  onnx::NodeProto* node;

  ModelBuilder(int opset, const std::string& op) {
    model.set_ir_version(8);
    model.add_opset_import()->set_version(opset);
    model.mutable_graph()->set_name("g");
    node = model.mutable_graph()->add_node();
    node->set_op_type(op);
    node->set_name("the_" + op);
  }
  ModelBuilder& input(const std::string& name, const Dims& dims, int type = onnx::TensorProto::FLOAT) {
    add_value_info(model.mutable_graph()->add_input(), name, type, dims);
    node->add_input(name);
    return *this;
  }
  ModelBuilder& output(const std::string& name, const Dims& dims, int type = onnx::TensorProto::FLOAT) {
    add_value_info(model.mutable_graph()->add_output(), name, type, dims);
    node->add_output(name);
    return *this;
  }
  ModelBuilder& attr_f(const std::string& name, float v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
    return *this;
  }
  ModelBuilder& attr_i(const std::string& name, int64_t v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  graph::Graph import() const { return onnx_frontend::import_model_proto(model, "."); }
};

const graph::Node* only_node(const graph::Graph& g, const std::string& op) {
  for (const graph::Node* n : g.nodes())
    if (n->op == op) return n;
  ADD_FAILURE() << "no " << op << " node in the graph";
  return nullptr;
}

TEST(ElementwiseAdapter, Clip6AttributesBecomeInputs) {
  ModelBuilder b(6 + 1, "Clip");  // opset 7: Clip-6 is in effect
  b.input("x", {4}).output("y", {4}).attr_f("min", -1).attr_f("max", 2);
  graph::Graph g = b.import();
  const graph::Node* clip = only_node(g, "Clip");
  ASSERT_TRUE(clip);
  ASSERT_EQ(clip->inputs.size(), 3u);
  EXPECT_TRUE(clip->attrs.empty());
  ASSERT_TRUE(clip->inputs[1] && clip->inputs[1]->is_constant());
  EXPECT_EQ(clip->inputs[1]->constant->get_f64(0), -1);
  Tensor x = f32({4}, {-5, 0, 1, 5});
  EXPECT_EQ(values(reference::Executor(g).run({x})[0]), (std::vector<double>{-1, 0, 1, 2}));
}

TEST(ElementwiseAdapter, Clip6OnlyMax) {
  ModelBuilder b(10, "Clip");
  b.input("x", {3}).output("y", {3}).attr_f("max", 0);
  graph::Graph g = b.import();
  Tensor x = f32({3}, {-5, 0, 5});
  EXPECT_EQ(values(reference::Executor(g).run({x})[0]), (std::vector<double>{-5, 0, 0}));
}

TEST(ElementwiseAdapter, CastMapsOnnxTypeToDtypeName) {
  ModelBuilder b(19, "Cast");
  b.input("x", {2})
      .output("y", {2}, onnx::TensorProto::INT64)
      .attr_i("to", onnx::TensorProto::INT64)
      .attr_i("saturate", 1);
  graph::Graph g = b.import();
  const graph::Node* cast = only_node(g, "Cast");
  ASSERT_TRUE(cast);
  EXPECT_EQ(cast->attrs.get_string("to"), "i64");
  EXPECT_EQ(cast->attrs.get_int("saturate"), 1);  // kept: it matters for the 8-bit float targets
  Tensor x = f32({2}, {2.9, -2.9});
  EXPECT_EQ(values(reference::Executor(g).run({x})[0]), (std::vector<double>{2, -2}));
}

TEST(ElementwiseAdapter, CastToFloat8KeepsSaturate) {
  ModelBuilder b(19, "Cast");
  b.input("x", {2}).output("y", {2}, 17).attr_i("to", 17).attr_i("saturate", 0);  // FLOAT8E4M3FN
  graph::Graph g = b.import();
  const graph::Node* cast = only_node(g, "Cast");
  ASSERT_TRUE(cast);
  EXPECT_EQ(cast->attrs.get_string("to"), "f8e4m3fn");
  EXPECT_EQ(cast->attrs.get_int("saturate"), 0);
}

TEST(ElementwiseAdapter, CastToStringRefused) {
  ModelBuilder b(19, "Cast");
  b.input("x", {2}).output("y", {2}, 0).attr_i("to", onnx::TensorProto::STRING);
  expect_user_error([&] { b.import(); }, {"the_Cast", "casting to STRING is not supported"});
}

TEST(ElementwiseAdapter, CastLikeBecomesCast) {
  ModelBuilder b(15, "CastLike");
  b.input("x", {2}).input("like", {1}, onnx::TensorProto::DOUBLE).output("y", {2}, onnx::TensorProto::DOUBLE);
  graph::Graph g = b.import();
  const graph::Node* cast = only_node(g, "Cast");
  ASSERT_TRUE(cast);
  EXPECT_EQ(cast->inputs.size(), 1u);
  EXPECT_EQ(cast->attrs.get_string("to"), "f64");
  EXPECT_EQ(cast->outputs[0]->type.str(), "f64[2]");
}

TEST(ElementwiseAdapter, Dropout7MaskHasInputType) {
  ModelBuilder b(7, "Dropout");
  b.input("x", {3}).output("y", {3}).output("mask", {3}).attr_f("ratio", 0.25f);
  graph::Graph g = b.import();
  Tensor x = f32({3}, {1, 2, 3});
  std::vector<Tensor> out = reference::Executor(g).run({x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(out[1].dtype(), DType::kF32);
  EXPECT_EQ(values(out[1]), (std::vector<double>{1, 1, 1}));
  const graph::Node* drop = only_node(g, "Dropout");
  ASSERT_TRUE(drop && drop->has_input(1));
  EXPECT_FLOAT_EQ(float(drop->inputs[1]->constant->get_f64(0)), 0.25f);
}

TEST(ElementwiseAdapter, DropoutTrainingRefused) {
  ModelBuilder old(7, "Dropout");
  old.input("x", {3}).output("y", {3}).attr_i("is_test", 0);
  expect_user_error([&] { old.import(); },
                    {"the_Dropout", "training-mode Dropout (is_test=0) drops at random"});

  ModelBuilder b(13, "Dropout");
  b.input("x", {3}).output("y", {3});
  onnx::TensorProto* on = b.model.mutable_graph()->add_initializer();
  on->set_name("train");
  on->set_data_type(onnx::TensorProto::BOOL);
  on->add_int32_data(1);
  b.node->add_input("");
  b.node->add_input("train");
  expect_user_error([&] { b.import(); }, {"the_Dropout", "training-mode Dropout drops at random"});
}

}  // namespace
}  // namespace tessel::elementwise_test
