// The quantization ops imported as graph ops (adapters_quantize.cpp), on what
// ONNX's cases leave thin: rounding halves to even and saturation at both
// ends, a per-row zero point of MatMulInteger's A, integer sums too long for
// one f32 sum (integer_products.h), a clamped float cast to int8. Each runs
// on the reference executor and compiled through LLVM, against values worked
// out by hand.
#include <gtest/gtest.h>

#include <limits>

#include "src/driver/compile_model.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

void expect_both(graph::Graph& g, const std::vector<Tensor>& inputs, const std::vector<double>& want) {
  EXPECT_EQ(reference::Executor(g).run(inputs)[0].to_f64_vector(), want) << "reference";
  driver::JitModel jit(driver::compile_graph(g, {}));
  EXPECT_EQ(jit.run(inputs)[0].to_f64_vector(), want) << "LLVM";
}

Tensor values(DType t, Dims shape, const std::vector<double>& v) {
  Tensor x(t, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) x.set_f64(int64_t(i), v[i]);
  return x;
}

TEST(QuantizeOps, QuantizeRoundsHalvesToEvenAndSaturates) {
  ModelBuilder b(13);
  b.input("x", {7});
  b.typed_initializer("scale", onnx::TensorProto::FLOAT, {}, {0.5});
  b.typed_initializer("zero", onnx::TensorProto::INT8, {}, {1});
  b.node("QuantizeLinear", {"x", "scale", "zero"}, {"y"}, "q");
  b.output("y");
  graph::Graph g = b.import();
  // x / 0.5 = -2000, -1, -0.5 (rounds to -0), 0.5 (to 0), 3, 5, 2000; then + 1 and clipped to int8.
  expect_both(g, {values(DType::kF32, {7}, {-1000, -0.5, -0.25, 0.25, 1.5, 2.5, 1000})},
              {-128, 0, 1, 1, 4, 6, 127});
}

TEST(QuantizeOps, DequantizePerAxis) {
  ModelBuilder b(13);
  b.input("x", {2, 3}, onnx::TensorProto::UINT8);
  b.typed_initializer("scale", onnx::TensorProto::FLOAT, {3}, {1, 0.5, 2});
  b.typed_initializer("zero", onnx::TensorProto::UINT8, {3}, {0, 10, 255});
  b.node("DequantizeLinear", {"x", "scale", "zero"}, {"y"}, "dq");
  b.output("y");
  graph::Graph g = b.import();
  expect_both(g, {values(DType::kU8, {2, 3}, {0, 10, 255, 7, 20, 0})}, {0, 0, 0, 7, 5, -510});
}

TEST(QuantizeOps, MatMulIntegerWithAPerRowZeroPoint) {
  ModelBuilder b(13);
  b.input("a", {2, 2}, onnx::TensorProto::UINT8);
  b.input("b", {2, 2}, onnx::TensorProto::UINT8);
  b.typed_initializer("a_zero", onnx::TensorProto::UINT8, {2}, {1, 200});
  b.node("MatMulInteger", {"a", "b", "a_zero"}, {"y"}, "mm");
  b.output("y");
  graph::Graph g = b.import();
  // A - zero = [[0, 2], [55, -200]]; B = [[1, 2], [3, 250]].
  expect_both(g, {values(DType::kU8, {2, 2}, {1, 3, 255, 0}), values(DType::kU8, {2, 2}, {1, 2, 3, 250})},
              {6, 500, 55 - 600, 110 - 50000});
}

// Sums of 8-bit products past 2^24, where one f32 sum would round: the
// integer products split their reductions into exact chunks (the dtype's
// bound for an input weight, each output's sum of |w| for a constant one).
struct LongSum {
  std::vector<double> x, w;
  int64_t outputs, length;
  double expected(int64_t o) const {
    double sum = 0;  // exact: far below 2^53
    for (int64_t i = 0; i < length; ++i) sum += x[size_t(i)] * w[size_t(o * length + i)];
    return sum;
  }
};

LongSum long_sum(int64_t outputs, int64_t length) {
  LongSum s{{}, {}, outputs, length};
  for (int64_t i = 0; i < length; ++i) s.x.push_back(255 - i % 3);
  for (int64_t i = 0; i < outputs * length; ++i) s.w.push_back(-127 + i % 5);
  return s;
}

