// Compute definitions of the elementwise ops, checked by interpreting the
// lowered function on random inputs against the reference executor: unary
// math and activations, broadcasting binary ops, comparisons and logic,
// variadic ops, Where, Clip, Cast, Identity, Dropout; and the inlining of
// chains (one block for a whole chain, blocks only where duplication grows).
#include <limits>

#include "tests/unit/lower_elem_test_util.h"

namespace tessel::lower_elem_test {
namespace {

constexpr double kRel = 1e-6;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(LowerElemUnary, FloatMathMatchesReference) {
  Tensor x = random_tensor(DType::kF32, {2, 3, 4}, -3, 3);
  Tensor pos = random_tensor(DType::kF32, {2, 3, 4}, 0.05, 4);
  for (const char* op : {"Exp",       "Erf",         "Tanh",     "Sigmoid",  "Sin",
                         "Cos",       "Floor",       "Ceil",     "Neg",      "Abs",
                         "Sign",      "Relu",        "Softplus", "Softsign", "Mish",
                         "HardSwish", "Elu",         "Celu",     "Selu",     "ThresholdedRelu",
                         "LeakyRelu", "HardSigmoid", "Gelu"})
    check_op(op, {in(x)}, {}, kRel);
  for (const char* op : {"Log", "Sqrt", "Reciprocal"}) check_op(op, {in(pos)}, {}, kRel);
}

TEST(LowerElemUnary, TrigonometricAndHyperbolic) {
  Tensor x = random_tensor(DType::kF32, {2, 3, 4}, -3, 3);
  Tensor unit = random_tensor(DType::kF32, {2, 3, 4}, -0.99, 0.99);
  Tensor above_one = random_tensor(DType::kF32, {2, 3, 4}, 1.0, 9);
  for (const char* op : {"Tan", "Atan", "Sinh", "Cosh", "Asinh", "Swish"}) check_op(op, {in(x)}, {}, kRel);
  for (const char* op : {"Asin", "Acos", "Atanh"}) check_op(op, {in(unit)}, {}, kRel);
  check_op("Acosh", {in(above_one)}, {}, kRel);
  check_op("Swish", {in(x)}, attrs_of({{"alpha", 1.702}}), kRel);
}

TEST(LowerElemUnary, PredicatesOnSpecialValues) {
  Tensor x = values_of(DType::kF32, {6}, {-kInf, -1, 0, 2.5, kInf, kNaN});
  check_op("IsNaN", {in(x)}, {}, 0);
  check_op("IsInf", {in(x)}, {}, 0);
  check_op("IsInf", {in(x)}, attrs_of({{"detect_negative", int64_t(0)}}), 0);
  check_op("IsInf", {in(x)}, attrs_of({{"detect_positive", int64_t(0)}}), 0);
  check_op("IsInf", {in(values_of(DType::kF64, {3}, {kInf, 1, -kInf}))}, {}, 0);
}

TEST(LowerElemUnary, ShrinkOnFloatsAndIntegers) {
  Tensor x = values_of(DType::kF32, {7}, {-3, -1.5, -0.5, 0, 0.5, 1.5, 3});
  check_op("Shrink", {in(x)}, {}, 0);
  check_op("Shrink", {in(x)}, attrs_of({{"lambd", 1.5}, {"bias", 1.5}}), 0);
  check_op("Shrink", {in(values_of(DType::kI32, {5}, {-4, -2, 0, 2, 4}))},
           attrs_of({{"lambd", 2.0}, {"bias", 1.0}}), 0);
}

TEST(LowerElemUnary, AttributesAndApproximations) {
  Tensor x = random_tensor(DType::kF32, {3, 5}, -4, 4, 2);
  check_op("Gelu", {in(x)}, attrs_of({{"approximate", std::string("tanh")}}), kRel);
  check_op("LeakyRelu", {in(x)}, attrs_of({{"alpha", 0.3}}), kRel);
  check_op("HardSigmoid", {in(x)}, attrs_of({{"alpha", 0.25}, {"beta", 0.4}}), kRel);
  check_op("Elu", {in(x)}, attrs_of({{"alpha", 0.7}}), kRel);
  check_op("Celu", {in(x)}, attrs_of({{"alpha", 2.0}}), kRel);
  check_op("ThresholdedRelu", {in(x)}, attrs_of({{"alpha", 0.5}}), kRel);
  check_op("Selu", {in(x)}, attrs_of({{"alpha", 1.5}, {"gamma", 0.9}}), kRel);
}

TEST(LowerElemUnary, SoftplusKeepsPrecisionFarFromZero) {
  Tensor x = values_of(DType::kF32, {6}, {-30, -18, -5, 0, 20, 90});
  check_op("Softplus", {in(x)}, {}, kRel);
  check_op("Mish", {in(x)}, {}, kRel);
}

TEST(LowerElemUnary, RoundHalfToEvenAndSpecialValues) {
  Tensor x =
      values_of(DType::kF32, {12}, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -0.51, 1e9, kInf, -kInf, kNaN});
  for (const char* op : {"Round", "Floor", "Ceil", "Sign", "Abs", "Relu", "Neg"})
    check_op(op, {in(x)}, {}, 0);
}

TEST(LowerElemUnary, IntegerAndBoolDtypes) {
  Tensor i32 = random_tensor(DType::kI32, {4, 3}, -50, 50);
  Tensor i8 = values_of(DType::kI8, {5}, {-128, -1, 0, 7, 127});
  Tensor u8 = random_tensor(DType::kU8, {6}, 0, 255);
  for (const char* op : {"Neg", "Abs", "Sign", "Relu"}) {
    check_op(op, {in(i32)});
    check_op(op, {in(i8)});
  }
  for (const char* op : {"Abs", "Sign"}) check_op(op, {in(u8)});
  check_op("Not", {in(random_tensor(DType::kBool, {7}))});
}

TEST(LowerElemUnary, HalfPrecisionComputesInFloat) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF64}) {
    Tensor x = random_tensor(t, {2, 5}, -3, 3);
    for (const char* op : {"Exp", "Gelu", "HardSwish", "Sigmoid", "Relu", "Neg"})
      check_op(op, {in(x)}, {}, kRel);
  }
}

