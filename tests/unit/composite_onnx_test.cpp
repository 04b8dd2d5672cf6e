// The ops imported as compositions of graph ops (adapters_composite.cpp,
// adapters_transformer.cpp, adapters_attention.cpp, adapters_resize.cpp), on
// what ONNX's own cases leave out: Resize with constant scales, as exported
// models have them (the cases feed them as inputs), and specialised on a known
// input value; OneHot with a constant depth (its cases feed the depth as an
// input), negative and out-of-range indices; EyeLike off the diagonal; the
// refusals, each naming the node. What runs does so on the reference executor
// and compiled through LLVM, against values worked out by hand.
#include <gtest/gtest.h>

#include <limits>

#include "src/driver/compile_model.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

// The graph's single output on the reference executor, then compiled (which rewrites g).
void expect_both(graph::Graph& g, const std::vector<Tensor>& inputs, const std::vector<double>& want) {
  Tensor ref = reference::Executor(g).run(inputs)[0];
  EXPECT_EQ(ref.to_f64_vector(), want) << "reference";
  driver::JitModel jit(driver::compile_graph(g, {}));
  EXPECT_EQ(jit.run(inputs)[0].to_f64_vector(), want) << "LLVM";
}

TEST(CompositeOps, OneHotWithAConstantDepth) {
  for (int64_t axis : {-1, 0}) {
    ModelBuilder b(11);
    b.input("indices", {4}, onnx::TensorProto::INT64);
    b.int64_initializer("depth", {}, {3});
    b.input("values", {2});
    ModelBuilder::set_int(b.node("OneHot", {"indices", "depth", "values"}, {"y"}, "hot"), "axis", axis);
    b.output("y");
    graph::Graph g = b.import();
    Tensor indices = Tensor::from_i64({2, -1, 3, -4}, {4});  // -1 is 2; 3 and -4 are outside [-3, 3)
    Tensor values(DType::kF32, {2});
    values.set_f64(0, -5);
    values.set_f64(1, 7);
    std::vector<double> rows = {-5, -5, 7, -5, -5, 7, -5, -5, -5, -5, -5, -5};  // [4, 3]
    std::vector<double> want = rows;
    if (axis == 0)  // [3, 4]: the transpose
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t d = 0; d < 3; ++d) want[size_t(d * 4 + i)] = rows[size_t(i * 3 + d)];
    SCOPED_TRACE(axis);
    expect_both(g, {indices, values}, want);
  }
}

TEST(CompositeOps, OneHotRefusesADepthKnownOnlyAtRunTime) {
  ModelBuilder b(11);
  b.input("indices", {4}, onnx::TensorProto::INT64);
  b.input("depth", {}, onnx::TensorProto::INT64);
  b.input("values", {2});
  b.node("OneHot", {"indices", "depth", "values"}, {"y"}, "hot");
  b.output("y");
  try {
    b.import();
    ADD_FAILURE() << "imported";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'hot' (OneHot): depth must be a constant scalar"),
              std::string::npos)
        << e.what();
  }
}

TEST(CompositeOps, EyeLikeAboveAndBelowTheDiagonal) {
  for (int64_t k : {1, -2}) {
    ModelBuilder b(17);
    b.input("x", {3, 4});
    ModelBuilder::set_int(b.node("EyeLike", {"x"}, {"y"}, "eye"), "k", k);
    b.output("y");
    graph::Graph g = b.import();
    std::vector<double> want(12, 0.0);
    for (int64_t r = 0; r < 3; ++r)
      if (r + k >= 0 && r + k < 4) want[size_t(r * 4 + r + k)] = 1;
    SCOPED_TRACE(k);
    expect_both(g, {Tensor(DType::kF32, {3, 4})}, want);
  }
}

TEST(CompositeOps, HardmaxPicksTheFirstMaximum) {
  ModelBuilder b(13);
  b.input("x", {2, 4});
  b.node("Hardmax", {"x"}, {"y"}, "hard");
  b.output("y");
  Tensor x(DType::kF32, {2, 4});
  for (int64_t i = 0; i < 8; ++i) x.set_f64(i, std::vector<double>{1, 3, 3, 0, -2, -1, -7, -1}[size_t(i)]);
  graph::Graph g = b.import();
  expect_both(g, {x}, {0, 1, 0, 0, 0, 1, 0, 0});
}

TEST(CompositeOps, LpPoolRefusesCeilMode) {
  ModelBuilder b(18);
  b.input("x", {1, 1, 5, 5});
  onnx::NodeProto* n = b.node("LpPool", {"x"}, {"y"}, "lp");
  ModelBuilder::set_int(n, "ceil_mode", 1);
  auto* k = n->add_attribute();
  k->set_name("kernel_shape");
  k->set_type(onnx::AttributeProto::INTS);
  k->add_ints(2);
  k->add_ints(2);
  b.output("y");
  expect_import_error(b, "node 'lp' (LpPool): LpPool with ceil_mode=1 is not supported");
}

