// Ops whose output extent the data decides (adapters_data_dependent.cpp,
// adapters_nms.cpp, runtime_extents.cpp): NonZero, Compress and
// NonMaxSuppression worked by hand, on the reference executor, compiled in
// process and through a model.so's C ABI, where the same library gives
// different shapes for different inputs; the extent carried through the ops
// that keep the data first, and refused, naming the node, by those that would
// mix in the padding.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "ir/graph/printer.h"
#include "src/driver/check_job.h"
#include "src/driver/compile_model.h"
#include "src/driver/inspect.h"
#include "src/passes/dead_code.h"
#include "src/reference/executor.h"
#include "tests/unit/cli_runner.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

constexpr int kI64 = onnx::TensorProto::INT64;
constexpr int kBool = onnx::TensorProto::BOOL;

Tensor floats(Dims shape, const std::vector<double>& values) {
  Tensor t(DType::kF32, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set_f64(int64_t(i), values[i]);
  return t;
}

Tensor bools(const std::vector<int64_t>& values) {
  Tensor t(DType::kBool, {int64_t(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.set_i64(int64_t(i), values[i]);
  return t;
}

// Output 0 on the reference executor and compiled in process: its shape and values.
void expect_both(ModelBuilder& b, const std::vector<Tensor>& inputs, const Dims& shape,
                 const std::vector<double>& want) {
  graph::Graph ref = b.import();
  Tensor r = reference::Executor(ref).run(inputs)[0];
  EXPECT_EQ(r.shape(), shape) << "reference";
  EXPECT_EQ(r.to_f64_vector(), want) << "reference";
  graph::Graph g = b.import();
  passes::eliminate_dead_code(g);  // as the pipeline does: a Shape leaves its input's nodes unread
  driver::JitModel jit(driver::compile_graph(g, {}));
  Tensor c = jit.run(inputs)[0];
  EXPECT_EQ(c.shape(), shape) << "LLVM";
  EXPECT_EQ(c.to_f64_vector(), want) << "LLVM";
}

ModelBuilder non_zero_model(Dims shape) {
  ModelBuilder b(13);
  std::vector<std::variant<int64_t, std::string>> dims(shape.begin(), shape.end());
  b.input("x", dims);
  b.node("NonZero", {"x"}, {"y"}, "nz");
  b.output("y");
  return b;
}

TEST(DataDependent, NonZeroGivesTheCoordinatesOfTheNonzeroEntriesNaNIncluded) {
  ModelBuilder b = non_zero_model({2, 3});
  expect_both(b, {floats({2, 3}, {0, 1, 0, std::nan(""), 0, -2})}, {2, 3}, {0, 1, 1, 1, 0, 2});
  expect_both(b, {floats({2, 3}, {0, 0, 0, 0, 0, 0})}, {2, 0}, {});
  expect_both(b, {floats({2, 3}, {1, 1, 1, 1, 1, 1})}, {2, 6}, {0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2});
}

TEST(DataDependent, NonZeroOfALongVectorKeepsItsOrderAcrossPrefixBlocks) {
  const int64_t n = 1000;  // more than one level of prefix blocks
  ModelBuilder b = non_zero_model({n});
  Tensor x(DType::kF32, {n});
  std::vector<double> want;
  for (int64_t i = 0; i < n; ++i) {
    bool kept = (i * 7919) % 13 < 4;
    x.set_f64(i, kept ? double(i) + 1 : 0);
    if (kept) want.push_back(double(i));
  }
  expect_both(b, {x}, {1, int64_t(want.size())}, want);
}

TEST(DataDependent, TheExtentIsCarriedThroughSqueezeGatherAndElementwiseOps) {
  ModelBuilder b(13);
  b.input("mask", {5}, kBool);
  b.input("data", {5, 2});
  b.int64_initializer("axes", {1}, {0});
  b.node("NonZero", {"mask"}, {"nz"}, "nz");
  b.node("Squeeze", {"nz", "axes"}, {"idx"});
  b.node("Gather", {"data", "idx"}, {"rows"});
  b.node("Add", {"rows", "rows"}, {"y"});
  b.output("y");
  Tensor data = floats({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_both(b, {bools({0, 1, 0, 1, 1}), data}, {3, 2}, {4, 6, 12, 14, 16, 18});
  expect_both(b, {bools({0, 0, 0, 0, 0}), data}, {0, 2}, {});
}

TEST(DataDependent, ShapeOfAValueOfDataDependentExtentIsComputedAtRunTime) {
  ModelBuilder b(13);
  b.input("x", {4});
  b.node("NonZero", {"x"}, {"nz"}, "nz");
  b.node("Shape", {"nz"}, {"y"});
  b.output("y");
  expect_both(b, {floats({4}, {1, 0, 3, 4})}, {2}, {1, 3});
}

TEST(DataDependent, CompressKeepsTheSlicesWhoseConditionHolds) {
  ModelBuilder along(11);
  along.input("x", {2, 4});
  along.input("c", {3}, kBool);
  ModelBuilder::set_int(along.node("Compress", {"x", "c"}, {"y"}, "pick"), "axis", 1);
  along.output("y");
  Tensor x = floats({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  expect_both(along, {x, bools({1, 0, 1})}, {2, 2}, {0, 2, 4, 6});
  ModelBuilder flat(11);
  flat.input("x", {2, 4});
  flat.input("c", {3}, kBool);
  flat.node("Compress", {"x", "c"}, {"y"}, "pick");
  flat.output("y");
  expect_both(flat, {x, bools({0, 1, 1})}, {2}, {1, 2});
}

// Unique's four outputs on the reference executor and compiled.
void expect_unique(int64_t sorted, const std::vector<std::vector<double>>& want) {
  ModelBuilder b(11);
  b.input("x", {6});
  onnx::NodeProto* n = b.node("Unique", {"x"}, {"y", "first", "inverse", "counts"}, "unique");
  ModelBuilder::set_int(n, "sorted", sorted);
  for (const char* out : {"y", "first", "inverse", "counts"}) b.output(out);
  Tensor x = floats({6}, {2, 1, 1, 3, 4, 3});
  graph::Graph ref = b.import();
  std::vector<Tensor> r = reference::Executor(ref).run({x});
  graph::Graph g = b.import();
  driver::JitModel jit(driver::compile_graph(g, {}));
  std::vector<Tensor> compiled = jit.run({x});
  ASSERT_EQ(r.size(), 4u);
  ASSERT_EQ(compiled.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(r[k].to_f64_vector(), want[k]) << "reference, output " << k;
    EXPECT_EQ(compiled[k].to_f64_vector(), want[k]) << "LLVM, output " << k;
  }
}

TEST(DataDependent, UniqueGivesTheValuesTheirFirstIndicesInverseAndCounts) {
  expect_unique(1, {{1, 2, 3, 4}, {1, 0, 3, 4}, {1, 0, 0, 2, 3, 2}, {2, 1, 2, 1}});
  expect_unique(0, {{2, 1, 3, 4}, {0, 1, 3, 4}, {0, 1, 1, 2, 3, 2}, {1, 2, 2, 1}});
}

// Boxes 0 and 1 overlap by IoU 0.8, box 2 lies apart; class 0 ranks 1 over 0,
// class 1 ranks 0 first and drops box 2 by its score.
ModelBuilder nms_model() {
  ModelBuilder b(11);
  b.input("boxes", {1, 3, 4});
  b.input("scores", {1, 2, 3});
  b.int64_initializer("most", {1}, {2});
  b.float_initializer("iou", {1}, {0.5f});
  b.float_initializer("least", {1}, {0.1f});
  b.node("NonMaxSuppression", {"boxes", "scores", "most", "iou", "least"}, {"y"}, "nms");
  b.output("y");
  return b;
}

TEST(DataDependent, NonMaxSuppressionKeepsEachClassesBestBoxesThatDoNotOverlap) {
  ModelBuilder b = nms_model();
  Tensor boxes = floats({1, 3, 4}, {0, 0, 1, 1, 0, 0, 1, 0.8, 5, 5, 6, 6});
  expect_both(b, {boxes, floats({1, 2, 3}, {0.6, 0.9, 0.7, 0.8, 0.3, 0.05})}, {3, 3},
              {0, 0, 1, 0, 0, 2, 0, 1, 0});
  // Boxes that do not overlap: at most two per class.
  Tensor apart = floats({1, 3, 4}, {0, 0, 1, 1, 2, 2, 3, 3, 5, 5, 6, 6});
  expect_both(b, {apart, floats({1, 2, 3}, {0.6, 0.9, 0.7, 0.2, 0.3, 0.4})}, {4, 3},
              {0, 0, 1, 0, 0, 2, 0, 1, 2, 0, 1, 1});
}

TEST(DataDependent, AModelLibraryHandsEachRunItsOwnShape) {
  cli_test::TempDir dir;
  ModelBuilder b = nms_model();
  graph::Graph g = b.import();
  std::filesystem::path so = dir.path() / "nms.so";
  driver::export_shared_library(driver::compile_graph(g, {}), so.string());
  std::unique_ptr<driver::CompiledModel> lib = driver::load_model_library(so.string());
  ASSERT_EQ(lib->outputs().size(), 1u);
  EXPECT_EQ(lib->outputs()[0].shape, (std::vector<int64_t>{4, 3}));  // the bound: 2 classes x 2
  Tensor boxes = floats({1, 3, 4}, {0, 0, 1, 1, 2, 2, 3, 3, 5, 5, 6, 6});
  EXPECT_EQ(lib->run({boxes, floats({1, 2, 3}, {0.6, 0.9, 0.7, 0.2, 0.3, 0.4})})[0].shape(), (Dims{4, 3}));
  EXPECT_EQ(lib->run({boxes, floats({1, 2, 3}, {0.6, 0.05, 0.05, 0.05, 0.05, 0.05})})[0].shape(),
            (Dims{1, 3}));
  EXPECT_EQ(lib->run({boxes, floats({1, 2, 3}, {0, 0, 0, 0, 0, 0})})[0].shape(), (Dims{0, 3}));
}

TEST(DataDependent, TheGraphNamesItsOutputsOfDataDependentExtent) {
  ModelBuilder b = non_zero_model({2, 3});
  graph::Graph g = b.import();
  ASSERT_EQ(g.data_dependent_dims.size(), 1u);
  EXPECT_EQ(g.num_user_outputs(), 1u);
  EXPECT_EQ(g.outputs().size(), 2u);
  EXPECT_NE(graph::print_graph(g).find("data-dependent %y axis 1 size %"), std::string::npos)
      << graph::print_graph(g);
  std::ostringstream inspected;
  driver::print_inspection(g, inspected);
  EXPECT_NE(inspected.str().find("y: i64[2, 6] (axis 1: at most 6, decided by the data)"), std::string::npos)
      << inspected.str();
}

TEST(DataDependent, AConstantInputDecidesTheExtentWhileImporting) {
  ModelBuilder b(13);
  b.float_initializer("x", {4}, {0, 2, 0, 3});
  b.node("NonZero", {"x"}, {"y"}, "nz");
  b.output("y");
  graph::Graph g = b.import();
  EXPECT_TRUE(g.data_dependent_dims.empty());
  EXPECT_EQ(g.outputs()[0]->type.str(), "i64[1, 2]");
}

TEST(DataDependent, OpsThatWouldReadThePaddingAreRefusedNamingTheNode) {
  auto after_non_zero = [](const std::string& op, std::vector<std::string> extra_inputs, int outputs = 1) {
    ModelBuilder b(13);
    b.input("x", {4});
    b.node("NonZero", {"x"}, {"nz"}, "nz");
    std::vector<std::string> ins{"nz"};
    ins.insert(ins.end(), extra_inputs.begin(), extra_inputs.end());
    std::vector<std::string> outs{"y", "y2"};
    outs.resize(size_t(outputs));
    b.node(op, ins, outs, "user");
    b.output("y");
    return b;
  };
  ModelBuilder sum = after_non_zero("ReduceSum", {});
  expect_import_error(
      sum, "cannot read 'nz', whose extent along axis 1 only a run decides (an output of NonZero 'nz')");
  ModelBuilder top = after_non_zero("TopK", {"k"}, 2);
  top.int64_initializer("k", {1}, {1});
  expect_import_error(top, "TopK has more than one result");
  ModelBuilder mixed = after_non_zero("Add", {"fixed"});
  mixed.int64_initializer("fixed", {1, 4}, {0, 0, 0, 0});
  expect_import_error(mixed,
                      "an input of fixed extent along the data-dependent axis cannot broadcast against it");
}

TEST(DataDependent, LoopBodiesTakeOnlyValuesOfFixedShape) {
  ModelBuilder b(13);
  b.input("x", {4});
  b.node("NonZero", {"x"}, {"nz"}, "nz");
  b.int64_initializer("trips", {}, {2});
  b.typed_initializer("go", kBool, {}, {1});
  onnx::NodeProto* loop = b.node("Loop", {"trips", "go"}, {"y"}, "loop");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = a->mutable_g();
  body->set_name("body");
  ModelBuilder::value_info(body->add_input(), "i", {}, kI64);
  ModelBuilder::value_info(body->add_input(), "c", {}, kBool);
  auto* id = body->add_node();
  id->set_op_type("Identity");
  id->add_input("c");
  id->add_output("c_out");
  auto* use = body->add_node();
  use->set_op_type("Identity");
  use->add_input("nz");
  use->add_output("seen");
  body->add_output()->set_name("c_out");
  body->add_output()->set_name("seen");
  b.output("y");
  expect_import_error(b, "a subgraph reads 'nz', whose extent only a run decides");
}

}  // namespace
}  // namespace tessel::onnx_test
