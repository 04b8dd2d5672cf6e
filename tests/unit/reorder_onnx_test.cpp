// CenterCropPad, ReverseSequence, MaxUnpool and TensorScatter as data-movement
// compositions (adapters_reorder.cpp): hand-worked results on the reference
// and compiled through LLVM, and run-time positions outside the tensor
// stopped with an error naming the node instead of read or written anyway.
#include <gtest/gtest.h>

#include "src/driver/compile_model.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

Tensor i64(const std::vector<int64_t>& values, Dims shape) {
  return Tensor::from_i64(values, std::move(shape));
}

// Both executors' outputs, the reference's first.
std::vector<std::vector<Tensor>> run_both(ModelBuilder& b, const std::vector<Tensor>& inputs) {
  graph::Graph g = b.import();
  graph::Graph fresh = b.import();
  return {reference::Executor(fresh).run(inputs), driver::JitModel(driver::compile_graph(g, {})).run(inputs)};
}

// Both executors stop with an error naming the node and "out of range".
void expect_out_of_range(ModelBuilder& b, const std::vector<Tensor>& inputs, const std::string& node) {
  graph::Graph g = b.import();
  graph::Graph fresh = b.import();
  driver::JitModel jit(driver::compile_graph(g, {}));
  for (int compiled = 0; compiled < 2; ++compiled) {
    try {
      compiled ? jit.run(inputs) : reference::Executor(fresh).run(inputs);
      ADD_FAILURE() << (compiled ? "compiled" : "reference") << " ran";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(node), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    }
  }
}

