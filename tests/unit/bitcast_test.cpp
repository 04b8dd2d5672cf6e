// BitCast (ONNX's BitCast-26): the graph op, the tensor IR's bitcast and its
// evaluation by the reference, the interpreter and LLVM, on values whose bits
// are known by hand (1.0f is 0x3f800000, -1 as u8 is 255); what cannot be
// reinterpreted refused by name.
#include <gtest/gtest.h>

#include "ir/tensor/printer.h"
#include "src/driver/compile_model.h"
#include "src/driver/tir_runner.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

ModelBuilder bitcast_model(int from, int to, std::vector<std::variant<int64_t, std::string>> shape) {
  ModelBuilder b(26);
  b.input("x", shape, from);
  ModelBuilder::set_int(b.node("BitCast", {"x"}, {"y"}, "bits"), "to", to);
  b.output("y");
  return b;
}

// y on the reference executor, the tensor IR interpreter and LLVM, which must agree.
std::vector<double> run_everywhere(ModelBuilder& b, const Tensor& x) {
  graph::Graph ref = b.import();
  std::vector<double> want = reference::Executor(ref).run({x})[0].to_f64_vector();
  graph::Graph tir = b.import();
  EXPECT_EQ(driver::TirExecutor(tir, passes::FusionPolicy::kDefault).run({x})[0].to_f64_vector(), want);
  graph::Graph g = b.import();
  EXPECT_EQ(driver::JitModel(driver::compile_graph(g, {})).run({x})[0].to_f64_vector(), want);
  return want;
}

TEST(BitCast, ReadsTheSameBytesAsAnotherType) {
  Tensor floats(DType::kF32, {3});
  for (int i = 0; i < 3; ++i) floats.set_f64(i, std::vector<double>{1.0, -2.0, 0.0}[size_t(i)]);
  ModelBuilder f2i = bitcast_model(onnx::TensorProto::FLOAT, onnx::TensorProto::INT32, {3});
  EXPECT_EQ(run_everywhere(f2i, floats), (std::vector<double>{0x3f800000, -0x40000000, 0}));

  Tensor bytes(DType::kI8, {2});
  bytes.set_i64(0, -1);
  bytes.set_i64(1, 5);
  ModelBuilder i2u = bitcast_model(onnx::TensorProto::INT8, onnx::TensorProto::UINT8, {2});
  EXPECT_EQ(run_everywhere(i2u, bytes), (std::vector<double>{255, 5}));

  Tensor flags(DType::kBool, {2});
  flags.set_i64(0, 1);
  ModelBuilder b2u = bitcast_model(onnx::TensorProto::BOOL, onnx::TensorProto::UINT8, {2});
  EXPECT_EQ(run_everywhere(b2u, flags), (std::vector<double>{1, 0}));

  Tensor wide = Tensor::from_i64({0x3ff0000000000000, 0});  // 1.0 as f64
  ModelBuilder i2d = bitcast_model(onnx::TensorProto::INT64, onnx::TensorProto::DOUBLE, {2});
  EXPECT_EQ(run_everywhere(i2d, wide), (std::vector<double>{1.0, 0.0}));
}

TEST(BitCast, PrintsItsTargetType) {
  tir::Expr x = tir::var("x", DType::kI32);
  EXPECT_EQ(tir::to_string(tir::bitcast(DType::kF32, x)), "bitcast<f32>(x)");
}

TEST(BitCast, WhatCannotBeReinterpretedIsRefusedByName) {
  ModelBuilder sizes = bitcast_model(onnx::TensorProto::FLOAT, onnx::TensorProto::INT64, {2});
  expect_import_error(sizes, "node 'bits' (BitCast): cannot read f32 bits as i64");
  ModelBuilder half = bitcast_model(onnx::TensorProto::FLOAT16, onnx::TensorProto::INT16, {2});
  expect_import_error(half, "cannot read f16 bits as i16");
  ModelBuilder to_bool = bitcast_model(onnx::TensorProto::UINT8, onnx::TensorProto::BOOL, {2});
  expect_import_error(to_bool, "cannot read u8 bits as bool");
}

}  // namespace
}  // namespace tessel::onnx_test