TEST(LowerElemBinary, ArithmeticBroadcasts) {
  Tensor a = random_tensor(DType::kF32, {2, 3, 4}, -3, 3, 3);
  Tensor b = random_tensor(DType::kF32, {3, 1}, 0.5, 3, 4);
  Tensor s = random_tensor(DType::kF32, {}, 0.5, 2, 5);
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    check_op(op, {in(a), in(b)}, {}, kRel);
    check_op(op, {in(b), in(a)}, {}, kRel);
    check_op(op, {in(s), in(a)}, {}, kRel);
  }
  check_op("Mod", {in(a), in(b)}, attrs_of({{"fmod", int64_t(1)}}), kRel);
  check_op("PRelu", {in(a), in(random_tensor(DType::kF32, {3, 1}, 0, 1, 6))}, {}, kRel);
  check_op("Add", {in(random_tensor(DType::kF16, {4, 1})), in(random_tensor(DType::kF16, {3}))}, {}, kRel);
}

TEST(LowerElemBinary, IntegerDivisionTruncatesAndWraps) {
  Tensor a = values_of(DType::kI32, {8}, {7, -7, 7, -7, INT32_MIN, INT32_MIN, 0, 5});
  Tensor b = values_of(DType::kI32, {8}, {2, 2, -2, -2, -1, 3, 9, -1});
  check_op("Div", {in(a), in(b)});
  check_op("Mod", {in(a), in(b)});
  check_op("Mod", {in(a), in(b)}, attrs_of({{"fmod", int64_t(1)}}));
  Tensor x8 = values_of(DType::kI8, {4}, {100, -100, 127, -128});
  Tensor y8 = values_of(DType::kI8, {4}, {100, 100, 1, -1});
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) check_op(op, {in(x8), in(y8)});
  Tensor u = values_of(DType::kU8, {4}, {200, 3, 255, 0});
  Tensor v = values_of(DType::kU8, {4}, {100, 7, 2, 1});
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Mod"}) check_op(op, {in(u), in(v)});
  check_op("PRelu", {in(values_of(DType::kI64, {3}, {-4, 0, 5})), in(values_of(DType::kI64, {1}, {3}))});
}