TEST(CompositeOps, AttentionRefusesWhatItCannotShape) {
  {  // a 3-D Q says nothing of its heads without q_num_heads
    ModelBuilder b(23);
    b.input("q", {1, 4, 8});
    b.input("k", {1, 4, 8});
    b.input("v", {1, 4, 8});
    b.node("Attention", {"q", "k", "v"}, {"y"}, "att");
    b.output("y");
    expect_import_error(b, "node 'att' (Attention): a 3-D Q needs the attribute q_num_heads");
  }
  {  // 3 query heads cannot share 2 key/value heads
    ModelBuilder b(23);
    b.input("q", {1, 3, 4, 8});
    b.input("k", {1, 2, 4, 8});
    b.input("v", {1, 2, 4, 8});
    b.node("Attention", {"q", "k", "v"}, {"y"}, "att");
    b.output("y");
    expect_import_error(b, "the 3 query heads are not a multiple of the 2 key/value heads");
  }
  {  // a mask over more keys than there are
    ModelBuilder b(23);
    b.input("q", {1, 2, 4, 8});
    b.input("k", {1, 2, 4, 8});
    b.input("v", {1, 2, 4, 8});
    b.input("mask", {4, 6});
    b.node("Attention", {"q", "k", "v", "mask"}, {"y"}, "att");
    b.output("y");
    expect_import_error(b, "attn_mask covers 6 keys, more than the 4 there are");
  }
}

TEST(CompositeOps, RotaryEmbeddingRefusesAnOddRotaryDimension) {
  ModelBuilder b(23);
  b.input("x", {1, 2, 3, 8});
  b.input("cos", {1, 3, 4});
  b.input("sin", {1, 3, 4});
  ModelBuilder::set_int(b.node("RotaryEmbedding", {"x", "cos", "sin"}, {"y"}, "rope"), "rotary_embedding_dim",
                        3);
  b.output("y");
  expect_import_error(b, "node 'rope' (RotaryEmbedding): rotary_embedding_dim 3 must be even");
}

onnx::TensorProto* float_initializer(ModelBuilder& b, const std::string& name,
                                     const std::vector<float>& values) {
  auto* t = b.g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(int64_t(values.size()));
  for (float v : values) t->add_float_data(v);
  return t;
}

void set_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// As PyTorch exports nn.Upsample: constant scales, the model's only input the image.
TEST(CompositeOps, ResizeWithConstantScales) {
  Tensor x(DType::kF32, {1, 1, 2, 2});
  for (int64_t i = 0; i < 4; ++i) x.set_f64(i, double(i + 1));  // [[1, 2], [3, 4]]
  {
    ModelBuilder b(13);
    b.input("x", {1, 1, 2, 2});
    float_initializer(b, "scales", {1, 1, 2, 2});
    set_string(b.node("Resize", {"x", "", "scales"}, {"y"}, "up"), "mode", "nearest");
    b.output("y");
    graph::Graph g = b.import();
    expect_both(g, {x}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  }
  {  // linear, align_corners: 2 -> 3 puts the midpoints between the corners
    ModelBuilder b(13);
    b.input("x", {1, 1, 2, 2});
    float_initializer(b, "scales", {1, 1, 1.5, 1.5});
    onnx::NodeProto* n = b.node("Resize", {"x", "", "scales"}, {"y"}, "up");
    set_string(n, "mode", "linear");
    set_string(n, "coordinate_transformation_mode", "align_corners");
    b.output("y");
    graph::Graph g = b.import();
    expect_both(g, {x}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  }
}

TEST(CompositeOps, ResizeRefusesScalesKnownOnlyAtRunTime) {
  ModelBuilder b(13);
  b.input("x", {1, 1, 2, 2});
  b.input("scales", {4});
  b.node("Resize", {"x", "", "scales"}, {"y"}, "up");
  b.output("y");
  expect_import_error(b, "node 'up' (Resize): scales (input 2) must be a constant");
}

TEST(CompositeOps, ResizeSpecialisesOnAKnownInputValue) {
  ModelBuilder b(13);
  b.input("x", {1, 1, 2, 2});
  b.input("sizes", {4}, onnx::TensorProto::INT64);
  b.node("Resize", {"x", "", "", "sizes"}, {"y"}, "up");
  b.output("y");
  onnx_frontend::ImportOptions options;
  options.input_values = {Tensor(DType::kF32, {1, 1, 2, 2}), Tensor::from_i64({1, 1, 1, 3}, {4})};
  graph::Graph g = b.import(options);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0]->type.str(), "f32[1, 1, 1, 3]");
  EXPECT_EQ(g.inputs().size(), 2u) << "the graph still declares the input";
}

