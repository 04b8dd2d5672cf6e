// nn ops, windowed and linear: Conv, ConvTranspose, pooling, Gemm, MatMul.
// Shape functions (with unknown dims) and their user errors, FLOP counts, and
// reference kernel numbers worked out by hand (ONNX's documented examples).
#include "tests/unit/nn_test_util.h"

namespace tessel::nn_test {
namespace {

using graph::Dim;
using graph::TensorType;

TEST(NnConv, OnnxExampleWithAndWithoutPadding) {
  Tensor x = iota(DType::kF32, {1, 1, 5, 5}), w = filled(DType::kF32, {1, 1, 3, 3}, 1);
  auto padded = run_op("Conv", {&x, &w}, attrs(kv("pads", ints({1, 1, 1, 1}))));
  expect_values(padded[0], {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                            117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84});
  auto valid = run_op("Conv", {&x, &w}, attrs(kv("kernel_shape", ints({3, 3}))));
  EXPECT_EQ(valid[0].shape(), (Dims{1, 1, 3, 3}));
  expect_values(valid[0], {54, 63, 72, 99, 108, 117, 144, 153, 162});
}

TEST(NnConv, StridesAndAsymmetricPadding) {
  Tensor x = iota(DType::kF32, {1, 1, 7, 5}), w = filled(DType::kF32, {1, 1, 3, 3}, 1);
  auto y = run_op("Conv", {&x, &w}, attrs(kv("pads", ints({1, 0, 1, 0})), kv("strides", ints({2, 2}))));
  EXPECT_EQ(y[0].shape(), (Dims{1, 1, 4, 2}));
  expect_values(y[0], {21, 33, 99, 117, 189, 207, 171, 183});
}

TEST(NnConv, DepthwiseWithBias) {
  Tensor x = f32({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = f32({2, 1, 2}, {1, 1, 1, -1});
  Tensor b = f32({2}, {10, 20});
  auto y = run_op("Conv", {&x, &w, &b}, attrs(kv("group", int64_t(2))));
  EXPECT_EQ(y[0].shape(), (Dims{1, 2, 2}));
  expect_values(y[0], {13, 15, 19, 19});
}

TEST(NnConv, Dilated1dAnd3d) {
  Tensor x = iota(DType::kF32, {1, 1, 7}), w = f32({1, 1, 2}, {1, 2});
  expect_values(run_op("Conv", {&x, &w}, attrs(kv("dilations", ints({3}))))[0], {6, 9, 12, 15});
  Tensor x3 = filled(DType::kF64, {1, 1, 3, 3, 3}, 1), w3 = filled(DType::kF64, {1, 1, 2, 2, 2}, 1);
  auto y = run_op("Conv", {&x3, &w3});
  EXPECT_EQ(y[0].type_str(), "f64[1, 1, 2, 2, 2]");
  expect_values(y[0], std::vector<double>(8, 8.0));
}

TEST(NnConv, SameLowerPutsTheExtraPadFirst) {
  // in 4, kernel 2, stride 1: one pad in total, SAME_LOWER puts it at the start.
  Tensor x = f32({1, 1, 4}, {1, 2, 3, 4}), w = f32({1, 1, 2}, {1, 10});
  expect_values(run_op("Conv", {&x, &w}, attrs(kv("auto_pad", std::string("SAME_LOWER"))))[0],
                {10, 21, 32, 43});
  expect_values(run_op("Conv", {&x, &w}, attrs(kv("auto_pad", std::string("SAME_UPPER"))))[0],
                {21, 32, 43, 4});
}

TEST(NnConv, InferWithSymbolicAndUnknownDims) {
  TensorType x = TensorType::of_rank(DType::kF32, 4);
  x.dims = {Dim::unknown("N"), Dim::known(3), Dim::unknown(), Dim::known(32)};
  auto out = infer_types("Conv", {x, TensorType(DType::kF32, {8, 3, 3, 3})},
                         attrs(kv("auto_pad", std::string("SAME_UPPER")), kv("strides", ints({2, 2}))));
  EXPECT_EQ(out[0].str(), "f32[N, 8, ?, 16]");
  auto unranked =
      infer_types("Conv", {TensorType::unknown_rank(DType::kF32), TensorType(DType::kF32, {8, 3, 3, 3})});
  EXPECT_EQ(unranked[0].str(), "f32[?, 8, ?, ?]");
}

TEST(NnConv, UserErrors) {
  Tensor x = filled(DType::kF32, {1, 4, 5, 5}, 1), w = filled(DType::kF32, {2, 3, 3, 3}, 1);
  expect_user_error([&] { OneNode("Conv", {&x, &w}); }, {"node_under_test", "4 channels", "3 x group 1"});
  Tensor w4 = filled(DType::kF32, {3, 2, 3, 3}, 1);
  expect_user_error(
      [&] {
        OneNode("Conv", {&x, &w4}, attrs(kv("group", int64_t(2))));
      },
      {"not divisible by group 2"});
  Tensor w1 = filled(DType::kF32, {2, 4, 3, 3}, 1), bias = filled(DType::kF32, {3}, 0);
  expect_user_error([&] { OneNode("Conv", {&x, &w1, &bias}); }, {"bias has 3 entries, expected 2"});
  expect_user_error(
      [&] {
        OneNode("Conv", {&x, &w1}, attrs(kv("kernel_shape", ints({3, 2}))));
      },
      {"kernel_shape", "does not match"});
  expect_user_error(
      [&] {
        OneNode("Conv", {&x, &w1}, attrs(kv("auto_pad", std::string("SAME"))));
      },
      {"auto_pad must be", "'SAME'"});
  expect_user_error(
      [&] {
        OneNode("Conv", {&x, &w1}, attrs(kv("strides", ints({1, 0}))));
      },
      {"'strides' must be positive"});
  expect_user_error(
      [&] {
        OneNode("Conv", {&x, &w1}, attrs(kv("pads", ints({1, 1}))));
      },
      {"'pads' has 2 values, expected 4"});
  Tensor small = filled(DType::kF32, {1, 4, 2, 2}, 1);
  expect_user_error([&] { OneNode("Conv", {&small, &w1}); }, {"larger than the padded input"});
  // int32 is the integer products' (ConvInteger's, QLinearConv's); other integers are refused.
  Tensor xi = filled(DType::kI64, {1, 4, 5, 5}, 1), wi = filled(DType::kI64, {2, 4, 3, 3}, 1);
  expect_user_error([&] { OneNode("Conv", {&xi, &wi}); }, {"node_under_test", "float or int32 input"});
}

TEST(NnConv, Flops) {
  Tensor x(DType::kF32, {1, 3, 8, 8}), w(DType::kF32, {4, 3, 3, 3}), b(DType::kF32, {4});
  OneNode conv("Conv", {&x, &w, &b}, attrs(kv("pads", ints({1, 1, 1, 1}))));
  const auto* schema = graph::OpRegistry::global().find("Conv");
  // 256 outputs x 27 taps x 2, plus one bias add per output.
  EXPECT_EQ(schema->flops(*conv.node), 2 * 256 * 27 + 256);
  EXPECT_EQ(schema->pattern, graph::OpPattern::kOutElemwiseFusable);
}

TEST(NnConvTranspose, StridesScatterTheKernel) {
  Tensor x = f32({1, 1, 3}, {1, 2, 3}), w = f32({1, 1, 2}, {1, 1});
  expect_values(run_op("ConvTranspose", {&x, &w})[0], {1, 3, 5, 3});
  auto strided = run_op("ConvTranspose", {&x, &w}, attrs(kv("strides", ints({2}))));
  expect_values(strided[0], {1, 1, 2, 2, 3, 3});
  // output_shape one longer than the full output: the extra end position gets only the bias.
  Tensor b = f32({1}, {0.5});
  auto longer =
      run_op("ConvTranspose", {&x, &w, &b}, attrs(kv("strides", ints({2})), kv("output_shape", ints({7}))));
  expect_values(longer[0], {1.5, 1.5, 2.5, 2.5, 3.5, 3.5, 0.5});
}

TEST(NnConvTranspose, ChannelsComeFromTheWeightTimesGroup) {
  auto out = infer_types("ConvTranspose",
                         {TensorType(DType::kF32, {1, 4, 3, 3}), TensorType(DType::kF32, {4, 3, 3, 3})},
                         attrs(kv("group", int64_t(2)), kv("strides", ints({2, 2}))));
  EXPECT_EQ(out[0].str(), "f32[1, 6, 7, 7]");
  expect_user_error(
      [] {
        infer_types("ConvTranspose",
                    {TensorType(DType::kF32, {1, 4, 3, 3}), TensorType(DType::kF32, {2, 3, 3, 3})});
      },
      {"node_under_test", "4 channels", "weight has 2"});
}

TEST(NnPool, MaxPoolCeilModeDropsAWindowStartingInPadding) {
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  auto y = run_op(
      "MaxPool", {&x},
      attrs(kv("kernel_shape", ints({1, 1})), kv("strides", ints({2, 2})), kv("ceil_mode", int64_t(1))));
  EXPECT_EQ(y[0].shape(), (Dims{1, 1, 1, 1}));
  expect_values(y[0], {1});
}

TEST(NnPool, MaxPoolIndicesInBothStorageOrders) {
  // Channel 0 is [[1, 5, 2], [8, 3, 7]]; the 2x2 windows take 8 at (1, 0) and 7 at (1, 2).
  Tensor x = f32({1, 2, 2, 3}, {1, 5, 2, 8, 3, 7, 0, 0, 0, 0, 0, 9});
  auto k = kv("kernel_shape", ints({2, 2}));
  auto row = run_op("MaxPool", {&x}, attrs(k), 2);
  expect_values(row[0], {8, 7, 0, 9});
  EXPECT_EQ(row[1].dtype(), DType::kI64);
  // Flat input positions; ties keep the first maximum (channel 1, window 0 -> 6).
  expect_values(row[1], {3, 5, 6, 11});
  auto col = run_op("MaxPool", {&x}, attrs(k, kv("storage_order", int64_t(1))), 2);
  expect_values(col[1], {1, 5, 6, 11});  // (h, w) -> h + w * H within the plane
}

TEST(NnPool, MaxPoolOnUint8) {
  Tensor x(DType::kU8, {1, 1, 1, 4});
  for (int i = 0; i < 4; ++i) x.set_i64(i, (i * 7) % 5 + 200);  // 200, 202, 204, 201
  auto y = run_op("MaxPool", {&x}, attrs(kv("kernel_shape", ints({1, 2})), kv("strides", ints({1, 2}))));
  EXPECT_EQ(y[0].dtype(), DType::kU8);
  expect_values(y[0], {202, 204});
}

TEST(NnPool, AveragePoolCountIncludePadAndCeil) {
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  auto base = attrs(kv("kernel_shape", ints({3, 3})), kv("strides", ints({3, 3})),
                    kv("pads", ints({1, 1, 1, 1})), kv("ceil_mode", int64_t(1)));
  graph::Attrs with_pad = base;
  with_pad.set("count_include_pad", int64_t(1));
  // ceil would give 2 windows per axis, but the second starts in the end padding.
  auto y = run_op("AveragePool", {&x}, with_pad);
  EXPECT_EQ(y[0].shape(), (Dims{1, 1, 1, 1}));
  expect_values(y[0], {10.0 / 9.0});
  expect_values(run_op("AveragePool", {&x}, base)[0], {2.5});
  Tensor x4 = f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  auto ceil = run_op(
      "AveragePool", {&x4},
      attrs(kv("kernel_shape", ints({3, 3})), kv("strides", ints({2, 2})), kv("ceil_mode", int64_t(1))));
  expect_values(ceil[0], {6, 7.5, 12, 13.5});
}

TEST(NnPool, GlobalPools) {
  Tensor x = iota(DType::kF32, {1, 2, 2, 2});
  auto avg = run_op("GlobalAveragePool", {&x});
  EXPECT_EQ(avg[0].shape(), (Dims{1, 2, 1, 1}));
  expect_values(avg[0], {1.5, 5.5});
  expect_values(run_op("GlobalMaxPool", {&x})[0], {3, 7});
}

TEST(NnPool, UserErrors) {
  Tensor x = filled(DType::kF32, {1, 1, 4, 4}, 1);
  expect_user_error([&] { OneNode("MaxPool", {&x}); },
                    {"node_under_test", "missing required attribute 'kernel_shape'"});
  expect_user_error([&] { OneNode("MaxPool", {&x}, attrs(kv("kernel_shape", ints({2})))); },
                    {"kernel_shape has 1 dimensions", "rank 3"});
  Tensor xi = filled(DType::kI32, {1, 1, 4, 4}, 1);
  expect_user_error(
      [&] {
        OneNode("MaxPool", {&xi}, attrs(kv("kernel_shape", ints({2, 2}))));
      },
      {"dtype i32"});
  Tensor xu = filled(DType::kU8, {1, 1, 4, 4}, 1);
  expect_user_error(
      [&] {
        OneNode("AveragePool", {&xu}, attrs(kv("kernel_shape", ints({2, 2}))));
      },
      {"dtype u8"});
}

TEST(NnGemm, AlphaBetaTransposesAndBroadcastBias) {
  Tensor at = f32({3, 2}, {1, 4, 2, 5, 3, 6});  // A = [[1, 2, 3], [4, 5, 6]] transposed
  Tensor bt = f32({2, 3}, {1, 3, 5, 2, 4, 6});  // B = [[1, 2], [3, 4], [5, 6]] transposed
  Tensor c = f32({2}, {1, -1});
  auto y =
      run_op("Gemm", {&at, &bt, &c},
             attrs(kv("transA", int64_t(1)), kv("transB", int64_t(1)), kv("alpha", 0.5), kv("beta", 2.0)));
  // A B = [[22, 28], [49, 64]].
  expect_values(y[0], {13, 12, 26.5, 30});
}

TEST(NnGemm, IntegerAndNoBias) {
  Tensor a = iota(DType::kI32, {2, 3}), b = iota(DType::kI32, {3, 2});
  auto y = run_op("Gemm", {&a, &b});
  EXPECT_EQ(y[0].dtype(), DType::kI32);
  expect_values(y[0], {10, 13, 28, 40});
}

TEST(NnGemm, UserErrors) {
  Tensor a(DType::kF32, {2, 3}), b(DType::kF32, {3, 2}), c(DType::kF32, {3}), b4(DType::kF32, {4, 2});
  expect_user_error(
      [&] {
        OneNode("Gemm", {&a, &b, &c});
      },
      {"node_under_test", "cannot be broadcast to [M, N]"});
  expect_user_error([&] { OneNode("Gemm", {&a, &b4}); }, {"inner dimensions differ", "3 for A and 4 for B"});
  Tensor a3(DType::kF32, {1, 2, 3});
  expect_user_error([&] { OneNode("Gemm", {&a3, &b}); }, {"A must be 2-D"});
}

TEST(NnMatMul, VectorsAndBatchBroadcast) {
  Tensor v = f32({3}, {1, 2, 3}), u = f32({3}, {4, 5, 6});
  auto dot = run_op("MatMul", {&v, &u});
  EXPECT_EQ(dot[0].type_str(), "f32[]");
  expect_values(dot[0], {32});
  Tensor a = iota(DType::kF32, {2, 1, 2, 3}), ones = filled(DType::kF32, {3, 3, 2}, 1);
  auto y = run_op("MatMul", {&a, &ones});
  EXPECT_EQ(y[0].shape(), (Dims{2, 3, 2, 2}));
  std::vector<double> want;
  for (double r : {3, 21})
    for (int j = 0; j < 3; ++j) want.insert(want.end(), {r, r, r + 9, r + 9});
  expect_values(y[0], want);
  Tensor b3 = iota(DType::kI64, {2, 4, 1}), v4 = filled(DType::kI64, {4}, 1);
  auto vm = run_op("MatMul", {&v4, &b3});
  EXPECT_EQ(vm[0].type_str(), "i64[2, 1]");
  expect_values(vm[0], {6, 22});
}

TEST(NnMatMul, InferAndErrors) {
  TensorType a = TensorType::of_rank(DType::kF32, 3);
  a.dims = {Dim::unknown("N"), Dim::known(128), Dim::known(64)};
  EXPECT_EQ(infer_types("MatMul", {a, TensorType(DType::kF32, {64, 32})})[0].str(), "f32[N, 128, 32]");
  Tensor x(DType::kF32, {2, 3}), y(DType::kF32, {4, 2}), z(DType::kF64, {3, 2}), s(DType::kF32, {});
  expect_user_error([&] { OneNode("MatMul", {&x, &y}); }, {"node_under_test", "inner dimensions differ"});
  expect_user_error([&] { OneNode("MatMul", {&x, &z}); }, {"input 1 has dtype f64"});
  expect_user_error([&] { OneNode("MatMul", {&x, &s}); }, {"must not be scalars"});
  Tensor b(DType::kF32, {3, 5});
  OneNode flops("MatMul", {&x, &b});
  EXPECT_EQ(graph::OpRegistry::global().find("MatMul")->flops(*flops.node), 2 * 2 * 5 * 3);
}

}  // namespace
}  // namespace tessel::nn_test
