// Elementwise ops: shape functions and their user errors, and reference
// kernel numbers checked against values worked out by hand (or numpy).
#include <cmath>
#include <limits>

#include "tests/unit/elementwise_test_util.h"

namespace tessel::elementwise_test {
namespace {

using graph::Dim;
using graph::TensorType;

TEST(ElementwiseInfer, BroadcastShapes) {
  Tensor a(DType::kF32, {3, 1, 5}), b(DType::kF32, {4, 1});
  OneNode one("Add", {&a, &b});
  EXPECT_EQ(one.node->outputs[0]->type.str(), "f32[3, 4, 5]");
}

TEST(ElementwiseInfer, UnknownDimsAndRank) {
  graph::Graph g;
  TensorType sym = TensorType::of_rank(DType::kF32, 2);
  sym.dims[0] = Dim::unknown("N");
  sym.dims[1] = Dim::known(1);
  graph::Value* a = g.add_input("a", sym);
  graph::Value* b = g.add_input("b", TensorType(DType::kF32, {7}));
  graph::Node* n = g.add_node("Mul", "mul", {a, b}, {"y"});
  graph::infer_node(*n);
  EXPECT_EQ(n->outputs[0]->type.str(), "f32[N, 7]");
  graph::Value* c = g.add_input("c", TensorType::unknown_rank(DType::kF32));
  graph::Node* m = g.add_node("Max", "max", {a, b, c}, {"z"});
  graph::infer_node(*m);
  EXPECT_FALSE(m->outputs[0]->type.rank_known);
}

// An omitted input in the middle of a variadic op (an empty name in ONNX) is
// a user error, not a null input for the kernels (found by the fuzzer).
TEST(ElementwiseInfer, VariadicInputsCannotBeOmitted) {
  graph::Graph g;
  graph::Value* a = g.add_input("a", TensorType(DType::kF32, {3}));
  graph::Node* n = g.add_node("Max", "max", {a, nullptr, a}, {"y"});
  expect_user_error([&] { graph::infer_node(*n); }, {"max", "input 1 is missing"});
}

TEST(ElementwiseInfer, ComparisonGivesBool) {
  Tensor a(DType::kI8, {2, 3}), b(DType::kI8, {3});
  OneNode one("Greater", {&a, &b});
  EXPECT_EQ(one.node->outputs[0]->type.str(), "bool[2, 3]");
}

TEST(ElementwiseInfer, PowKeepsBaseType) {
  Tensor a(DType::kI64, {3}), b(DType::kF32, {3});
  OneNode one("Pow", {&a, &b});
  EXPECT_EQ(one.node->outputs[0]->type.str(), "i64[3]");
}

TEST(ElementwiseInfer, Errors) {
  Tensor f(DType::kF32, {3, 4}), g(DType::kF32, {5}), i(DType::kI32, {3, 4}), b(DType::kBool, {3, 4});
  expect_user_error([&] { OneNode("Add", {&f, &g}); }, {"n_Add", "broadcast", "4 vs 5"});
  expect_user_error([&] { OneNode("Sub", {&f, &i}); }, {"n_Sub", "input 1 has dtype i32, expected f32"});
  expect_user_error([&] { OneNode("Exp", {&i}); }, {"n_Exp", "floating-point"});
  expect_user_error([&] { OneNode("Add", {&b, &b}); }, {"n_Add", "non-bool"});
  expect_user_error([&] { OneNode("And", {&f, &f}); }, {"n_And", "bool"});
  expect_user_error([&] { OneNode("Where", {&f, &f, &f}); }, {"n_Where", "condition"});
  expect_user_error([&] { OneNode("Mod", {&f, &f}); }, {"n_Mod", "fmod=1"});
  expect_user_error([&] { OneNode("Add", {&f}); }, {"n_Add", "expects 2 inputs"});
  graph::Attrs bad;
  bad.set("approximate", std::string("fast"));
  expect_user_error([&] { OneNode("Gelu", {&f}, bad); }, {"n_Gelu", "approximate"});
}

TEST(ElementwiseInfer, CastAttribute) {
  Tensor f(DType::kF32, {2});
  expect_user_error([&] { OneNode("Cast", {&f}); }, {"n_Cast", "missing required attribute 'to'"});
  graph::Attrs to;
  to.set("to", std::string("f8"));
  expect_user_error([&] { OneNode("Cast", {&f}, to); }, {"n_Cast", "'f8'"});
  to.set("to", std::string("f16"));
  EXPECT_EQ(OneNode("Cast", {&f}, to).node->outputs[0]->type.str(), "f16[2]");
}

TEST(ElementwiseInfer, ClipBoundsMustBeScalars) {
  Tensor x(DType::kF32, {4}), lo(DType::kF32, {2});
  expect_user_error([&] { OneNode("Clip", {&x, &lo}); }, {"n_Clip", "min must be a scalar"});
}

// Training mode drops at random unless its ratio is 0: the default ratio
// (0.5) is refused, a constant 0 passes everything.
TEST(ElementwiseInfer, DropoutTrainingModeRefusedUnlessItsRatioIsZero) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", TensorType(DType::kF32, {3}));
  Tensor on(DType::kBool, {});
  on.set_i64(0, 1);
  graph::Value* mode = g.add_constant("mode", on);
  graph::Node* n = g.add_node("Dropout", "drop", {x, nullptr, mode}, {"y", "mask"});
  expect_user_error([&] { graph::infer_node(*n); }, {"drop", "training-mode Dropout drops at random"});
  graph::Value* zero = g.add_constant("zero", Tensor(DType::kF32, {}));
  graph::Node* kept = g.add_node("Dropout", "keep", {x, zero, mode}, {"y2", "mask2"});
  graph::infer_node(*kept);
  EXPECT_EQ(kept->outputs[1]->type.dtype, DType::kBool);
}

TEST(ElementwiseFlops, OnePerElement) {
  Tensor a(DType::kF32, {3, 4}), b(DType::kF32, {4});
  OneNode one("Add", {&a, &b});
  const graph::OpSchema* s = graph::OpRegistry::global().find("Add");
  ASSERT_TRUE(s && s->flops);
  EXPECT_EQ(s->flops(*one.node), 12);
  OneNode max3("Max", {&a, &b, &b});
  EXPECT_EQ(graph::OpRegistry::global().find("Max")->flops(*max3.node), 24);
}

TEST(ElementwiseKernel, AddBroadcast) {
  Tensor a = f32({2, 1}, {1, 2}), b = f32({3}, {10, 20, 30});
  EXPECT_EQ(values(run_op("Add", {&a, &b})[0]), (std::vector<double>{11, 21, 31, 12, 22, 32}));
}

TEST(ElementwiseKernel, IntegerWrapAround) {
  Tensor a = make(DType::kI8, {2}, {100, -128}), b = make(DType::kI8, {2}, {100, 1});
  EXPECT_EQ(values(run_op("Add", {&a, &b})[0]), (std::vector<double>{-56, -127}));
  Tensor c = make(DType::kU8, {2}, {3, 200}), d = make(DType::kU8, {2}, {5, 2});
  EXPECT_EQ(values(run_op("Sub", {&c, &d})[0]), (std::vector<double>{254, 198}));
  EXPECT_EQ(values(run_op("Mul", {&c, &d})[0]), (std::vector<double>{15, 144}));  // 400 mod 256
  Tensor big = i32({1}, {2147483647}), one = i32({1}, {1});
  EXPECT_EQ(values(run_op("Add", {&big, &one})[0]), (std::vector<double>{-2147483648.0}));
}

TEST(ElementwiseKernel, IntegerDivTruncates) {
  Tensor a = i32({5}, {-3, 3, -3, 3, -2147483648.0}), b = i32({5}, {2, 2, -2, -2, -1});
  EXPECT_EQ(values(run_op("Div", {&a, &b})[0]), (std::vector<double>{-1, 1, 1, -1, -2147483648.0}));
  Tensor zero = i32({5}, {1, 1, 0, 1, 1});
  expect_user_error([&] { run_op("Div", {&a, &zero}); }, {"n_Div", "division by zero"});
  Tensor fa = f32({1}, {1}), fz = f32({1}, {0});
  EXPECT_TRUE(std::isinf(run_op("Div", {&fa, &fz})[0].get_f64(0)));
}

TEST(ElementwiseKernel, Mod) {
  Tensor a = i32({4}, {-7, 7, -7, 7}), b = i32({4}, {3, -3, -3, 3});
  EXPECT_EQ(values(run_op("Mod", {&a, &b})[0]), (std::vector<double>{2, -2, -1, 1}));
  graph::Attrs fmod;
  fmod.set("fmod", int64_t(1));
  EXPECT_EQ(values(run_op("Mod", {&a, &b}, fmod)[0]), (std::vector<double>{-1, 1, -1, 1}));
  Tensor fa = f32({1}, {-7.5}), fb = f32({1}, {2});
  EXPECT_EQ(values(run_op("Mod", {&fa, &fb}, fmod)[0]), (std::vector<double>{-1.5}));
}

TEST(ElementwiseKernel, PowMixedTypes) {
  Tensor base = i32({3}, {1, 2, 3}), e = f32({3}, {4, 5, 0.5});
  EXPECT_EQ(values(run_op("Pow", {&base, &e})[0]), (std::vector<double>{1, 32, 1}));  // 3^0.5 truncates
  Tensor ie = make(DType::kI64, {3}, {10, 3, -1});
  EXPECT_EQ(values(run_op("Pow", {&base, &ie})[0]), (std::vector<double>{1, 8, 0}));
  Tensor fb = f32({2}, {2, 9}), half = make(DType::kI64, {}, {2});
  EXPECT_EQ(values(run_op("Pow", {&fb, &half})[0]), (std::vector<double>{4, 81}));
}

TEST(ElementwiseKernel, VariadicMaxMinSumMean) {
  Tensor a = f32({3}, {1, 5, 3}), b = f32({1}, {4}), c = f32({2, 1}, {0, 10});
  EXPECT_EQ(values(run_op("Max", {&a, &b, &c})[0]), (std::vector<double>{4, 5, 4, 10, 10, 10}));
  EXPECT_EQ(values(run_op("Min", {&a, &b})[0]), (std::vector<double>{1, 4, 3}));
  EXPECT_EQ(values(run_op("Min", {&a})[0]), (std::vector<double>{1, 5, 3}));
  EXPECT_EQ(values(run_op("Sum", {&a, &b, &b})[0]), (std::vector<double>{9, 13, 11}));
  EXPECT_EQ(values(run_op("Mean", {&a, &b})[0]), (std::vector<double>{2.5, 4.5, 3.5}));
  Tensor nan = f32({1}, {std::numeric_limits<double>::quiet_NaN()});
  EXPECT_TRUE(std::isnan(run_op("Max", {&a, &nan})[0].get_f64(1)));
}

TEST(ElementwiseKernel, ComparisonsAndLogic) {
  Tensor a = i32({3}, {1, 2, 3}), b = i32({1}, {2});
  EXPECT_EQ(values(run_op("Equal", {&a, &b})[0]), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(values(run_op("Greater", {&a, &b})[0]), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(values(run_op("LessOrEqual", {&a, &b})[0]), (std::vector<double>{1, 1, 0}));
  Tensor p = make(DType::kBool, {4}, {0, 0, 1, 1}), q = make(DType::kBool, {4}, {0, 1, 0, 1});
  EXPECT_EQ(values(run_op("Xor", {&p, &q})[0]), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(values(run_op("And", {&p, &q})[0]), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(values(run_op("Not", {&p})[0]), (std::vector<double>{1, 1, 0, 0}));
}

TEST(ElementwiseKernel, WhereBroadcasts) {
  Tensor c = make(DType::kBool, {2, 1}, {1, 0}), x = make(DType::kI64, {3}, {1, 2, 3}),
         y = make(DType::kI64, {}, {-1});
  EXPECT_EQ(values(run_op("Where", {&c, &x, &y})[0]), (std::vector<double>{1, 2, 3, -1, -1, -1}));
}

TEST(ElementwiseKernel, Clip) {
  Tensor x = f32({4}, {-2, 0, 1.5, 6}), lo = f32({}, {-1}), hi = f32({}, {1});
  EXPECT_EQ(values(run_op("Clip", {&x, &lo, &hi})[0]), (std::vector<double>{-1, 0, 1, 1}));
  EXPECT_EQ(values(run_op("Clip", {&x, nullptr, &hi})[0]), (std::vector<double>{-2, 0, 1, 1}));
  EXPECT_EQ(values(run_op("Clip", {&x, &hi, &lo})[0]),
            (std::vector<double>{-1, -1, -1, -1}));  // min > max: max
  Tensor xi = make(DType::kI8, {3}, {-100, 5, 100}), hi8 = make(DType::kI8, {}, {10});
  EXPECT_EQ(values(run_op("Clip", {&xi, nullptr, &hi8})[0]), (std::vector<double>{-100, 5, 10}));
}

TEST(ElementwiseKernel, CastConversions) {
  auto cast = [](const Tensor& t, const char* to) {
    graph::Attrs a;
    a.set("to", std::string(to));
    return run_op("Cast", {&t}, a)[0];
  };
  Tensor x = f32({5}, {1.7, -1.7, 65504, 1.0 / 3, std::numeric_limits<double>::quiet_NaN()});
  Tensor as_int = cast(x, "i32");
  EXPECT_EQ(as_int.get_i64(0), 1);
  EXPECT_EQ(as_int.get_i64(1), -1);  // toward zero
  Tensor as_f16 = cast(x, "f16");
  EXPECT_EQ(as_f16.dtype(), DType::kF16);
  EXPECT_EQ(as_f16.data<Half>()[2].bits, 0x7bff);                            // 65504, the largest half
  EXPECT_EQ(as_f16.data<Half>()[3].bits, 0x3555);                            // 1/3 rounded to nearest half
  EXPECT_EQ(cast(x, "bf16").data<BFloat16>()[0].bits, 0x3fda);               // 1.7 -> 1.703125
  EXPECT_EQ(values(cast(x, "bool")), (std::vector<double>{1, 1, 1, 1, 1}));  // NaN is true
  Tensor big = make(DType::kI64, {2}, {300, -1});
  EXPECT_EQ(values(cast(big, "u8")), (std::vector<double>{44, 255}));  // wraps
  EXPECT_NEAR(cast(as_f16, "f64").get_f64(3), 0.333251953125, 0);
}

TEST(ElementwiseKernel, UnaryMath) {
  Tensor x = f32({4}, {-2, -0.5, 0, 3});
  EXPECT_EQ(values(run_op("Relu", {&x})[0]), (std::vector<double>{0, 0, 0, 3}));
  EXPECT_EQ(values(run_op("Neg", {&x})[0]), (std::vector<double>{2, 0.5, 0, -3}));
  EXPECT_EQ(values(run_op("Sign", {&x})[0]), (std::vector<double>{-1, -1, 0, 1}));
  EXPECT_EQ(values(run_op("Abs", {&x})[0]), (std::vector<double>{2, 0.5, 0, 3}));
  EXPECT_EQ(values(run_op("HardSwish", {&x})[0])[3], 3);
  EXPECT_NEAR(values(run_op("HardSwish", {&x})[0])[1], -0.5 * (0.5 - 0.5 / 6), 1e-7);
  graph::Attrs alpha;
  alpha.set("alpha", 0.1);
  EXPECT_NEAR(values(run_op("LeakyRelu", {&x}, alpha)[0])[0], -0.2, 1e-7);
  EXPECT_NEAR(values(run_op("LeakyRelu", {&x})[0])[0], -0.02, 1e-7);  // default alpha 0.01
  EXPECT_NEAR(values(run_op("HardSigmoid", {&x})[0])[1], 0.4, 1e-7);  // 0.2 * -0.5 + 0.5
  EXPECT_NEAR(values(run_op("Sigmoid", {&x})[0])[0], 1 / (1 + std::exp(2.0)), 1e-7);
  EXPECT_NEAR(values(run_op("Gelu", {&x})[0])[3], 2.9959502, 1e-6);  // 3 * Phi(3)
  graph::Attrs tanh_approx;
  tanh_approx.set("approximate", std::string("tanh"));
  EXPECT_NEAR(values(run_op("Gelu", {&x}, tanh_approx)[0])[0], -0.04540231, 1e-6);
  Tensor big = f32({1}, {100});
  EXPECT_EQ(values(run_op("Softplus", {&big})[0])[0], 100);  // no overflow to inf
  Tensor ints = make(DType::kI8, {3}, {-128, -3, 4});
  EXPECT_EQ(values(run_op("Abs", {&ints})[0]), (std::vector<double>{-128, 3, 4}));  // wraps like numpy
  expect_user_error([&] { run_op("Neg", {&big}, {}, 2); }, {"n_Neg", "outputs"});
}

TEST(ElementwiseKernel, DropoutIsIdentityWithTrueMask) {
  Tensor x = f32({3}, {1, -2, 3}), ratio = f32({}, {0.5});
  std::vector<Tensor> out = run_op("Dropout", {&x, &ratio}, {}, 2);
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, -2, 3}));
  EXPECT_EQ(out[1].dtype(), DType::kBool);
  EXPECT_EQ(values(out[1]), (std::vector<double>{1, 1, 1}));
  Tensor on = make(DType::kBool, {}, {1});
  OneNode one("Dropout", {&x, nullptr, &on});  // a non-constant graph input: checked at run time
  expect_user_error([&] { reference::evaluate_node(*one.node, {&x, nullptr, &on}); }, {"training-mode"});
}

TEST(ElementwiseKernel, ExponentialActivations) {
  Tensor x = f32({4}, {-2, -0.5, 0, 3});
  auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
  };
  near(values(run_op("Elu", {&x})[0]), {-0.8646647, -0.3934693, 0, 3});  // exp(x) - 1 below 0
  near(values(run_op("Selu", {&x})[0]), {-1.5201665, -0.6917582, 0, 3.1521031});
  graph::Attrs two;
  two.set("alpha", 2.0);
  near(values(run_op("Elu", {&x}, two)[0]), {-1.7293294, -0.7869387, 0, 3});
  near(values(run_op("Celu", {&x}, two)[0]), {-1.2642411, -0.4423984, 0, 3});  // 2 * (exp(x / 2) - 1)
  near(values(run_op("Mish", {&x})[0]), {-0.2525015, -0.2207438, 0, 2.9865350});
  Tensor d = make(DType::kF64, {2}, {-40, 40});  // f64 stays f64; no overflow either way
  near(values(run_op("Mish", {&d})[0]), {-40 * std::tanh(std::log1p(std::exp(-40.0))), 40});
}

TEST(ElementwiseKernel, SoftsignAndThresholdedRelu) {
  Tensor x = f32({4}, {-2, -0.5, 0, 3});
  std::vector<double> soft = values(run_op("Softsign", {&x})[0]);
  EXPECT_NEAR(soft[0], -2.0 / 3, 1e-7);
  EXPECT_NEAR(soft[1], -1.0 / 3, 1e-7);
  EXPECT_EQ(soft[3], 0.75);
  EXPECT_EQ(values(run_op("ThresholdedRelu", {&x})[0]), (std::vector<double>{0, 0, 0, 3}));  // alpha 1
  graph::Attrs minus_one;
  minus_one.set("alpha", -1.0);
  EXPECT_EQ(values(run_op("ThresholdedRelu", {&x}, minus_one)[0]), (std::vector<double>{0, -0.5, 0, 3}));
}

TEST(ElementwiseKernel, PReluBroadcastsSlopeToX) {
  Tensor x = f32({2, 3}, {-1, 2, -3, 4, -5, 6}), slope = f32({3}, {0.5, 0.25, 2});
  EXPECT_EQ(values(run_op("PRelu", {&x, &slope})[0]), (std::vector<double>{-0.5, 2, -6, 4, -1.25, 6}));
  Tensor xi = i32({2}, {-4, 5}), si = i32({1}, {3});
  EXPECT_EQ(values(run_op("PRelu", {&xi, &si})[0]), (std::vector<double>{-12, 5}));
}

TEST(ElementwiseInfer, PReluShapesAndErrors) {
  graph::Graph g;
  TensorType sym = TensorType::of_rank(DType::kF32, 2);
  sym.dims[1] = Dim::known(3);
  graph::Node* n = g.add_node("PRelu", "prelu",
                              {g.add_input("x", sym), g.add_input("s", TensorType(DType::kF32, {3}))}, {"y"});
  graph::infer_node(*n);
  EXPECT_EQ(n->outputs[0]->type.str(), "f32[?, 3]");
  Tensor x(DType::kF32, {2, 3}), s4(DType::kF32, {4}), s3d(DType::kF32, {1, 2, 3}), x13(DType::kF32, {1, 3}),
      s23(DType::kF32, {2, 3}), si(DType::kI32, {3}), b(DType::kBool, {3});
  expect_user_error([&] { OneNode("PRelu", {&x, &s4}); }, {"n_PRelu", "does not broadcast to x"});
  expect_user_error([&] { OneNode("PRelu", {&x, &s3d}); }, {"n_PRelu", "higher rank"});
  expect_user_error(
      [&] {
        OneNode("PRelu", {&x13, &s23});
      },
      {"n_PRelu", "does not broadcast"});  // one way only
  expect_user_error([&] { OneNode("PRelu", {&x, &si}); }, {"n_PRelu", "input 1 has dtype i32"});
  expect_user_error([&] { OneNode("PRelu", {&b, &b}); }, {"n_PRelu", "non-bool"});
}

TEST(ElementwiseInfer, ActivationAttributeErrors) {
  Tensor f(DType::kF32, {2}), i(DType::kI32, {2});
  graph::Attrs zero;
  zero.set("alpha", 0.0);
  expect_user_error([&] { OneNode("Celu", {&f}, zero); }, {"n_Celu", "'alpha' must be non-zero"});
  for (const char* op : {"Elu", "Selu", "Celu", "Mish", "Softsign", "ThresholdedRelu"})
    expect_user_error([&] { OneNode(op, {&i}); }, {std::string("n_") + op, "floating-point"});
  graph::Attrs wrong_type;
  wrong_type.set("alpha", std::string("big"));
  expect_user_error([&] { OneNode("Elu", {&f}, wrong_type); }, {"n_Elu", "alpha"});
  OneNode selu("Selu", {&f});
  EXPECT_EQ(graph::OpRegistry::global().find("Selu")->flops(*selu.node), 2);
}

}  // namespace
}  // namespace tessel::elementwise_test
