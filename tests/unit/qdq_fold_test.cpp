// QDQ models folded into integer products (src/frontend/onnx/qdq_fold.h): the
// Conv or MatMul between DequantizeLinear and QuantizeLinear imports as an
// int32 product, computes what the float ops compute to within one
// quantization step, and anything off the pattern keeps its float ops.
#include <gtest/gtest.h>

#include <random>

#include "src/driver/compile_model.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

using onnx::TensorProto;

constexpr float kXScale = 0.05f;

std::vector<double> draw(std::mt19937& rng, size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

struct QdqConv {
  std::string activation = "Relu";  // or "Clip" (to [0, 6]) or "" (none)
  bool per_channel = true;
  float bias_scale_factor = 1.0f;  // the bias's scale over x_scale * w_scale
  bool conv_output_also_read = false;
};

// x_q (u8 [1, 3, 6, 6]) -> DQ -> Conv 3x3 pad 1 (int8 weights, int32 bias, 4
// channels) [-> Relu or Clip] -> Q (u8) -> y_q.
ModelBuilder qdq_conv_model(const QdqConv& c) {
  std::mt19937 rng(7);
  ModelBuilder b(13);
  b.input("x_q", {1, 3, 6, 6}, TensorProto::UINT8);
  std::vector<double> w_scale =
      c.per_channel ? std::vector<double>{0.01, 0.02, 0.015, 0.03} : std::vector<double>{0.02};
  int64_t scales = int64_t(w_scale.size());
  b.typed_initializer("xs", TensorProto::FLOAT, {}, {kXScale});
  b.typed_initializer("xz", TensorProto::UINT8, {}, {120});
  b.typed_initializer("w_q", TensorProto::INT8, {4, 3, 3, 3}, draw(rng, 108, -127, 127));
  b.typed_initializer("ws", TensorProto::FLOAT,
                      c.per_channel ? std::vector<int64_t>{4} : std::vector<int64_t>{}, w_scale);
  b.typed_initializer("wz", TensorProto::INT8,
                      c.per_channel ? std::vector<int64_t>{4} : std::vector<int64_t>{},
                      std::vector<double>(size_t(scales), 0));
  b.typed_initializer("b_q", TensorProto::INT32, {4}, draw(rng, 4, -3000, 3000));
  std::vector<double> b_scale;
  for (double s : w_scale) b_scale.push_back(double(kXScale * float(s) * c.bias_scale_factor));
  b.typed_initializer("bs", TensorProto::FLOAT,
                      c.per_channel ? std::vector<int64_t>{4} : std::vector<int64_t>{}, b_scale);
  b.typed_initializer("ys", TensorProto::FLOAT, {}, {0.5});
  b.typed_initializer("yz", TensorProto::UINT8, {}, {100});
  ModelBuilder::set_int(b.node("DequantizeLinear", {"w_q", "ws", "wz"}, {"w"}, "dq_w"), "axis", 0);
  ModelBuilder::set_int(b.node("DequantizeLinear", {"b_q", "bs"}, {"bias"}, "dq_b"), "axis", 0);
  b.node("DequantizeLinear", {"x_q", "xs", "xz"}, {"x"}, "dq_x");
  ModelBuilder::set_ints(b.node("Conv", {"x", "w", "bias"}, {"conv"}, "conv"), "pads", {1, 1, 1, 1});
  b.typed_initializer("clip_lo", TensorProto::FLOAT, {}, {0});
  b.typed_initializer("clip_hi", TensorProto::FLOAT, {}, {6});
  if (c.activation == "Relu") b.node("Relu", {"conv"}, {"act"}, "act");
  if (c.activation == "Clip") b.node("Clip", {"conv", "clip_lo", "clip_hi"}, {"act"}, "act");
  b.node("QuantizeLinear", {c.activation.empty() ? "conv" : "act", "ys", "yz"}, {"y_q"}, "q_y");
  b.output("y_q");
  if (c.conv_output_also_read) b.output("conv");
  return b;
}

// The `op` nodes computing an integer product (exact sums of the centred
// 8-bit values in f32 lanes, integer_products.h: their first operand is
// converted from int32) or, integer false, a float one (on dequantized values).
int count_products(const graph::Graph& g, const std::string& op, bool integer) {
  int n = 0;
  for (const graph::Node* node : g.nodes()) {
    if (node->op != op) continue;
    const graph::Node* producer = node->inputs[0]->producer;
    bool from_int32 = is_integer(node->inputs[0]->type.dtype) ||
                      (producer && producer->op == "Cast" && producer->inputs[0]->type.dtype == DType::kI32);
    n += from_int32 == integer;
  }
  return n;
}

int count_ops(const graph::Graph& g, const std::string& op) {
  int n = 0;
  for (const graph::Node* node : g.nodes()) n += node->op == op;
  return n;
}

graph::Graph import(ModelBuilder& b, bool fold) {
  onnx_frontend::ImportOptions options;
  options.fold_qdq = fold;
  return b.import(options);
}

Tensor random_u8(Dims shape) {
  std::mt19937 rng(11);
  Tensor t(DType::kU8, shape);
  std::vector<double> v = draw(rng, size_t(t.numel()), 0, 255);
  for (size_t i = 0; i < v.size(); ++i) t.set_f64(int64_t(i), v[i]);
  return t;
}

// The folded graph's u8 output, on the reference and compiled, is the float
// graph's (reference) to within one step.
void expect_within_one_step(ModelBuilder& b, const Tensor& x) {
  graph::Graph folded = import(b, true);
  graph::Graph as_written = import(b, false);
  std::vector<double> want = reference::Executor(as_written).run({x})[0].to_f64_vector();
  std::vector<double> ref = reference::Executor(folded).run({x})[0].to_f64_vector();
  driver::JitModel jit(driver::compile_graph(folded, {}));
  std::vector<double> compiled = jit.run({x})[0].to_f64_vector();
  ASSERT_EQ(ref.size(), want.size());
  int differ = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::abs(ref[i] - want[i]), 1) << i;
    EXPECT_EQ(compiled[i], ref[i]) << i;
    differ += ref[i] != want[i];
  }
  EXPECT_LT(differ, int(want.size()) / 10) << "more than rounding apart";
}