// Infinities stay where they are (a product with a 0/1 matrix would make NaN of them).
TEST(CompositeOps, CumSumAndCumProdWithInfinities) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const char* op : {"CumSum", "CumProd"}) {
    for (int64_t reverse : {0, 1}) {
      ModelBuilder b(14);
      b.input("x", {2, 3});
      b.int64_initializer("axis", {}, {1});
      ModelBuilder::set_int(b.node(op, {"x", "axis"}, {"y"}, "cum"), "reverse", reverse);
      b.output("y");
      graph::Graph g = b.import();
      Tensor x(DType::kF32, {2, 3});
      std::vector<double> v = {1, inf, 2, 3, 2, -1};
      for (int64_t i = 0; i < 6; ++i) x.set_f64(i, v[size_t(i)]);
      bool sum = std::string(op) == "CumSum";
      std::vector<double> want = reverse ? (sum ? std::vector<double>{inf, inf, 2, 4, 1, -1}
                                                : std::vector<double>{inf, inf, 2, -6, -2, -1})
                                         : (sum ? std::vector<double>{1, inf, inf, 3, 5, 4}
                                                : std::vector<double>{1, inf, inf, 3, 6, -6});
      SCOPED_TRACE(std::string(op) + (reverse ? " reverse" : ""));
      expect_both(g, {x}, want);
    }
  }
}

// Ties keep their order by position; NaN counts as above every number.
TEST(CompositeOps, TopKWithTiesAndNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t largest : {1, 0}) {
    ModelBuilder b(11);
    b.input("x", {6});
    b.int64_initializer("k", {1}, {4});
    ModelBuilder::set_int(b.node("TopK", {"x", "k"}, {"values", "indices"}, "top"), "largest", largest);
    b.output("values");
    b.output("indices");
    graph::Graph g = b.import();
    Tensor x(DType::kF32, {6});
    std::vector<double> v = {2, nan, 5, 2, -1, 5};
    for (int64_t i = 0; i < 6; ++i) x.set_f64(i, v[size_t(i)]);
    std::vector<double> want = largest ? std::vector<double>{1, 2, 5, 0} : std::vector<double>{4, 0, 3, 2};
    SCOPED_TRACE(largest ? "largest" : "smallest");
    std::vector<Tensor> ref = reference::Executor(g).run({x});
    EXPECT_EQ(ref[1].to_f64_vector(), want) << "reference";
    driver::JitModel jit(driver::compile_graph(g, {}));
    EXPECT_EQ(jit.run({x})[1].to_f64_vector(), want) << "LLVM";
  }
}

}  // namespace
// Channel 0 holds {1, 1, 3, 3} over the batch and the spatial axis: mean 2,
// variance 1, so Y = (x - 2) * 2 + 1; the running statistics move halfway
// (momentum 0.5) from 0 and 1 towards 2 and 1.
TEST(CompositeOps, BatchNormalizationInTrainingModeUsesTheBatchStatistics) {
  ModelBuilder b(15);
  b.input("x", {2, 1, 2});
  b.float_initializer("scale", {1}, {2});
  b.float_initializer("bias", {1}, {1});
  b.float_initializer("mean", {1}, {0});
  b.float_initializer("var", {1}, {1});
  onnx::NodeProto* n = b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"},
                              {"y", "running_mean", "running_var"}, "bn");
  ModelBuilder::set_int(n, "training_mode", 1);
  ModelBuilder::set_float(n, "epsilon", 0);
  ModelBuilder::set_float(n, "momentum", 0.5);
  for (const char* o : {"y", "running_mean", "running_var"}) b.output(o);
  graph::Graph g = b.import();
  Tensor x(DType::kF32, {2, 1, 2});
  std::vector<double> xs{1, 3, 1, 3};
  for (size_t i = 0; i < xs.size(); ++i) x.set_f64(int64_t(i), xs[i]);
  std::vector<std::vector<double>> want{{-1, 3, -1, 3}, {1}, {1}};
  std::vector<Tensor> ref = reference::Executor(g).run({x});
  driver::JitModel jit(driver::compile_graph(g, {}));
  std::vector<Tensor> compiled = jit.run({x});
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(ref[k].to_f64_vector(), want[k]) << "reference output " << k;
    EXPECT_EQ(compiled[k].to_f64_vector(), want[k]) << "compiled output " << k;
  }
}

}  // namespace tessel::onnx_test
