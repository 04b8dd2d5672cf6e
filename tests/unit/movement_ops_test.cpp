// Shape functions and reference kernels of the data-movement ops, checked
// against values worked out by hand (or with numpy), plus must-fail cases.
#include <climits>
#include <limits>

#include "tests/unit/movement_test_util.h"

namespace tessel::movement_test {
namespace {

using V = std::vector<double>;

TEST(Transpose, DefaultPermReverses) {
  auto y = run("Transpose", {f32({2, 3}, {0, 1, 2, 3, 4, 5})});
  EXPECT_EQ(y[0].shape(), (Dims{3, 2}));
  EXPECT_EQ(values(y[0]), (V{0, 3, 1, 4, 2, 5}));
}

TEST(Transpose, ExplicitPermOnInt64) {
  auto y =
      run("Transpose", {iota(DType::kI64, {2, 2, 3})}, attrs_of({{"perm", std::vector<int64_t>{1, 2, 0}}}));
  EXPECT_EQ(y[0].shape(), (Dims{2, 3, 2}));
  EXPECT_EQ(values(y[0]), (V{0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11}));
}

TEST(Transpose, BadPermIsUserError) {
  auto x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  expect_user_error(
      [&] {
        run("Transpose", {x}, attrs_of({{"perm", std::vector<int64_t>{0, 0}}}));
      },
      "the_Transpose", "appears twice");
  expect_user_error(
      [&] {
        run("Transpose", {x}, attrs_of({{"perm", std::vector<int64_t>{0}}}));
      },
      "the_Transpose", "has rank 2");
}

TEST(Concat, NegativeAxisAndZeroSizeInput) {
  auto y = run("Concat", {f32({2, 1}, {1, 2}), f32({2, 0}, {}), f32({2, 2}, {3, 4, 5, 6})},
               attrs_of({{"axis", int64_t(-1)}}));
  EXPECT_EQ(y[0].shape(), (Dims{2, 3}));
  EXPECT_EQ(values(y[0]), (V{1, 3, 4, 2, 5, 6}));
}

TEST(Concat, MismatchAndMissingAxisAreUserErrors) {
  auto a = f32({2, 1}, {1, 2}), b = f32({3, 1}, {1, 2, 3});
  expect_user_error(
      [&] {
        run("Concat", {a, b}, attrs_of({{"axis", int64_t(1)}}));
      },
      "the_Concat", "outside axis 1");
  expect_user_error(
      [&] {
        run("Concat", {a, a}, attrs_of({{"axis", int64_t(2)}}));
      },
      "the_Concat", "out of range");
  expect_user_error([&] { run("Concat", {a, a}); }, "the_Concat", "missing required attribute 'axis'");
}

TEST(Split, SplitInputGivesSizes) {
  auto y = run("Split", {f32({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), i64({1, 0, 4})}, {}, 3);
  EXPECT_EQ(y[0].shape(), (Dims{1, 2}));
  EXPECT_EQ(y[1].shape(), (Dims{0, 2}));
  EXPECT_EQ(values(y[2]), (V{2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(Split, NumOutputsLeavesSmallerLastChunk) {
  auto y = run("Split", {iota(DType::kI32, {2, 7})},
               attrs_of({{"axis", int64_t(-1)}, {"num_outputs", int64_t(3)}}), 3);
  EXPECT_EQ(y[0].shape(), (Dims{2, 3}));
  EXPECT_EQ(y[2].shape(), (Dims{2, 1}));
  EXPECT_EQ(values(y[1]), (V{3, 4, 5, 10, 11, 12}));
  EXPECT_EQ(values(y[2]), (V{6, 13}));
}

TEST(Split, BadSplitsAreUserErrors) {
  auto x = f32({6}, {0, 1, 2, 3, 4, 5});
  expect_user_error([&] { run("Split", {x, i64({2, 3})}, {}, 2); }, "the_Split", "sums to 5");
  expect_user_error([&] { run("Split", {x}, {}, 4); }, "the_Split", "does not divide into 4");
  expect_user_error(
      [&] {
        run("Split", {x, i64({6})}, attrs_of({{"num_outputs", int64_t(1)}}), 1);
      },
      "the_Split", "not both");
}

TEST(Slice, NegativeStepsClampPerSpec) {
  Tensor x = iota(DType::kI64, {10});
  // start -1 -> 9, end INT64_MIN clamps to -1 (before the first element).
  auto a = run("Slice", {x, i64({-1}), i64({INT64_MIN}), std::nullopt, i64({-2})});
  EXPECT_EQ(values(a[0]), (V{9, 7, 5, 3, 1}));
  // start 100 clamps to 9 for a negative step; end 0 is exclusive.
  auto b = run("Slice", {x, i64({100}), i64({0}), i64({0}), i64({-3})});
  EXPECT_EQ(values(b[0]), (V{9, 6, 3}));
  // An end far below -dim reaches element 0 going backward.
  auto d = run("Slice", {x, i64({2}), i64({-100}), std::nullopt, i64({-1})});
  EXPECT_EQ(values(d[0]), (V{2, 1, 0}));
  // Forward with start past the end: empty.
  auto c = run("Slice", {x, i64({12}), i64({INT64_MAX})});
  EXPECT_EQ(c[0].shape(), (Dims{0}));
}

TEST(Slice, NegativeAxisWithStep) {
  auto y = run("Slice", {iota(DType::kF32, {3, 4}), i64({-3}), i64({100}), i64({-1}), i64({2})});
  EXPECT_EQ(y[0].shape(), (Dims{3, 2}));
  EXPECT_EQ(values(y[0]), (V{1, 3, 5, 7, 9, 11}));
}

TEST(Slice, RuntimeStartsLeaveOnlySlicedAxisUnknown) {
  graph::Graph g;
  auto* x = g.add_input("x", graph::TensorType(DType::kF32, {3, 4}));
  auto* starts = g.add_input("starts", graph::TensorType(DType::kI64, {1}));
  graph::Node* n = g.add_node(
      "Slice", "s", {x, starts, g.add_constant("e", i64({4})), g.add_constant("a", i64({1}))}, {"y"});
  graph::infer_node(*n);
  EXPECT_EQ(n->outputs[0]->type.str(), "f32[3, ?]");
}

TEST(Pad, RuntimePadsLeaveOnlyPaddedAxesUnknown) {
  graph::Graph g;
  auto* x = g.add_input("x", graph::TensorType(DType::kF32, {3, 4, 5}));
  auto* pads = g.add_input("pads", graph::TensorType(DType::kI64, {2}));
  graph::Node* n = g.add_node("Pad", "p", {x, pads, nullptr, g.add_constant("a", i64({-2}))}, {"y"});
  graph::infer_node(*n);
  EXPECT_EQ(n->outputs[0]->type.str(), "f32[3, ?, 5]");
}

TEST(Slice, BadArgumentsAreUserErrors) {
  Tensor x = iota(DType::kF32, {3, 4});
  expect_user_error(
      [&] {
        run("Slice", {x, i64({0}), i64({2}), i64({0}), i64({0})});
      },
      "the_Slice", "must not contain 0");
  expect_user_error(
      [&] {
        run("Slice", {x, i64({0, 0}), i64({2, 2}), i64({1, -1})});
      },
      "the_Slice", "appears twice");
  expect_user_error([&] { run("Slice", {x, i64({0}), i64({2, 3})}); }, "the_Slice", "'ends' has 2");
}

TEST(Pad, ConstantWithValueAndAxes) {
  auto y = run("Pad", {f32({2, 2}, {1, 2, 3, 4}), i64({1, 0}), f32({}, {9}), i64({-1})});
  EXPECT_EQ(y[0].shape(), (Dims{2, 3}));
  EXPECT_EQ(values(y[0]), (V{9, 1, 2, 9, 3, 4}));
}

TEST(Pad, ReflectEdgeWrap) {
  Tensor x = f32({1, 3}, {1, 2, 3});
  auto mode = [](const char* m) { return attrs_of({{"mode", std::string(m)}}); };
  EXPECT_EQ(values(run("Pad", {x, i64({0, 2, 0, 1})}, mode("reflect"))[0]), (V{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(values(run("Pad", {x, i64({0, 2, 0, 1})}, mode("edge"))[0]), (V{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(values(run("Pad", {x, i64({0, 2, 0, 1})}, mode("wrap"))[0]), (V{2, 3, 1, 2, 3, 1}));
  // numpy keeps reflecting when the pad is longer than the axis.
  EXPECT_EQ(values(run("Pad", {x, i64({0, 5, 0, 0})}, mode("reflect"))[0]), (V{2, 1, 2, 3, 2, 1, 2, 3}));
}

TEST(Pad, NegativePadsCropFirst) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  auto y = run("Pad", {x, i64({-1, 2})}, attrs_of({{"mode", std::string("edge")}}));
  EXPECT_EQ(values(y[0]), (V{2, 3, 4, 4, 4}));
  auto z = run("Pad", {x, i64({-1, -2})});
  EXPECT_EQ(values(z[0]), (V{2}));
}

TEST(Pad, BadArgumentsAreUserErrors) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  expect_user_error([&] { run("Pad", {x, i64({1, 1, 1})}); }, "the_Pad", "must have 2 elements");
  expect_user_error([&] { run("Pad", {x, i64({-3, -2})}); }, "the_Pad", "crop more");
  expect_user_error(
      [&] {
        run("Pad", {x, i64({1, 1})}, attrs_of({{"mode", std::string("mirror")}}));
      },
      "the_Pad", "mode must be");
  expect_user_error(
      [&] {
        run("Pad", {f32({0}, {}), i64({1, 1})}, attrs_of({{"mode", std::string("edge")}}));
      },
      "the_Pad", "empty");
  expect_user_error([&] { run("Pad", {x, i64({1, 1}), i64({0})}); }, "the_Pad", "dtype");
}

TEST(Gather, AxisOneWithNegativeInt32Indices) {
  Tensor idx(DType::kI32, {2, 2});
  for (int64_t i = 0; i < 4; ++i) idx.set_i64(i, std::vector<int64_t>{0, -1, 2, 0}[size_t(i)]);
  auto y = run("Gather", {iota(DType::kF64, {2, 3, 4}), idx}, attrs_of({{"axis", int64_t(1)}}));
  EXPECT_EQ(y[0].shape(), (Dims{2, 2, 2, 4}));
  V want{0,  1,  2,  3,  8,  9,  10, 11, 8,  9,  10, 11, 0,  1,  2,  3,
         12, 13, 14, 15, 20, 21, 22, 23, 20, 21, 22, 23, 12, 13, 14, 15};
  EXPECT_EQ(values(y[0]), want);
}

TEST(Gather, ScalarIndexDropsAxis) {
  auto y = run("Gather", {iota(DType::kU8, {3, 2}), Tensor::from_i64({2}, {})});
  EXPECT_EQ(y[0].shape(), (Dims{2}));
  EXPECT_EQ(values(y[0]), (V{4, 5}));
}

TEST(Gather, OutOfRangeIndexIsUserError) {
  Tensor x = iota(DType::kF32, {3, 2});
  expect_user_error([&] { run("Gather", {x, i64({3})}); }, "the_Gather", "index 3 is out of range");
  expect_user_error([&] { run("Gather", {x, i64({-4})}); }, "the_Gather", "index -4 is out of range");
  expect_user_error([&] { run("Gather", {x, f32({1}, {0})}); }, "the_Gather", "int32 or int64");
}

TEST(Tile, RepeatsEachAxis) {
  auto y = run("Tile", {f32({2, 2}, {1, 2, 3, 4}), i64({2, 3})});
  EXPECT_EQ(y[0].shape(), (Dims{4, 6}));
  EXPECT_EQ(values(y[0]), (V{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  expect_user_error([&] { run("Tile", {f32({2}, {1, 2}), i64({2, 3})}); }, "the_Tile", "has rank 1");
}

TEST(GatherElements, BothAxes) {
  auto a = run("GatherElements", {f32({2, 2}, {1, 2, 3, 4}), i64({0, 0, 1, 0}).reshaped({2, 2})},
               attrs_of({{"axis", int64_t(1)}}));
  EXPECT_EQ(values(a[0]), (V{1, 1, 4, 3}));
  auto b = run("GatherElements", {iota(DType::kI64, {3, 3}), i64({1, 2, 0, 2, 0, -3}).reshaped({2, 3})});
  EXPECT_EQ(values(b[0]), (V{3, 7, 2, 6, 1, 2}));
  expect_user_error(
      [&] {
        run("GatherElements", {iota(DType::kI64, {3, 3}), i64({3}).reshaped({1, 1})});
      },
      "the_GatherElements", "out of range");
}

TEST(DepthToSpace, DcrAndCrdDiffer) {
  Tensor x = iota(DType::kF32, {1, 8, 1, 1});
  auto dcr = run("DepthToSpace", {x}, attrs_of({{"blocksize", int64_t(2)}}));
  EXPECT_EQ(dcr[0].shape(), (Dims{1, 2, 2, 2}));
  EXPECT_EQ(values(dcr[0]), (V{0, 2, 4, 6, 1, 3, 5, 7}));
  auto crd = run("DepthToSpace", {x}, attrs_of({{"blocksize", int64_t(2)}, {"mode", std::string("CRD")}}));
  EXPECT_EQ(values(crd[0]), (V{0, 1, 2, 3, 4, 5, 6, 7}));
  expect_user_error(
      [&] {
        run("DepthToSpace", {iota(DType::kF32, {1, 6, 1, 1})}, attrs_of({{"blocksize", int64_t(2)}}));
      },
      "the_DepthToSpace", "not divisible by 4");
}

TEST(SpaceToDepth, BlocksMoveToChannels) {
  auto y = run("SpaceToDepth", {iota(DType::kF32, {1, 1, 4, 4})}, attrs_of({{"blocksize", int64_t(2)}}));
  EXPECT_EQ(y[0].shape(), (Dims{1, 4, 2, 2}));
  EXPECT_EQ(values(y[0]), (V{0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15}));
}

TEST(GatherND, BatchDimsAndNegativeIndices) {
  auto a = run("GatherND", {iota(DType::kI32, {2, 2, 2}), i64({1, 0}).reshaped({2, 1})},
               attrs_of({{"batch_dims", int64_t(1)}}));
  EXPECT_EQ(a[0].shape(), (Dims{2, 2}));
  EXPECT_EQ(values(a[0]), (V{2, 3, 4, 5}));
  auto b = run("GatherND", {iota(DType::kF32, {2, 2}), i64({0, 0, 1, -1}).reshaped({2, 2})});
  EXPECT_EQ(values(b[0]), (V{0, 3}));
  expect_user_error(
      [&] {
        run("GatherND", {iota(DType::kF32, {2, 2}), i64({0, 2}).reshaped({1, 2})});
      },
      "the_GatherND", "index 2 is out of range");
  expect_user_error(
      [&] {
        run("GatherND", {iota(DType::kF32, {2, 2}), i64({0, 0, 0})});
      },
      "the_GatherND", "must be in [1, 2]");
}

TEST(ScatterND, ReductionsAndSlices) {
  Tensor data = f32({4}, {1, 2, 3, 4});
  Tensor idx = i64({1, 1, 3}).reshaped({3, 1});
  Tensor upd = f32({3}, {10, 20, 30});
  auto add = run("ScatterND", {data, idx, upd}, attrs_of({{"reduction", std::string("add")}}));
  EXPECT_EQ(values(add[0]), (V{1, 32, 3, 34}));
  auto none = run("ScatterND", {data, idx, upd});
  EXPECT_EQ(values(none[0]), (V{1, 20, 3, 30}));
  EXPECT_EQ(values(data), (V{1, 2, 3, 4})) << "the input must not change";
  auto rows = run("ScatterND", {f32({2, 2}, {0, 0, 0, 0}), i64({-1}).reshaped({1, 1}), f32({1, 2}, {5, 6})});
  EXPECT_EQ(values(rows[0]), (V{0, 0, 5, 6}));
  expect_user_error([&] { run("ScatterND", {data, idx, f32({2}, {1, 2})}); }, "the_ScatterND", "disagree");
}

TEST(ScatterElements, NegativeIndicesAndMax) {
  Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  Tensor idx = i64({-4, 3}).reshaped({1, 2});
  Tensor upd = f32({1, 2}, {1.5, 2.5});
  auto a = run("ScatterElements", {data, idx, upd}, attrs_of({{"axis", int64_t(1)}}));
  EXPECT_EQ(values(a[0]), (V{1, 1.5, 3, 2.5, 5}));
  auto m = run("ScatterElements", {data, idx, upd},
               attrs_of({{"axis", int64_t(1)}, {"reduction", std::string("max")}}));
  EXPECT_EQ(values(m[0]), (V{1, 2, 3, 4, 5}));
  expect_user_error(
      [&] {
        run("ScatterElements", {data, idx, upd}, attrs_of({{"reduction", std::string("avg")}}));
      },
      "the_ScatterElements", "reduction must be");
  expect_user_error(
      [&] {
        run("ScatterElements", {data, i64({5, 0}).reshaped({1, 2}), upd}, attrs_of({{"axis", int64_t(1)}}));
      },
      "the_ScatterElements", "index 5 is out of range");
}

TEST(Trilu, UpperLowerAndDiagonalOffset) {
  Tensor x = iota(DType::kF32, {3, 4});
  EXPECT_EQ(values(run("Trilu", {x})[0]), (V{0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11}));
  EXPECT_EQ(values(run("Trilu", {x, i64({1}).reshaped({})})[0]), (V{0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11}));
  auto lower = attrs_of({{"upper", int64_t(0)}});
  EXPECT_EQ(values(run("Trilu", {x}, lower)[0]), (V{0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0}));
  EXPECT_EQ(values(run("Trilu", {x, i64({-1}).reshaped({})}, lower)[0]),
            (V{0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0}));
  EXPECT_EQ(values(run("Trilu", {x, i64({100}).reshaped({})}, lower)[0]), values(x));  // k past the corner
}

TEST(Trilu, BatchedAndEmpty) {
  auto y = run("Trilu", {iota(DType::kI64, {2, 2, 2})});
  EXPECT_EQ(values(y[0]), (V{0, 1, 0, 3, 4, 5, 0, 7}));
  EXPECT_EQ(run("Trilu", {iota(DType::kI64, {0, 5}), std::nullopt})[0].shape(), (Dims{0, 5}));
}

TEST(Trilu, BadArgumentsAreUserErrors) {
  expect_user_error([&] { run("Trilu", {iota(DType::kF32, {4})}); }, "the_Trilu", "rank 2 or more");
  Tensor k32(DType::kI32, {});
  expect_user_error(
      [&] {
        run("Trilu", {iota(DType::kF32, {2, 2}), k32});
      },
      "the_Trilu", "'k' must be an int64");
  expect_user_error(
      [&] {
        run("Trilu", {iota(DType::kF32, {2, 2}), i64({0, 1})});
      },
      "the_Trilu", "must be a scalar");
}

TEST(Range, FloatAndIntegerSequences) {
  auto f = run("Range", {Tensor::scalar_f64(DType::kF32, 1), Tensor::scalar_f64(DType::kF32, 2),
                         Tensor::scalar_f64(DType::kF32, 0.3)});
  ASSERT_EQ(f[0].shape(), (Dims{4}));  // ceil(1 / 0.3)
  for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(f[0].get_f64(i), 1 + 0.3 * double(i), 1e-6);
  auto down = run("Range", {Tensor::scalar_f64(DType::kI64, 5), Tensor::scalar_f64(DType::kI64, -4),
                            Tensor::scalar_f64(DType::kI64, -2)});
  EXPECT_EQ(values(down[0]), (V{5, 3, 1, -1, -3}));  // ceil(-9 / -2) = 5
  auto i32 = run("Range", {Tensor::scalar_f64(DType::kI32, 10), Tensor::scalar_f64(DType::kI32, 6),
                           Tensor::scalar_f64(DType::kI32, -3)});
  EXPECT_EQ(i32[0].dtype(), DType::kI32);
  EXPECT_EQ(values(i32[0]), (V{10, 7}));
  auto empty = run("Range", {Tensor::scalar_f64(DType::kI64, 3), Tensor::scalar_f64(DType::kI64, 1),
                             Tensor::scalar_f64(DType::kI64, 1)});
  EXPECT_EQ(empty[0].shape(), (Dims{0}));  // max(ceil(-2), 0)
}

TEST(Range, RuntimeInputsLeaveLengthUnknown) {
  graph::Graph g;
  graph::TensorType scalar(DType::kI64, {});
  graph::Value* start = g.add_constant("start", Tensor::scalar_f64(DType::kI64, 0));
  graph::Node* n = g.add_node(
      "Range", "the_Range", {start, g.add_input("limit", scalar), g.add_constant("delta", i64({1}))}, {"y"});
  graph::infer_node(*n);
  EXPECT_EQ(n->outputs[0]->type.str(), "i64[?]");
}

TEST(Range, BadArgumentsAreUserErrors) {
  auto s = [](DType t, double v) { return Tensor::scalar_f64(t, v); };
  expect_user_error(
      [&] {
        run("Range", {s(DType::kF32, 0), s(DType::kF32, 1), s(DType::kF32, 0)});
      },
      "the_Range", "'delta' must be non-zero");
  expect_user_error(
      [&] {
        run("Range", {s(DType::kI64, 0), s(DType::kI32, 1), s(DType::kI64, 1)});
      },
      "the_Range", "input 1 has dtype i32");
  expect_user_error(
      [&] {
        run("Range", {i64({0, 1}), s(DType::kI64, 1), s(DType::kI64, 1)});
      },
      "the_Range", "'start' must be a scalar");
  expect_user_error(
      [&] {
        run("Range", {s(DType::kBool, 0), s(DType::kBool, 1), s(DType::kBool, 1)});
      },
      "the_Range", "Range takes");
  double inf = std::numeric_limits<double>::infinity();
  expect_user_error(
      [&] {
        run("Range", {s(DType::kF32, 0), s(DType::kF32, inf), s(DType::kF32, 1)});
      },
      "the_Range", "no finite length");
}

}  // namespace
}  // namespace tessel::movement_test