TEST(QuantizeOps, ConvIntegerSumsPast2To24StayExact) {
  LongSum s = long_sum(2, 64 * 9);  // 576 products near 255 x -127: about -1.8e7
  ASSERT_GT(std::abs(s.expected(0)), 16777216.0);
  for (bool constant_weight : {false, true}) {
    SCOPED_TRACE(constant_weight ? "constant weight" : "weight as an input");
    ModelBuilder b(13);
    b.input("x", {1, 64, 3, 3}, onnx::TensorProto::UINT8);
    if (constant_weight)
      b.typed_initializer("w", onnx::TensorProto::INT8, {2, 64, 3, 3}, s.w);
    else
      b.input("w", {2, 64, 3, 3}, onnx::TensorProto::INT8);
    b.node("ConvInteger", {"x", "w"}, {"y"}, "conv");
    b.output("y");
    graph::Graph g = b.import();
    std::vector<Tensor> inputs = {values(DType::kU8, {1, 64, 3, 3}, s.x)};
    if (!constant_weight) inputs.push_back(values(DType::kI8, {2, 64, 3, 3}, s.w));
    expect_both(g, inputs, {s.expected(0), s.expected(1)});
  }
}

// Two groups of 576 products each: too long for one f32 sum, and a chunk
// cannot cross a group: the int32 convolution.
TEST(QuantizeOps, AGroupedConvIntegerTooLongForF32SumsInInt32) {
  LongSum s = long_sum(2, 64 * 9);
  std::vector<double> x = s.x;
  for (double v : s.x) x.push_back(255 - v);  // the second group's inputs
  ModelBuilder b(13);
  b.input("x", {1, 128, 3, 3}, onnx::TensorProto::UINT8);
  b.input("w", {2, 64, 3, 3}, onnx::TensorProto::INT8);
  ModelBuilder::set_int(b.node("ConvInteger", {"x", "w"}, {"y"}, "conv"), "group", 2);
  b.output("y");
  graph::Graph g = b.import();
  int int32_convs = 0;
  for (const graph::Node* n : g.nodes())
    int32_convs += n->op == "Conv" && n->inputs[0]->type.dtype == DType::kI32;
  EXPECT_EQ(int32_convs, 1);
  double second = 0;
  for (int64_t i = 0; i < 576; ++i) second += x[size_t(576 + i)] * s.w[size_t(576 + i)];
  expect_both(g, {values(DType::kU8, {1, 128, 3, 3}, x), values(DType::kI8, {2, 64, 3, 3}, s.w)},
              {s.expected(0), second});
}

TEST(QuantizeOps, MatMulIntegerSumsPast2To24StayExact) {
  LongSum s = long_sum(2, 1200);
  ModelBuilder b(13);
  b.input("a", {1, 1200}, onnx::TensorProto::UINT8);
  b.input("b", {1200, 2}, onnx::TensorProto::INT8);
  b.node("MatMulInteger", {"a", "b"}, {"y"}, "mm");
  b.output("y");
  graph::Graph g = b.import();
  std::vector<double> b_values(2400);  // [K, N]: column o is s.w's row o
  for (int64_t k = 0; k < 1200; ++k)
    for (int64_t o = 0; o < 2; ++o) b_values[size_t(k * 2 + o)] = s.w[size_t(o * 1200 + k)];
  expect_both(g, {values(DType::kU8, {1, 1200}, s.x), values(DType::kI8, {1200, 2}, b_values)},
              {s.expected(0), s.expected(1)});
}

// A float clamped into int32's range converts through int32 in the compiled
// kernels (lower/ops/elementwise_support.cpp): the same values as through
// int64, wrapped to int8, and 0 for a NaN that passes the clamp.
TEST(QuantizeOps, AClampedFloatCastToInt8WrapsAndMapsNaNToZero) {
  ModelBuilder b(13);
  b.input("x", {6});
  b.typed_initializer("lo", onnx::TensorProto::FLOAT, {}, {-1000});
  b.typed_initializer("hi", onnx::TensorProto::FLOAT, {}, {1000});
  b.node("Clip", {"x", "lo", "hi"}, {"c"}, "clip");
  ModelBuilder::set_int(b.node("Cast", {"c"}, {"y"}, "cast"), "to", onnx::TensorProto::INT8);
  b.output("y");
  graph::Graph g = b.import();
  double nan = std::numeric_limits<double>::quiet_NaN();
  // 300 wraps to 44, -1000 to 24, 1000 (from 1e30) to -24; -0.5 truncates to 0.
  expect_both(g, {values(DType::kF32, {6}, {nan, 300.7, -2000, 127.9, -0.5, 1e30})},
              {0, 44, 24, 127, 0, -24});
}

}  // namespace
}  // namespace tessel::onnx_test
