// nn ops, normalising: BatchNormalization, LayerNormalization,
// InstanceNormalization, GroupNormalization, Softmax, LogSoftmax; and the nn
// opset adapters (Softmax-11's coerce-to-2-D, BatchNormalization's training
// outputs, GroupNormalization-18) through the ONNX importer.
#include <onnx/onnx_pb.h>

#include <cmath>

#include "src/frontend/onnx/importer.h"
#include "tests/unit/nn_test_util.h"

namespace tessel::nn_test {
namespace {

using graph::TensorType;

TEST(NnBatchNorm, PerChannelScaleAndShift) {
  Tensor x = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  Tensor scale = f32({2}, {1, 2}), b = f32({2}, {0, 1}), mean = f32({2}, {1, 3}), var = f32({2}, {4, 1});
  auto y = run_op("BatchNormalization", {&x, &scale, &b, &mean, &var}, attrs(kv("epsilon", 0.0)));
  expect_values(y[0], {0, 0.5, 1, 3});
  EXPECT_EQ(graph::OpRegistry::global().find("BatchNormalization")->pattern, graph::OpPattern::kBroadcast);
}

TEST(NnBatchNorm, TrainingFormsAreRefused) {
  Tensor x(DType::kF32, {1, 2, 2}), c(DType::kF32, {2}), c3(DType::kF32, {3});
  expect_user_error(
      [&] {
        OneNode("BatchNormalization", {&x, &c, &c, &c, &c}, attrs(kv("training_mode", int64_t(1))));
      },
      {"node_under_test", "training_mode=1 is not supported"});
  expect_user_error(
      [&] {
        OneNode("BatchNormalization", {&x, &c, &c, &c, &c}, {}, 3);
      },
      {"has 3 outputs", "training mode"});
  expect_user_error(
      [&] {
        OneNode("BatchNormalization", {&x, &c, &c3, &c, &c});
      },
      {"B has 3 entries, but the input has 2 channels"});
}

TEST(NnLayerNorm, ValuesAndStatistics) {
  Tensor x = f32({2, 2}, {1, 3, 2, 6}), scale = f32({2}, {1, 2}), b = f32({2}, {0, 1});
  OneNode ln("LayerNormalization", {&x, &scale, &b}, attrs(kv("epsilon", 0.0)), 3);
  EXPECT_EQ(ln.type(1), "f32[2, 1]");
  auto y = ln.run();
  expect_values(y[0], {-1, 3, -1, 3});
  expect_values(y[1], {2, 4});
  expect_values(y[2], {1, 0.5});
}

TEST(NnLayerNorm, AxisZeroBroadcastsScale) {
  // Normalised over all four elements: mean 3, variance 3.5; scale [2] repeats per row.
  Tensor x = f32({2, 2}, {1, 3, 2, 6}), scale = f32({2}, {1, 10});
  auto y = run_op("LayerNormalization", {&x, &scale}, attrs(kv("axis", int64_t(0)), kv("epsilon", 0.0)));
  double s = 1 / std::sqrt(3.5);
  expect_values(y[0], {-2 * s, 0, -1 * s, 30 * s});
  Tensor scale3d = f32({1, 1, 2}, {1, 10});  // leading 1s beyond the normalised rank
  auto y3 = run_op("LayerNormalization", {&x, &scale3d}, attrs(kv("epsilon", 0.0)));
  expect_values(y3[0], {-1, 10, -1, 10});
}

TEST(NnLayerNorm, UserErrors) {
  Tensor x(DType::kF32, {2, 4}), scale3(DType::kF32, {3}), scale(DType::kF32, {4});
  expect_user_error(
      [&] {
        OneNode("LayerNormalization", {&x, &scale}, attrs(kv("axis", int64_t(2))));
      },
      {"node_under_test", "axis 2 is out of range for rank 2"});
  expect_user_error(
      [&] {
        OneNode("LayerNormalization", {&x, &scale3});
      },
      {"Scale f32[3] does not broadcast"});
  expect_user_error(
      [&] {
        OneNode("LayerNormalization", {&x, &scale}, attrs(kv("stash_type", int64_t(10))));
      },
      {"stash_type must be 1"});
  expect_user_error([&] { OneNode("LayerNormalization", {&x}); }, {"expects 2 to 3 inputs, got 1"});
}

TEST(NnInstanceAndGroupNorm, Values) {
  Tensor x = f32({1, 1, 4}, {1, 2, 3, 4}), scale = f32({1}, {2}), b = f32({1}, {1});
  auto y = run_op("InstanceNormalization", {&x, &scale, &b}, attrs(kv("epsilon", 0.0)));
  double inv = 1 / std::sqrt(1.25);
  expect_values(y[0], {-1.5 * inv * 2 + 1, -0.5 * inv * 2 + 1, 0.5 * inv * 2 + 1, 1.5 * inv * 2 + 1});
  Tensor xg = f32({1, 4, 1}, {1, 3, 10, 30}), sg = f32({4}, {1, 1, 2, 2}), bg = f32({4}, {0, 0, 0, 1});
  auto g =
      run_op("GroupNormalization", {&xg, &sg, &bg}, attrs(kv("num_groups", int64_t(2)), kv("epsilon", 0.0)));
  expect_values(g[0], {-1, 1, -2, 3});
  expect_user_error(
      [&] {
        OneNode("GroupNormalization", {&xg, &sg, &bg}, attrs(kv("num_groups", int64_t(3))));
      },
      {"node_under_test", "not divisible by num_groups 3"});
}

TEST(NnSoftmax, AlongAnyAxis) {
  Tensor x = f32({2, 2}, {0, std::log(3.0), 0, 0});
  expect_values(run_op("Softmax", {&x})[0], {0.25, 0.75, 0.5, 0.5});
  expect_values(run_op("Softmax", {&x}, attrs(kv("axis", int64_t(0))))[0], {0.5, 0.75, 0.5, 0.25});
  expect_values(run_op("LogSoftmax", {&x})[0],
                {std::log(0.25), std::log(0.75), std::log(0.5), std::log(0.5)});
  Tensor big = f32({3}, {1000, 1000, 1000});  // stable: shifted by the maximum
  expect_values(run_op("Softmax", {&big})[0], {1 / 3.0, 1 / 3.0, 1 / 3.0});
  expect_user_error([&] { OneNode("Softmax", {&x}, attrs(kv("axis", int64_t(-3)))); },
                    {"axis -3 is out of range"});
  Tensor xi(DType::kI32, {2});
  expect_user_error([&] { OneNode("Softmax", {&xi}); }, {"must be a float tensor"});
}

// A one-node ONNX model over constant-free inputs, imported.
struct OnnxModel {
  onnx::ModelProto m;
  onnx::NodeProto* n;