TEST(QdqFold, AConvBetweenDequantizeAndQuantizeIsAnIntegerConv) {
  ModelBuilder b = qdq_conv_model({});
  graph::Graph g = import(b, true);
  EXPECT_EQ(count_products(g, "Conv", true), 1);
  EXPECT_EQ(count_products(g, "Conv", false), 0);
  EXPECT_EQ(count_ops(g, "Relu"), 0);
  graph::Graph unfolded = import(b, false);
  EXPECT_EQ(count_products(unfolded, "Conv", false), 1);
  expect_within_one_step(b, random_u8({1, 3, 6, 6}));
}

TEST(QdqFold, PerTensorWeightsAndNoRelu) {
  ModelBuilder b = qdq_conv_model({.activation = "", .per_channel = false});
  EXPECT_EQ(count_products(import(b, true), "Conv", true), 1);
  expect_within_one_step(b, random_u8({1, 3, 6, 6}));
}

// Q(clip(y, 0, 6)) = clip(Q(y), Q(0), Q(6)): MobileNet's ReLU6 between a Conv and its QuantizeLinear.
TEST(QdqFold, AClipBeforeTheQuantizeClampsTheQuantizedValues) {
  ModelBuilder b = qdq_conv_model({.activation = "Clip"});
  graph::Graph g = import(b, true);
  EXPECT_EQ(count_products(g, "Conv", true), 1);
  EXPECT_EQ(count_products(g, "Conv", false), 0);
  expect_within_one_step(b, random_u8({1, 3, 6, 6}));
}

TEST(QdqFold, WhatIsOffThePatternKeepsItsFloatOps) {
  // A bias whose scale is not x_scale * w_scale cannot be added to the int32 sums as is.
  ModelBuilder other_bias_scale = qdq_conv_model({.bias_scale_factor = 2.0f});
  EXPECT_EQ(count_products(import(other_bias_scale, true), "Conv", false), 1);
  // The float conv output is a model output too.
  ModelBuilder read_twice = qdq_conv_model({.conv_output_also_read = true});
  EXPECT_EQ(count_products(import(read_twice, true), "Conv", false), 1);
}

// a_q (u8 [3, 8]) -> DQ -> MatMul with int8 [8, 5] per-column weights -> Q (i8).
TEST(QdqFold, AMatMulWithPerColumnWeightsIsAnIntegerMatMul) {
  std::mt19937 rng(3);
  ModelBuilder b(13);
  b.input("a_q", {3, 8}, TensorProto::UINT8);
  b.typed_initializer("as", TensorProto::FLOAT, {}, {0.1});
  b.typed_initializer("az", TensorProto::UINT8, {}, {128});
  b.typed_initializer("w_q", TensorProto::INT8, {8, 5}, draw(rng, 40, -127, 127));
  b.typed_initializer("ws", TensorProto::FLOAT, {5}, {0.01, 0.02, 0.03, 0.04, 0.05});
  b.typed_initializer("wz", TensorProto::INT8, {5}, {0, 0, 0, 0, 0});
  b.typed_initializer("ys", TensorProto::FLOAT, {}, {0.7});
  b.typed_initializer("yz", TensorProto::INT8, {}, {-3});
  b.node("DequantizeLinear", {"a_q", "as", "az"}, {"a"}, "dq_a");
  ModelBuilder::set_int(b.node("DequantizeLinear", {"w_q", "ws", "wz"}, {"w"}, "dq_w"), "axis", 1);
  b.node("MatMul", {"a", "w"}, {"mm"}, "mm");
  b.node("QuantizeLinear", {"mm", "ys", "yz"}, {"y_q"}, "q_y");
  b.output("y_q");
  graph::Graph g = import(b, true);
  EXPECT_EQ(count_products(g, "MatMul", true), 1);
  EXPECT_EQ(count_products(g, "MatMul", false), 0);
  expect_within_one_step(b, random_u8({3, 8}));
}

}  // namespace
}  // namespace tessel::onnx_test
