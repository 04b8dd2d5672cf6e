// Shape functions and reference kernels of the shape ops (Reshape, Flatten,
// Squeeze, Unsqueeze, Expand, Shape, Size, ConstantOfShape), on constant
// inputs and on graph inputs whose dimensions are unknown, plus must-fail cases.
#include <climits>

#include "tests/unit/movement_test_util.h"

namespace tessel::movement_test {
namespace {

using V = std::vector<double>;
using I = std::vector<int64_t>;

// A graph input of the given dims; -1 is unknown, -2 the symbol "N".
graph::TensorType type_of(DType dtype, const std::vector<int64_t>& dims) {
  graph::TensorType t = graph::TensorType::of_rank(dtype, int(dims.size()));
  for (size_t i = 0; i < dims.size(); ++i)
    t.dims[i] = dims[i] >= 0 ? graph::Dim::known(dims[i]) : graph::Dim::unknown(dims[i] == -2 ? "N" : "");
  return t;
}

// Infers op over inputs (graph inputs or constants) and returns its output type.
graph::Value* infer(graph::Graph& g, const std::string& op, std::vector<graph::Value*> ins,
                    graph::Attrs a = {}) {
  graph::Node* n = g.add_node(op, "the_" + op, std::move(ins), {g.unique_name("y")}, std::move(a));
  graph::infer_node(*n);
  return n->outputs[0];
}

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  auto x = iota(DType::kF32, {2, 3, 4});
  auto y = run("Reshape", {x, i64({0, -1})});
  EXPECT_EQ(y[0].shape(), (Dims{2, 12}));
  EXPECT_EQ(values(y[0])[13], 13);
  y = run("Reshape", {x, i64({4, 0, 2})});
  EXPECT_EQ(y[0].shape(), (Dims{4, 3, 2}));
  // allowzero: a 0 is a real zero-size dimension.
  y = run("Reshape", {Tensor(DType::kF32, {0, 3}), i64({3, 0})}, attrs_of({{"allowzero", int64_t(1)}}));
  EXPECT_EQ(y[0].shape(), (Dims{3, 0}));
}

TEST(Reshape, BadTargetsAreUserErrors) {
  auto x = iota(DType::kF32, {2, 3});
  expect_user_error([&] { run("Reshape", {x, i64({-1, -1})}); }, "the_Reshape", "more than one -1");
  expect_user_error([&] { run("Reshape", {x, i64({4, 2})}); }, "the_Reshape", "element counts differ");
  expect_user_error([&] { run("Reshape", {x, i64({4, -1})}); }, "the_Reshape", "do not divide");
  expect_user_error([&] { run("Reshape", {x, i64({1, 6, 0})}); }, "the_Reshape", "only 2 dimensions");
  expect_user_error([&] { run("Reshape", {x, i64({-3, 2})}); }, "the_Reshape", "negative entry");
  expect_user_error(
      [&] {
        run("Reshape", {x, i64({0, -1})}, attrs_of({{"allowzero", int64_t(1)}}));
      },
      "the_Reshape", "allowzero");
  expect_user_error([&] { run("Reshape", {x, f32({2}, {3, 2})}); }, "the_Reshape", "int64");
  expect_user_error([&] { run("Reshape", {x, i64({INT64_MAX / 2, 4})}); }, "the_Reshape", "overflows");
}

TEST(Reshape, UnknownDimsCopiedByZeroCancel) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", type_of(DType::kF32, {-2, 3, 4}));
  EXPECT_EQ(infer(g, "Reshape", {x, g.add_constant("s", i64({0, -1}))})->type.str(), "f32[N, 12]");
  EXPECT_EQ(infer(g, "Reshape", {x, g.add_constant("t", i64({-1, 4}))})->type.str(), "f32[?, 4]");
  // A runtime target: only its length is known.
  graph::Value* s = g.add_input("shape", graph::TensorType(DType::kI64, {3}));
  graph::Value* y = infer(g, "Reshape", {x, s});
  EXPECT_EQ(y->type.str(), "f32[?, ?, ?]");
  Tensor xv = iota(DType::kF32, {2, 3, 4}), sv = i64({4, -1, 2});
  auto out = reference::evaluate_node(*y->producer, {&xv, &sv});
  EXPECT_EQ(out[0].shape(), (Dims{4, 3, 2}));
}

