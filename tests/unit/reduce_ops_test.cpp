// Shape functions and reference kernels of the reduce ops (and ArgMax /
// ArgMin), checked against values worked out by hand or with numpy, plus
// must-fail cases.
#include <cmath>
#include <limits>

#include "tests/unit/movement_test_util.h"

namespace tessel::movement_test {
namespace {

using V = std::vector<double>;
using I = std::vector<int64_t>;

graph::Attrs keep(int64_t k) {
  return attrs_of({{"keepdims", k}});
}

TEST(ReduceSum, AxisWithAndWithoutKeepdims) {
  auto x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto y = run("ReduceSum", {x, i64({1})});
  EXPECT_EQ(y[0].shape(), (Dims{2, 1}));
  EXPECT_EQ(values(y[0]), (V{6, 15}));
  y = run("ReduceSum", {x, i64({-2})}, keep(0));
  EXPECT_EQ(y[0].shape(), (Dims{3}));
  EXPECT_EQ(values(y[0]), (V{5, 7, 9}));
}

TEST(ReduceSum, NoAxesReducesAllUnlessNoop) {
  auto x = f32({2, 2}, {1, 2, 3, 4});
  auto all = run("ReduceSum", {x}, keep(0));
  EXPECT_EQ(all[0].shape(), Dims{});
  EXPECT_EQ(values(all[0]), (V{10}));
  auto kept = run("ReduceSum", {x, i64({})});
  EXPECT_EQ(kept[0].shape(), (Dims{1, 1}));
  auto noop = run("ReduceSum", {x, i64({})}, attrs_of({{"noop_with_empty_axes", int64_t(1)}}));
  EXPECT_EQ(noop[0].shape(), (Dims{2, 2}));
  EXPECT_EQ(values(noop[0]), (V{1, 2, 3, 4}));
}

TEST(ReduceSum, MiddleAxisOfRank3) {
  auto y = run("ReduceSum", {iota(DType::kI32, {2, 3, 2}), i64({1})}, keep(0));
  EXPECT_EQ(y[0].shape(), (Dims{2, 2}));
  EXPECT_EQ(values(y[0]), (V{6, 9, 24, 27}));  // numpy: arange(12).reshape(2,3,2).sum(1)
}

TEST(ReduceSum, F32AccumulatesInDouble) {
  // In float, 16777216 + 1 + 1 stays 16777216; the double sum is exact.
  auto y = run("ReduceSum", {f32({3}, {16777216, 1, 1})}, keep(0));
  EXPECT_EQ(values(y[0]), (V{16777218}));
}

TEST(ReduceSum, Int64IsExact) {
  Tensor x = Tensor::from_i64({int64_t(1) << 53, 1});
  auto y = run("ReduceSum", {x}, keep(0));
  EXPECT_EQ(y[0].to_i64_vector(), (I{(int64_t(1) << 53) + 1}));
}

TEST(Reduce, EmptySetFollowsOnnx) {
  Tensor empty(DType::kF32, {2, 0, 3});
  EXPECT_EQ(values(run("ReduceSum", {empty, i64({1})})[0]), V(6, 0.0));
  EXPECT_EQ(values(run("ReduceProd", {empty, i64({1})})[0]), V(6, 1.0));
  EXPECT_EQ(values(run("ReduceMax", {empty, i64({1})})[0]), V(6, -INFINITY));
  EXPECT_EQ(values(run("ReduceLogSumExp", {empty, i64({1})})[0]), V(6, -INFINITY));
  EXPECT_TRUE(std::isnan(values(run("ReduceMean", {empty, i64({1})})[0])[0]));
  Tensor empty_int(DType::kI32, {0});
  EXPECT_EQ(run("ReduceMin", {empty_int}, keep(0))[0].to_i64_vector(), (I{2147483647}));
  // Reducing a non-empty axis of an empty tensor gives an empty result.
  auto y = run("ReduceSum", {empty, i64({2})});
  EXPECT_EQ(y[0].shape(), (Dims{2, 0, 1}));
}

TEST(Reduce, MeanProdMaxMin) {
  auto x = f32({2, 3}, {1, -2, 3, 4, 5, -6});
  EXPECT_EQ(values(run("ReduceMean", {x, i64({1})}, keep(0))[0]), (V{double(float(2.0 / 3)), 1}));
  EXPECT_EQ(values(run("ReduceProd", {x, i64({1})}, keep(0))[0]), (V{-6, -120}));
  EXPECT_EQ(values(run("ReduceMax", {x, i64({0})}, keep(0))[0]), (V{4, 5, 3}));
  EXPECT_EQ(values(run("ReduceMin", {x}, keep(0))[0]), (V{-6}));
  // Integer mean truncates like numpy's mean(...).astype(int32).
  auto m = run("ReduceMean", {iota(DType::kI32, {2})}, keep(0));
  EXPECT_EQ(m[0].to_i64_vector(), (I{0}));
}

TEST(Reduce, MaxPropagatesNanAndTakesBool) {
  auto y = run("ReduceMax", {f32({3}, {1, NAN, 2})}, keep(0));
  EXPECT_TRUE(std::isnan(values(y[0])[0]));
  Tensor b(DType::kBool, {2, 2});
  b.set_i64(1, 1);
  auto any = run("ReduceMax", {b, i64({1})}, keep(0));
  EXPECT_EQ(any[0].dtype(), DType::kBool);
  EXPECT_EQ(values(any[0]), (V{1, 0}));
  auto all = run("ReduceMin", {b, i64({1})}, keep(0));
  EXPECT_EQ(values(all[0]), (V{0, 0}));
}

TEST(Reduce, NormsAndLogs) {
  auto x = f32({2, 2}, {3, -4, 1, 2});
  EXPECT_EQ(values(run("ReduceL1", {x, i64({1})}, keep(0))[0]), (V{7, 3}));
  EXPECT_EQ(values(run("ReduceSumSquare", {x, i64({1})}, keep(0))[0]), (V{25, 5}));
  auto l2 = values(run("ReduceL2", {x, i64({1})}, keep(0))[0]);
  EXPECT_NEAR(l2[0], 5, 1e-6);
  EXPECT_NEAR(l2[1], std::sqrt(5.0), 1e-6);
  auto ls = values(run("ReduceLogSum", {f32({2}, {1, 2})}, keep(0))[0]);
  EXPECT_NEAR(ls[0], std::log(3.0), 1e-6);
}

TEST(Reduce, LogSumExpIsStableForLargeInputs) {
  // exp(1000) overflows even a double; the shifted sum does not.
  auto y = values(run("ReduceLogSumExp", {f32({2}, {1000, 1000})}, keep(0))[0]);
  EXPECT_NEAR(y[0], 1000 + std::log(2.0), 1e-3);
  auto small = values(run("ReduceLogSumExp", {f32({2}, {0, 0})}, keep(0))[0]);
  EXPECT_NEAR(small[0], std::log(2.0), 1e-6);
}

TEST(Reduce, F64AndHalfInputs) {
  Tensor d(DType::kF64, {2});
  d.set_f64(0, 0.1);
  d.set_f64(1, 0.2);
  EXPECT_DOUBLE_EQ(values(run("ReduceSum", {d}, keep(0))[0])[0], 0.1 + 0.2);
  Tensor h(DType::kF16, {3});
  for (int i = 0; i < 3; ++i) h.set_f64(i, i + 1);
  auto y = run("ReduceMean", {h}, keep(0));
  EXPECT_EQ(y[0].dtype(), DType::kF16);
  EXPECT_EQ(values(y[0]), (V{2}));
}

TEST(ArgMax, AxisKeepdimsAndLastIndex) {
  auto x = f32({2, 3}, {1, 5, 5, 7, 2, 7});
  auto y = run("ArgMax", {x}, attrs_of({{"axis", int64_t(1)}}));
  EXPECT_EQ(y[0].dtype(), DType::kI64);
  EXPECT_EQ(y[0].shape(), (Dims{2, 1}));
  EXPECT_EQ(y[0].to_i64_vector(), (I{1, 0}));
  y = run("ArgMax", {x},
          attrs_of({{"axis", int64_t(-1)}, {"select_last_index", int64_t(1)}, {"keepdims", int64_t(0)}}));
  EXPECT_EQ(y[0].shape(), (Dims{2}));
  EXPECT_EQ(y[0].to_i64_vector(), (I{2, 2}));
  y = run("ArgMin", {x}, keep(0));
  EXPECT_EQ(y[0].to_i64_vector(), (I{0, 1, 0}));
}

TEST(Reduce, BadInputsAreUserErrors) {
  auto x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_user_error([&] { run("ReduceSum", {x, i64({2})}); }, "the_ReduceSum", "out of range");
  expect_user_error([&] { run("ReduceMean", {x, i64({1, -1})}); }, "the_ReduceMean", "appears twice");
  expect_user_error([&] { run("ReduceMax", {x, f32({1}, {1})}); }, "the_ReduceMax", "int64");
  Tensor b(DType::kBool, {2});
  expect_user_error([&] { run("ReduceSum", {b}); }, "the_ReduceSum", "does not accept bool");
  expect_user_error(
      [&] {
        run("ReduceSum", {Tensor::scalar_f64(DType::kF32, 1), i64({0})});
      },
      "the_ReduceSum", "scalar");
  expect_user_error([&] { run("ArgMax", {Tensor(DType::kF32, {0, 2})}); }, "the_ArgMax", "is empty");
  expect_user_error(
      [&] {
        run("ArgMin", {x}, attrs_of({{"axis", int64_t(2)}}));
      },
      "the_ArgMin", "out of range");
}

// Axes known only at run time: the rank survives only with keepdims.
TEST(ReduceInfer, RuntimeAxes) {
  graph::Graph g;
  graph::TensorType xt(DType::kF32, {2, 3, 4});
  graph::Value* x = g.add_input("x", xt);
  graph::Value* axes = g.add_input("axes", graph::TensorType(DType::kI64, {1}));
  graph::Node* kept = g.add_node("ReduceSum", "kept", {x, axes}, {"a"});
  graph::infer_node(*kept);
  EXPECT_EQ(kept->outputs[0]->type.str(), "f32[?, ?, ?]");
  graph::Node* dropped = g.add_node("ReduceSum", "dropped", {x, axes}, {"b"}, keep(0));
  graph::infer_node(*dropped);
  EXPECT_EQ(dropped->outputs[0]->type.str(), "f32[*]");
  // The reference executor knows the axes and sizes the output exactly.
  Tensor xv = iota(DType::kF32, {2, 3, 4}), av = i64({0, 2});
  auto y = reference::evaluate_node(*dropped, {&xv, &av});
  EXPECT_EQ(y[0].shape(), (Dims{3}));
  EXPECT_EQ(values(y[0]), (V{60, 92, 124}));  // numpy: arange(24).reshape(2,3,4).sum((0,2))
}

TEST(ReduceInfer, UnknownDimsKeepTheirSymbolAndFlops) {
  graph::Graph g;
  graph::TensorType xt = graph::TensorType::of_rank(DType::kF32, 2);
  xt.dims[0] = graph::Dim::unknown("N");
  xt.dims[1] = graph::Dim::known(8);
  graph::Value* x = g.add_input("x", xt);
  graph::Node* n = g.add_node("ReduceMean", "mean", {x, g.add_constant("axes", i64({-1}))}, {"y"});
  graph::infer_node(*n);
  EXPECT_EQ(n->outputs[0]->type.str(), "f32[N, 1]");

  graph::Value* s = g.add_input("s", graph::TensorType(DType::kF32, {2, 3}));
  graph::Node* sq = g.add_node("ReduceSumSquare", "sq", {s}, {"z"});
  graph::infer_node(*sq);
  const graph::OpSchema* schema = graph::OpRegistry::global().find("ReduceSumSquare");
  EXPECT_EQ(schema->pattern, graph::OpPattern::kReduce);
  EXPECT_EQ(schema->flops(*sq), 12);  // square and add per element
}

}  // namespace
}  // namespace tessel::movement_test