  OnnxModel(int opset, const std::string& op, std::vector<std::string> outputs) {
    m.set_ir_version(7);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    n = m.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name("onnx_node");
    for (const auto& out : outputs) n->add_output(out);
    for (const auto& out : outputs)
      if (!out.empty()) m.mutable_graph()->add_output()->set_name(out);
  }
  void input(const std::string& name, const Dims& dims) {
    n->add_input(name);
    auto* vi = m.mutable_graph()->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void initializer(const std::string& name, const std::vector<float>& values) {
    n->add_input(name);
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(int64_t(values.size()));
    for (float v : values) t->add_float_data(v);
  }
  void int_attr(const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  graph::Graph import() const { return onnx_frontend::import_model_proto(m, "."); }
};

TEST(NnAdapters, BatchNormTrainingOutputsAreRefused) {
  OnnxModel bn(9, "BatchNormalization", {"y", "mean_out", "var_out"});
  bn.input("x", {1, 2, 2});
  for (const char* p : {"s", "b", "m", "v"}) bn.initializer(p, {1, 1});
  expect_user_error([&] { bn.import(); }, {"onnx_node", "output 1 ('mean_out') holds training statistics"});
  OnnxModel unnamed(9, "BatchNormalization", {"y", "", ""});  // optional outputs left out
  unnamed.input("x", {1, 2, 2});
  for (const char* p : {"s", "b", "m", "v"}) unnamed.initializer(p, {1, 1});
  EXPECT_EQ(unnamed.import().nodes().size(), 1u);
}

TEST(NnAdapters, Softmax11OnTheLastAxisIsOneSoftmax) {
  OnnxModel sm(11, "Softmax", {"y"});
  sm.input("x", {2, 3});
  sm.int_attr("axis", 1);
  graph::Graph g = sm.import();
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->attrs.get_int("axis"), -1);
}

TEST(NnAdapters, Softmax11CoercesTo2d) {
  if (!graph::OpRegistry::global().find("Flatten") || !graph::OpRegistry::global().find("Reshape"))
    GTEST_SKIP() << "needs the shape family's Flatten and Reshape";
  OnnxModel sm(11, "Softmax", {"y"});
  sm.input("x", {2, 2, 2});
  graph::Graph g = sm.import();  // default axis 1: softmax over each sample's 4 values
  Tensor x = f32({2, 2, 2}, {0, 0, 0, std::log(5.0), 1, 1, 1, 1});
  auto y = reference::Executor(g).run({x});
  EXPECT_EQ(y[0].shape(), (Dims{2, 2, 2}));
  expect_values(y[0], {0.125, 0.125, 0.125, 0.625, 0.25, 0.25, 0.25, 0.25});
}

TEST(NnAdapters, GroupNorm18RepeatsScalePerChannel) {
  OnnxModel gn(18, "GroupNormalization", {"y"});
  gn.input("x", {1, 4, 1});
  gn.initializer("s", {1, 2});
  gn.initializer("b", {0, 1});
  gn.int_attr("num_groups", 2);
  graph::Graph g = gn.import();
  Tensor x = f32({1, 4, 1}, {1, 3, 10, 30});
  expect_values(reference::Executor(g).run({x})[0], {-1, 1, -1, 3}, 1e-4);
}

}  // namespace
}  // namespace tessel::nn_test