TEST(Flatten, AxesIncludingNegativeAndZero) {
  auto x = iota(DType::kI64, {2, 3, 4});
  EXPECT_EQ(run("Flatten", {x})[0].shape(), (Dims{2, 12}));
  EXPECT_EQ(run("Flatten", {x}, attrs_of({{"axis", int64_t(0)}}))[0].shape(), (Dims{1, 24}));
  EXPECT_EQ(run("Flatten", {x}, attrs_of({{"axis", int64_t(3)}}))[0].shape(), (Dims{24, 1}));
  auto y = run("Flatten", {x}, attrs_of({{"axis", int64_t(-1)}}));
  EXPECT_EQ(y[0].shape(), (Dims{6, 4}));
  EXPECT_EQ(y[0].to_i64_vector()[23], 23);
  expect_user_error(
      [&] {
        run("Flatten", {x}, attrs_of({{"axis", int64_t(4)}}));
      },
      "the_Flatten", "out of range");
  graph::Graph g;
  graph::Value* u = g.add_input("u", type_of(DType::kF32, {-2, 3, 4}));
  EXPECT_EQ(infer(g, "Flatten", {u})->type.str(), "f32[N, 12]");
}

TEST(Squeeze, AllOnesOrGivenAxes) {
  auto x = iota(DType::kF32, {1, 3, 1, 2});
  EXPECT_EQ(run("Squeeze", {x})[0].shape(), (Dims{3, 2}));
  auto y = run("Squeeze", {x, i64({-2})});
  EXPECT_EQ(y[0].shape(), (Dims{1, 3, 2}));
  EXPECT_EQ(values(y[0]), (V{0, 1, 2, 3, 4, 5}));
  expect_user_error([&] { run("Squeeze", {x, i64({1})}); }, "the_Squeeze", "size is not 1");
  graph::Graph g;
  graph::Value* u = g.add_input("u", type_of(DType::kF32, {1, -1}));
  EXPECT_EQ(infer(g, "Squeeze", {u})->type.str(), "f32[*]");  // is the ? a 1?
  EXPECT_EQ(infer(g, "Squeeze", {u, g.add_constant("a", i64({0}))})->type.str(), "f32[?]");
}

TEST(Unsqueeze, AxesIndexTheOutput) {
  auto x = iota(DType::kF32, {3, 2});
  EXPECT_EQ(run("Unsqueeze", {x, i64({2, 0})})[0].shape(), (Dims{1, 3, 1, 2}));
  EXPECT_EQ(run("Unsqueeze", {x, i64({-1})})[0].shape(), (Dims{3, 2, 1}));
  EXPECT_EQ(run("Unsqueeze", {Tensor::scalar_f64(DType::kF32, 5), i64({0})})[0].shape(), (Dims{1}));
  expect_user_error([&] { run("Unsqueeze", {x, i64({0, -4})}); }, "the_Unsqueeze", "appears twice");
  expect_user_error([&] { run("Unsqueeze", {x, i64({3})}); }, "the_Unsqueeze", "out of range");
  expect_user_error([&] { run("Unsqueeze", {x}); }, "the_Unsqueeze", "expects 2 inputs");
}

TEST(Expand, BroadcastsBothWays) {
  auto x = f32({3, 1}, {1, 2, 3});
  auto y = run("Expand", {x, i64({2, 1, 4})});
  EXPECT_EQ(y[0].shape(), (Dims{2, 3, 4}));
  V want;
  for (int r = 0; r < 2; ++r)
    for (int i = 1; i <= 3; ++i) want.insert(want.end(), 4, i);
  EXPECT_EQ(values(y[0]), want);
  // A 1 in the shape keeps the input's dimension.
  EXPECT_EQ(run("Expand", {x, i64({1, 1})})[0].shape(), (Dims{3, 1}));
  expect_user_error([&] { run("Expand", {x, i64({2, 4})}); }, "the_Expand", "cannot be broadcast");
  graph::Graph g;
  graph::Value* u = g.add_input("u", type_of(DType::kF32, {3, 1}));
  graph::Value* s = g.add_input("s", graph::TensorType(DType::kI64, {3}));
  EXPECT_EQ(infer(g, "Expand", {u, s})->type.str(), "f32[?, 3, ?]");
}

