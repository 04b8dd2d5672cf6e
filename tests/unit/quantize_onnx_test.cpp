// The quantization ops imported as graph ops (adapters_quantize.cpp), on what
// ONNX's cases leave thin: rounding halves to even and saturation at both
// ends, a per-row zero point of MatMulInteger's A. Each runs on the reference
// executor and compiled through LLVM, against values worked out by hand.
#include <gtest/gtest.h>

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

void add_initializer(ModelBuilder& b, const std::string& name, int type, const Dims& dims,
                     const std::vector<double>& v) {
  auto* t = b.g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  for (double x : v) {
    if (type == onnx::TensorProto::FLOAT)
      t->add_float_data(float(x));
    else
      t->add_int32_data(int32_t(x));
  }
}

TEST(QuantizeOps, QuantizeRoundsHalvesToEvenAndSaturates) {
  ModelBuilder b(13);
  b.input("x", {7});
  add_initializer(b, "scale", onnx::TensorProto::FLOAT, {}, {0.5});
  add_initializer(b, "zero", onnx::TensorProto::INT8, {}, {1});
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
  add_initializer(b, "scale", onnx::TensorProto::FLOAT, {3}, {1, 0.5, 2});
  add_initializer(b, "zero", onnx::TensorProto::UINT8, {3}, {0, 10, 255});
  b.node("DequantizeLinear", {"x", "scale", "zero"}, {"y"}, "dq");
  b.output("y");
  graph::Graph g = b.import();
  expect_both(g, {values(DType::kU8, {2, 3}, {0, 10, 255, 7, 20, 0})}, {0, 0, 0, 7, 5, -510});
}

TEST(QuantizeOps, MatMulIntegerWithAPerRowZeroPoint) {
  ModelBuilder b(13);
  b.input("a", {2, 2}, onnx::TensorProto::UINT8);
  b.input("b", {2, 2}, onnx::TensorProto::UINT8);
  add_initializer(b, "a_zero", onnx::TensorProto::UINT8, {2}, {1, 200});
  b.node("MatMulInteger", {"a", "b", "a_zero"}, {"y"}, "mm");
  b.output("y");
  graph::Graph g = b.import();
  // A - zero = [[0, 2], [55, -200]]; B = [[1, 2], [3, 250]].
  expect_both(g, {values(DType::kU8, {2, 2}, {1, 3, 255, 0}), values(DType::kU8, {2, 2}, {1, 2, 3, 250})},
              {6, 500, 55 - 600, 110 - 50000});
}

}  // namespace
}  // namespace tessel::onnx_test