// Rows 0..4 cropped to the middle 3 (1..3), columns 0..1 padded to 5 (one
// zero before, two after).
TEST(ReorderOps, CenterCropPadCropsAndPadsAroundTheMiddle) {
  ModelBuilder b(18);
  b.input("x", {5, 2});
  b.int64_initializer("shape", {2}, {3, 5});
  b.node("CenterCropPad", {"x", "shape"}, {"y"}, "ccp");
  b.output("y");
  std::vector<double> want = {0, 2, 3, 0, 0, 0, 4, 5, 0, 0, 0, 6, 7, 0, 0};
  for (const auto& out : run_both(b, {f32({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {5, 2})})) {
    EXPECT_EQ(out[0].shape(), (Dims{3, 5}));
    EXPECT_EQ(out[0].to_f64_vector(), want);
  }
}

// Batch along axis 0, time along 1: each row's first lens[b] entries reversed.
TEST(ReorderOps, ReverseSequenceReversesEachBatchsFirstSteps) {
  ModelBuilder b(10);
  b.input("x", {2, 4});
  b.input("lens", {2}, onnx::TensorProto::INT64);
  onnx::NodeProto* n = b.node("ReverseSequence", {"x", "lens"}, {"y"}, "rev");
  ModelBuilder::set_int(n, "batch_axis", 0);
  ModelBuilder::set_int(n, "time_axis", 1);
  b.output("y");
  std::vector<Tensor> inputs = {f32({0, 1, 2, 3, 4, 5, 6, 7}, {2, 4}), i64({3, 1}, {2})};
  for (const auto& out : run_both(b, inputs))
    EXPECT_EQ(out[0].to_f64_vector(), (std::vector<double>{2, 1, 0, 3, 4, 5, 6, 7}));
  inputs[1] = i64({5, 1}, {2});  // longer than the 4 steps
  expect_out_of_range(b, inputs, "rev");
}

// 2x2 max pooling's values back at their indices of the 4x4 input, the rest
// zero; an output_shape of 5x5 pads a row and a column at the end.
TEST(ReorderOps, MaxUnpoolPutsEachValueAtItsIndex) {
  for (bool padded : {false, true}) {
    SCOPED_TRACE(padded ? "output_shape 5x5" : "unpooled 4x4");
    ModelBuilder b(22);
    b.input("x", {1, 1, 2, 2});
    b.input("i", {1, 1, 2, 2}, onnx::TensorProto::INT64);
    if (padded) b.int64_initializer("shape", {4}, {1, 1, 5, 5});
    onnx::NodeProto* n = b.node("MaxUnpool", {"x", "i", padded ? "shape" : ""}, {"y"}, "unpool");
    ModelBuilder::set_ints(n, "kernel_shape", {2, 2});
    ModelBuilder::set_ints(n, "strides", {2, 2});
    b.output("y");
    std::vector<Tensor> inputs = {f32({1, 2, 3, 4}, {1, 1, 2, 2}), i64({5, 7, 8, 15}, {1, 1, 2, 2})};
    std::vector<double> want(padded ? 25 : 16, 0);
    int64_t w = padded ? 5 : 4;
    want[size_t(1 * w + 1)] = 1, want[size_t(1 * w + 3)] = 2, want[size_t(2 * w + 0)] = 3,
                        want[size_t(3 * w + 3)] = 4;
    for (const auto& out : run_both(b, inputs)) EXPECT_EQ(out[0].to_f64_vector(), want);
    if (!padded) {
      inputs[1] = i64({5, 7, 8, 16}, {1, 1, 2, 2});
      expect_out_of_range(b, inputs, "unpool");
    }
  }
}

// Two new steps written at each batch's position of a cache of 4: linear
// stops at the end, circular wraps to the start.
TEST(ReorderOps, TensorScatterWritesEachBatchAtItsPosition) {
  for (const char* mode : {"linear", "circular"}) {
    SCOPED_TRACE(mode);
    ModelBuilder b(24);
    b.input("cache", {2, 4, 1});
    b.input("update", {2, 2, 1});
    b.input("at", {2}, onnx::TensorProto::INT64);
    onnx::NodeProto* n = b.node("TensorScatter", {"cache", "update", "at"}, {"y"}, "kv");
    ModelBuilder::set_string(n, "mode", mode);
    b.output("y");
    Tensor cache = f32({0, 0, 0, 0, 0, 0, 0, 0}, {2, 4, 1}), update = f32({1, 2, 3, 4}, {2, 2, 1});
    std::vector<Tensor> inputs = {cache, update, i64({1, 2}, {2})};
    for (const auto& out : run_both(b, inputs))
      EXPECT_EQ(out[0].to_f64_vector(), (std::vector<double>{0, 1, 2, 0, 0, 0, 3, 4}));
    inputs[2] = i64({0, 3}, {2});
    if (std::string(mode) == "circular") {
      for (const auto& out : run_both(b, inputs))
        EXPECT_EQ(out[0].to_f64_vector(), (std::vector<double>{1, 2, 0, 0, 4, 0, 0, 3}));
    } else {
      expect_out_of_range(b, inputs, "kv");
    }
  }
}

// A stride or dilation of 0 would divide by zero while sizing the output.
TEST(ReorderOps, ZeroStridesAndDilationsAreRefusedByName) {
  ModelBuilder col(18);
  col.input("x", {1, 4, 4});
  col.int64_initializer("image", {2}, {3, 3});
  col.int64_initializer("block", {2}, {2, 2});
  onnx::NodeProto* n = col.node("Col2Im", {"x", "image", "block"}, {"y"}, "col");
  ModelBuilder::set_ints(n, "strides", {0, 1});
  col.output("y");
  ModelBuilder deform(19);
  deform.input("x", {1, 1, 4, 4});
  deform.input("offset", {1, 8, 3, 3});
  deform.float_initializer("w", {1, 1, 2, 2}, {1, 1, 1, 1});
  n = deform.node("DeformConv", {"x", "w", "offset"}, {"y"}, "dcn");
  ModelBuilder::set_ints(n, "dilations", {1, 0});
  deform.output("y");
  for (ModelBuilder* b : {&col, &deform}) expect_import_error(*b, "must be positive");
}

}  // namespace
}  // namespace tessel::onnx_test
