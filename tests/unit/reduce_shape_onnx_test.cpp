// ONNX import of the reduce and shape ops: opset adapters (axes attributes
// that became inputs) and Shape values folding into Reshape targets. Models
// are built in memory, imported, checked and run on the reference executor.
#include <onnx/onnx_pb.h>

#include "src/frontend/onnx/importer.h"
#include "tests/unit/movement_test_util.h"

namespace tessel::movement_test {
namespace {

using I = std::vector<int64_t>;

struct Model {
  onnx::ModelProto proto;

  explicit Model(int opset) {
    proto.set_ir_version(8);
    proto.add_opset_import()->set_version(opset);
  }
  void value(onnx::ValueInfoProto* vi, const std::string& name, int elem_type, const Dims& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  Model& input(const std::string& name, const Dims& dims, int elem = onnx::TensorProto::FLOAT) {
    value(proto.mutable_graph()->add_input(), name, elem, dims);
    return *this;
  }
  Model& output(const std::string& name) {
    proto.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  Model& int64s(const std::string& name, const I& v) {
    auto* t = proto.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return *this;
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins, const std::string& out) {
    onnx::NodeProto* n = proto.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name("the_" + op);
    for (const auto& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  }
  graph::Graph import() const { return onnx_frontend::import_model_proto(proto, "."); }
};

void set_ints(onnx::NodeProto* n, const std::string& name, const I& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

const graph::Node* only_node(const graph::Graph& g) {
  EXPECT_EQ(g.num_nodes(), 1u);
  return g.nodes().empty() ? nullptr : g.nodes()[0];
}

TEST(ReduceAdapter, AxesAttributeBecomesInputBeforeItsOpset) {
  struct Case {
    const char* op;
    int opset;
  };
  for (Case c : {Case{"ReduceSum", 11}, Case{"ReduceMean", 13}, Case{"ReduceLogSumExp", 17}}) {
    Model m(c.opset);
    m.input("x", {2, 3}).output("y");
    set_ints(m.node(c.op, {"x"}, "y"), "axes", {-1});
    graph::Graph g = m.import();
    const graph::Node* n = only_node(g);
    ASSERT_TRUE(n) << c.op;
    ASSERT_EQ(n->inputs.size(), 2u) << c.op;
    EXPECT_EQ(n->inputs[1]->constant->to_i64_vector(), (I{-1})) << c.op;
    EXPECT_EQ(n->outputs[0]->type.str(), "f32[2, 1]") << c.op;
  }
}

TEST(ReduceAdapter, AxesInputPassesThroughFromOpset18) {
  Model m(18);
  m.input("x", {2, 3}).int64s("axes", {0}).output("y");
  m.node("ReduceMax", {"x", "axes"}, "y");
  graph::Graph g = m.import();
  auto y = reference::Executor(g).run({f32({2, 3}, {1, 9, 3, 4, 5, 6})});
  EXPECT_EQ(y[0].shape(), (Dims{1, 3}));
  EXPECT_EQ(values(y[0]), (std::vector<double>{4, 9, 6}));
}

TEST(ShapeAdapter, SqueezeAndUnsqueezeAxesAttributes) {
  Model m(11);
  m.input("x", {3, 1}).output("z");
  set_ints(m.node("Squeeze", {"x"}, "y"), "axes", {1});
  set_ints(m.node("Unsqueeze", {"y"}, "z"), "axes", {0, 2});
  graph::Graph g = m.import();
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.nodes()[0]->inputs[1]->constant->to_i64_vector(), (I{1}));
  EXPECT_EQ(g.outputs()[0]->type.str(), "f32[1, 3, 1]");

  Model bad(11);
  bad.input("x", {3}).output("y");
  bad.node("Unsqueeze", {"x"}, "y");
  expect_user_error([&] { bad.import(); }, "the_Unsqueeze", "missing required attribute 'axes'");
}

// Shape of a static input is a compile-time value, so the Reshape's target is
// a constant and the Shape node disappears.
TEST(ShapeImport, ShapeFoldsIntoReshapeTarget) {
  Model m(15);
  m.input("x", {2, 3, 4}).input("z", {6, 4}).output("y");
  m.node("Shape", {"z"}, "s");
  m.node("Reshape", {"x", "s"}, "y");
  graph::Graph g = m.import();
  const graph::Node* n = only_node(g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->op, "Reshape");
  EXPECT_TRUE(n->inputs[1]->is_constant());
  EXPECT_EQ(n->outputs[0]->type.str(), "f32[6, 4]");
}

// A shape that arrives as a graph input: unknown while importing, exact when run.
TEST(ShapeImport, RuntimeReshapeTarget) {
  Model m(14);
  m.input("x", {2, 3, 4}).input("shape", {2}, onnx::TensorProto::INT64).output("y");
  m.node("Reshape", {"x", "shape"}, "y");
  graph::Graph g = m.import();
  EXPECT_EQ(g.outputs()[0]->type.str(), "f32[?, ?]");
  auto y = reference::Executor(g).run({iota(DType::kF32, {2, 3, 4}), i64({-1, 8})});
  EXPECT_EQ(y[0].shape(), (Dims{3, 8}));
}

}  // namespace
}  // namespace tessel::movement_test