TEST(Shape, ValueKnownWhenTheSliceIsStatic) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", type_of(DType::kF32, {-2, 3, 4}));
  graph::Value* all = infer(g, "Shape", {x});
  EXPECT_EQ(all->type.str(), "i64[3]");
  EXPECT_FALSE(all->is_constant());
  graph::Value* tail = infer(g, "Shape", {x}, attrs_of({{"start", int64_t(-2)}}));
  ASSERT_TRUE(tail->is_constant());
  EXPECT_EQ(tail->constant->to_i64_vector(), (I{3, 4}));
  graph::Value* none = infer(g, "Shape", {x}, attrs_of({{"start", int64_t(2)}, {"end", int64_t(1)}}));
  ASSERT_TRUE(none->is_constant());
  EXPECT_EQ(none->type.str(), "i64[0]");
  // A runtime evaluation reports the actual dimensions.
  Tensor xv(DType::kF32, {5, 3, 4});
  EXPECT_EQ(reference::evaluate_node(*all->producer, {&xv})[0].to_i64_vector(), (I{5, 3, 4}));
  auto y = run("Shape", {xv}, attrs_of({{"start", int64_t(-10)}, {"end", int64_t(-1)}}));
  EXPECT_EQ(y[0].to_i64_vector(), (I{5, 3}));
}

TEST(Size, CountsElements) {
  auto y = run("Size", {Tensor(DType::kU8, {2, 3, 4})});
  EXPECT_EQ(y[0].shape(), Dims{});
  EXPECT_EQ(y[0].to_i64_vector(), (I{24}));
  graph::Graph g;
  EXPECT_FALSE(infer(g, "Size", {g.add_input("x", type_of(DType::kF32, {-1, 2}))})->is_constant());
}

TEST(ConstantOfShape, FillsWithValue) {
  auto y = run("ConstantOfShape", {i64({2, 3})});
  EXPECT_EQ(y[0].dtype(), DType::kF32);
  EXPECT_EQ(values(y[0]), V(6, 0.0));
  auto ones = run("ConstantOfShape", {i64({2})}, attrs_of({{"value", Tensor::from_i64({7}, {1})}}));
  EXPECT_EQ(ones[0].dtype(), DType::kI64);
  EXPECT_EQ(ones[0].to_i64_vector(), (I{7, 7}));
  EXPECT_EQ(run("ConstantOfShape", {i64({0})})[0].shape(), (Dims{0}));
  EXPECT_EQ(run("ConstantOfShape", {i64({})})[0].shape(), Dims{});
  expect_user_error([&] { run("ConstantOfShape", {i64({2, -1})}); }, "the_ConstantOfShape", "negative entry");
  expect_user_error(
      [&] {
        run("ConstantOfShape", {i64({2})}, attrs_of({{"value", Tensor::from_i64({1, 2})}}));
      },
      "the_ConstantOfShape", "exactly one element");
  graph::Graph g;
  graph::Value* s = g.add_input("s", graph::TensorType(DType::kI64, {2}));
  EXPECT_EQ(infer(g, "ConstantOfShape", {s})->type.str(), "f32[?, ?]");
}

// Shape functions see types, not data: dimensions near 2^63 must give a user
// error, never a signed overflow (the fuzzer's extreme seeds found these).
TEST(ShapeFunctions, HugeDimensionsAreUserErrors) {
  graph::Graph g;
  graph::Value* big = g.add_input("big", type_of(DType::kF32, {INT64_MAX / 2, 4}));
  expect_user_error(
      [&] {
        infer(g, "Flatten", {big}, attrs_of({{"axis", int64_t(2)}}));
      },
      "the_Flatten", "overflows int64");
  expect_user_error(
      [&] {
        infer(g, "Tile", {big, g.add_constant("r", i64({4, 1}))});
      },
      "the_Tile", "more than 2^63 elements");
  graph::Value* v = g.add_input("v", type_of(DType::kF32, {8}));
  graph::Node* split =
      g.add_node("Split", "the_Split", {v, g.add_constant("s", i64({INT64_MAX, 4}))}, {"a", "b"}, {});
  expect_user_error([&] { graph::infer_node(*split); }, "the_Split", "sum past int64");
  graph::Value* x = g.add_input("x", type_of(DType::kF32, {1, 1, 8, 8}));
  graph::Value* w = g.add_input("w", type_of(DType::kF32, {1, 1, 3, 3}));
  expect_user_error(
      [&] {
        infer(g, "Conv", {x, w}, attrs_of({{"pads", std::vector<int64_t>{INT64_MAX, 0, 0, 0}}}));
      },
      "the_Conv", "too large for a window");
}

}  // namespace
}  // namespace tessel::movement_test