TEST(LowerElemBinary, PowOfEveryTypePair) {
  Tensor fb = random_tensor(DType::kF32, {2, 3}, 0.2, 3, 7);
  Tensor fe = random_tensor(DType::kF32, {3}, -2, 2, 8);
  Tensor ib = values_of(DType::kI64, {2, 3}, {2, -3, 0, 1, -1, 5});
  Tensor ie = values_of(DType::kI64, {3}, {3, 0, -2});
  check_op("Pow", {in(fb), in(fe)}, {}, kRel);
  check_op("Pow", {in(fb), in(values_of(DType::kI32, {3}, {2, -1, 3}))}, {}, kRel);
  check_op("Pow", {in(ib), in(ie)});
  check_op("Pow",
           {in(values_of(DType::kI32, {3}, {2, 3, 4})), in(values_of(DType::kF32, {3}, {0.5, 2, -1}))});
}

TEST(LowerElemBinary, ComparisonsAndLogicGiveBool) {
  Tensor a = random_tensor(DType::kI32, {3, 4}, -3, 3, 9);
  Tensor b = random_tensor(DType::kI32, {4}, -3, 3, 10);
  Tensor f = values_of(DType::kF32, {4}, {1, kNaN, -2, 0});
  for (const char* op : {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"}) {
    check_op(op, {in(a), in(b)});
    check_op(op, {in(f), in(values_of(DType::kF32, {1}, {0}))});
  }
  Tensor p = random_tensor(DType::kBool, {2, 3}, 0, 1, 11), q = random_tensor(DType::kBool, {3}, 0, 1, 12);
  for (const char* op : {"And", "Or", "Xor", "Equal"}) check_op(op, {in(p), in(q)});
}

TEST(LowerElemBinary, VariadicFoldsWithNaNPropagation) {
  Tensor a = values_of(DType::kF32, {2, 3}, {1, kNaN, 3, -4, 5, 0});
  Tensor b = values_of(DType::kF32, {3}, {2, 0, kNaN});
  Tensor c = random_tensor(DType::kF32, {2, 1}, -3, 3, 13);
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
    check_op(op, {in(a), in(b), in(c)}, {}, kRel);
    check_op(op, {in(c)}, {}, kRel);
  }
  Tensor i = random_tensor(DType::kI8, {2, 3}, -100, 100, 14),
         j = random_tensor(DType::kI8, {3}, -100, 100, 15);
  for (const char* op : {"Max", "Min", "Sum"}) check_op(op, {in(i), in(j)});
}

TEST(LowerElemSpecial, WhereBroadcastsAllThree) {
  Tensor c = random_tensor(DType::kBool, {2, 1, 4}, 0, 1, 16);
  check_op("Where",
           {in(c), in(random_tensor(DType::kF32, {3, 4})), in(random_tensor(DType::kF32, {2, 3, 1}))});
  check_op("Where",
           {in(c), in(random_tensor(DType::kI64, {1}, -9, 9)), in(random_tensor(DType::kI64, {4}, -9, 9))});
}

TEST(LowerElemSpecial, ClipBoundsOptionalAndOrdered) {
  Tensor x = values_of(DType::kF32, {6}, {-5, -1, 0, 1, 5, kNaN});
  Tensor lo = values_of(DType::kF32, {}, {-2}), hi = values_of(DType::kF32, {}, {2});
  check_op("Clip", {in(x), in(lo), in(hi)});
  check_op("Clip", {in(x), omitted(), in(hi)});
  check_op("Clip", {in(x), in(lo)});
  check_op("Clip", {in(x), in(hi), in(lo)});  // min > max: every element becomes max
  check_op("Clip", {in(x)});
  Tensor i8 = values_of(DType::kI8, {4}, {-128, -3, 4, 127});
  check_op("Clip",
           {in(i8), constant(values_of(DType::kI8, {}, {-5})), constant(values_of(DType::kI8, {}, {5}))});
  // Constants reach the lowering through the node only.
  check_op("Clip", {in(x), constant(lo), constant(hi)}, {}, 0, 1, false);
}

TEST(LowerElemSpecial, CastFollowsReferenceConversions) {
  Tensor f = values_of(DType::kF32, {9}, {2.7, -2.7, 0, -0.0, 300.5, -1.5, 1e20, kNaN, kInf});
  for (const char* to : {"i32", "i8", "u8", "i64", "bool", "f16", "bf16", "f64"})
    check_op("Cast", {in(f)}, attrs_of({{"to", std::string(to)}}));
  Tensor d = values_of(DType::kF64, {4}, {1.0 / 3, 65519.0, 1e-8, -2.0000001});
  for (const char* to : {"f16", "f32", "i32"}) check_op("Cast", {in(d)}, attrs_of({{"to", std::string(to)}}));
  Tensor b = random_tensor(DType::kBool, {5}, 0, 1, 17);
  for (const char* to : {"f32", "i8", "f16"}) check_op("Cast", {in(b)}, attrs_of({{"to", std::string(to)}}));
  Tensor i = values_of(DType::kI64, {4}, {-1, 256, 70000, 3});
  for (const char* to : {"u8", "i8", "f16", "f32", "bool"})
    check_op("Cast", {in(i)}, attrs_of({{"to", std::string(to)}}));
}

