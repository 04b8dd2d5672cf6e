// Movement opset adapters: one-node ONNX models built in memory, imported,
// checked for the canonical graph and run on the reference executor.
#include <onnx/onnx_pb.h>

#include "src/frontend/onnx/importer.h"
#include "tests/unit/movement_test_util.h"

namespace tessel::movement_test {
namespace {

void add_value_info(onnx::ValueInfoProto* vi, const std::string& name, const Dims& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// A model of one node over f32 inputs and outputs, named "the_<op>".
struct ModelBuilder {
  onnx::ModelProto model;
  onnx::NodeProto* node;

  ModelBuilder(int opset, const std::string& op) {
    model.set_ir_version(7);
    model.add_opset_import()->set_version(opset);
    node = model.mutable_graph()->add_node();
    node->set_op_type(op);
    node->set_name("the_" + op);
  }
  ModelBuilder& input(const std::string& name, const Dims& dims) {
    add_value_info(model.mutable_graph()->add_input(), name, dims);
    node->add_input(name);
    return *this;
  }
  ModelBuilder& output(const std::string& name, const Dims& dims) {
    add_value_info(model.mutable_graph()->add_output(), name, dims);
    node->add_output(name);
    return *this;
  }
  ModelBuilder& ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  ModelBuilder& attr(const std::string& name, const std::string& s) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(s);
    return *this;
  }
  ModelBuilder& attr(const std::string& name, float f) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(f);
    return *this;
  }
  graph::Graph import() const { return onnx_frontend::import_model_proto(model, "."); }
};

const graph::Node* first_node(const graph::Graph& g, const std::string& op) {
  for (const graph::Node* n : g.nodes())
    if (n->op == op) return n;
  ADD_FAILURE() << "no " << op << " node in the graph";
  return nullptr;
}

TEST(MovementAdapter, Slice1AttributesBecomeInputs) {
  ModelBuilder b(9, "Slice");
  b.input("x", {3, 4}).output("y", {3, 2}).ints("starts", {1}).ints("ends", {-1}).ints("axes", {1});
  graph::Graph g = b.import();
  const graph::Node* n = first_node(g, "Slice");
  ASSERT_TRUE(n);
  EXPECT_TRUE(n->attrs.empty());
  ASSERT_EQ(n->inputs.size(), 4u);
  EXPECT_EQ(n->inputs[2]->constant->to_i64_vector(), (std::vector<int64_t>{-1}));
  auto y = reference::Executor(g).run({iota(DType::kF32, {3, 4})});
  EXPECT_EQ(values(y[0]), (std::vector<double>{1, 2, 5, 6, 9, 10}));
}

TEST(MovementAdapter, Slice1WithoutEndsIsUserError) {
  ModelBuilder b(9, "Slice");
  b.input("x", {3}).output("y", {1}).ints("starts", {1});
  expect_user_error([&] { b.import(); }, "the_Slice", "'ends'");
}

TEST(MovementAdapter, Pad2AttributesBecomeInputs) {
  ModelBuilder b(10, "Pad");
  b.input("x", {2}).output("y", {4}).ints("pads", {1, 1}).attr("value", 7.5f);
  graph::Graph g = b.import();
  const graph::Node* n = first_node(g, "Pad");
  ASSERT_TRUE(n);
  ASSERT_EQ(n->inputs.size(), 3u);
  EXPECT_EQ(n->inputs[2]->type.dtype, DType::kF32);
  auto y = reference::Executor(g).run({f32({2}, {1, 2})});
  EXPECT_EQ(values(y[0]), (std::vector<double>{7.5, 1, 2, 7.5}));
}

TEST(MovementAdapter, Pad2ReflectMode) {
  ModelBuilder b(7, "Pad");
  b.input("x", {3}).output("y", {5}).ints("pads", {2, 0}).attr("mode", std::string("reflect"));
  graph::Graph g = b.import();
  auto y = reference::Executor(g).run({f32({3}, {1, 2, 3})});
  EXPECT_EQ(values(y[0]), (std::vector<double>{3, 2, 1, 2, 3}));
}

TEST(MovementAdapter, Split11AttributeBecomesInput) {
  ModelBuilder b(11, "Split");
  b.input("x", {5}).output("a", {2}).output("b", {3}).ints("split", {2, 3});
  graph::Graph g = b.import();
  const graph::Node* n = first_node(g, "Split");
  ASSERT_TRUE(n);
  ASSERT_EQ(n->inputs.size(), 2u);
  EXPECT_EQ(n->outputs[1]->type.str(), "f32[3]");
  auto y = reference::Executor(g).run({f32({5}, {0, 1, 2, 3, 4})});
  EXPECT_EQ(values(y[1]), (std::vector<double>{2, 3, 4}));
}

}  // namespace
}  // namespace tessel::movement_test