TEST(LowerElemSpecial, IdentityAndInferenceDropout) {
  Tensor x = random_tensor(DType::kF32, {3, 2}, -1, 1, 18);
  check_op("Identity", {in(x)});
  check_op("Identity", {in(random_tensor(DType::kBool, {4}))});
  check_op("Dropout", {in(x)});
  check_op("Dropout", {in(x), constant(values_of(DType::kF32, {}, {0.5}))}, {}, 0, 2);
  // A run-time training_mode could ask for real dropout at ratio 0.5: a check
  // stops such a run, naming the node; in inference mode it runs.
  Tensor off = values_of(DType::kBool, {}, {0}), on = values_of(DType::kBool, {}, {1});
  check_op("Dropout", {in(x), constant(values_of(DType::kF32, {}, {0.5})), in(off)}, {}, 0, 2);
  OneNode one("Dropout", {in(x), constant(values_of(DType::kF32, {}, {0.5})), in(on)}, {}, 2);
  Lowered l = lower_graph(one.g, one.inputs);
  try {
    tir::interpret(l.func, l.args);
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("n_Dropout"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("training-mode Dropout with a ratio other than 0 drops at random"),
              std::string::npos)
        << e.what();
  }
  // Training at ratio 0 passes everything, as inference does.
  check_op("Dropout", {in(x), in(values_of(DType::kF32, {}, {0})), in(on)}, {}, 0, 2);
}

// Transpose -> Reshape -> Add lowered into one context: the index maps inline
// into the only block, the output copy.
TEST(LowerElemChain, InjectiveChainBecomesOneBlock) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {2, 3, 4}));
  graph::Value* y = g.add_input("y", graph::TensorType(DType::kF32, {4}));
  graph::Value* shape = g.add_constant("shape", ints({6, 4}));
  graph::Node* t =
      g.add_node("Transpose", "t", {x}, {"xt"}, attrs_of({{"perm", std::vector<int64_t>{1, 0, 2}}}));
  graph::infer_node(*t);
  graph::Node* r = g.add_node("Reshape", "r", {t->outputs[0], shape}, {"xr"});
  graph::infer_node(*r);
  graph::Node* a = g.add_node("Add", "a", {r->outputs[0], y}, {"z"});
  graph::infer_node(*a);
  g.set_outputs({a->outputs[0]});
  std::vector<Tensor> inputs{random_tensor(DType::kF32, {2, 3, 4}),
                             random_tensor(DType::kF32, {4}, -1, 1, 2)};
  Lowered l = lower_graph(g, inputs);
  EXPECT_EQ(count_blocks(l.func), 1);
  EXPECT_TRUE(l.func->body.as<tir::BlockNode>()->alloc_buffers.empty()) << "no intermediate buffer";
  check_graph(g, inputs, 0, "chain");
}

// A chain whose every op reads its input several times (Gelu with tanh) is
// materialised where the inlined expression would grow past the limits.
TEST(LowerElemChain, RepeatedReadsMaterialiseInsteadOfExploding) {
  graph::Graph g;
  graph::Value* v = g.add_input("x", graph::TensorType(DType::kF32, {8}));
  for (int i = 0; i < 12; ++i) {
    graph::Node* n = g.add_node("Gelu", "gelu" + std::to_string(i), {v}, {"g" + std::to_string(i)},
                                attrs_of({{"approximate", std::string("tanh")}}));
    graph::infer_node(*n);
    v = n->outputs[0];
  }
  g.set_outputs({v});
  std::vector<Tensor> inputs{random_tensor(DType::kF32, {8}, -2, 2, 3)};
  Lowered l = lower_graph(g, inputs);
  EXPECT_GT(count_blocks(l.func), 1);
  EXPECT_LT(count_blocks(l.func), 13);
  check_graph(g, inputs, 1e-5, "gelu chain");
}

}  // namespace
}  // namespace tessel::lower_elem_test
