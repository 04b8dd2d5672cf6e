// Tests of the tensor IR simplifier: constant folding per dtype, the affine
// canonical form, floordiv/floormod under bounds, decisions by bounds, boolean
// folding, and statement simplification (loops, ifs, blocks).
#include <gtest/gtest.h>

#include <cmath>

#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "ir/tensor/simplify.h"
#include "ir/tensor/simplify_internal.h"
#include "ir/tensor/structural.h"
#include "tests/unit/tir_test_util.h"

namespace tessel::tir {
namespace {

using simplify_detail::expr_equal;

// An i64 constant: comparisons have no integer-literal overloads.
Expr imm(int64_t v) {
  return int_imm(v);
}

testing::AssertionResult simplifies_to(const Analyzer& analyzer, const Expr& before, const Expr& expected) {
  Expr got = analyzer.simplify(before);
  if (expr_equal(got, expected)) return testing::AssertionSuccess();
  return testing::AssertionFailure() << to_string(before) << " simplified to " << to_string(got)
                                     << ", expected " << to_string(expected);
}
testing::AssertionResult simplifies_to(const Expr& before, const Expr& expected) {
  return simplifies_to(Analyzer(), before, expected);
}
// The expression comes back unchanged (the very same node).
testing::AssertionResult stays(const Analyzer& analyzer, const Expr& e) {
  Expr got = analyzer.simplify(e);
  if (got.same_as(e)) return testing::AssertionSuccess();
  return testing::AssertionFailure() << to_string(e) << " became " << to_string(got);
}

TEST(TirSimplifyFold, IntegersWrapToTheirWidth) {
  EXPECT_TRUE(simplifies_to(int_imm(100, DType::kI8) + int_imm(100, DType::kI8), int_imm(-56, DType::kI8)));
  EXPECT_TRUE(simplifies_to(int_imm(200, DType::kU8) + int_imm(100, DType::kU8), int_imm(44, DType::kU8)));
  EXPECT_TRUE(simplifies_to(int_imm(0, DType::kU8) - int_imm(1, DType::kU8), int_imm(255, DType::kU8)));
  EXPECT_TRUE(simplifies_to(int_imm(INT32_MAX, DType::kI32) + int_imm(1, DType::kI32),
                            int_imm(INT32_MIN, DType::kI32)));
  EXPECT_TRUE(simplifies_to(int_imm(INT64_MAX) * int_imm(2), int_imm(-2)));
  EXPECT_TRUE(simplifies_to(int_imm(3) - int_imm(5), int_imm(-2)));
}

TEST(TirSimplifyFold, DivisionRoundsAsEachKindSays) {
  EXPECT_TRUE(simplifies_to(floordiv(int_imm(-7), 2), int_imm(-4)));
  EXPECT_TRUE(simplifies_to(floormod(int_imm(-7), 2), int_imm(1)));
  EXPECT_TRUE(simplifies_to(floordiv(int_imm(7), -2), int_imm(-4)));
  EXPECT_TRUE(simplifies_to(floormod(int_imm(7), -2), int_imm(-1)));
  EXPECT_TRUE(simplifies_to(div(int_imm(-7), int_imm(2)), int_imm(-3)));  // truncating, as C
  EXPECT_TRUE(
      simplifies_to(div(int_imm(-128, DType::kI8), int_imm(-1, DType::kI8)), int_imm(-128, DType::kI8)));
}

TEST(TirSimplifyFold, DivisionByZeroIsLeftForRunTime) {
  Analyzer none;
  EXPECT_TRUE(stays(none, floordiv(int_imm(7), 0)));
  EXPECT_TRUE(stays(none, floormod(int_imm(7), 0)));
  EXPECT_TRUE(stays(none, div(int_imm(7), int_imm(0))));
  EXPECT_TRUE(stays(none, div(float_imm(1.0), float_imm(0.0))));
}

TEST(TirSimplifyFold, FloatsComputeInTheirOwnPrecision) {
  EXPECT_TRUE(simplifies_to(float_imm(0.1) + float_imm(0.2), float_imm(double(0.1f + 0.2f))));
  EXPECT_TRUE(simplifies_to(float_imm(0.1, DType::kF64) + float_imm(0.2, DType::kF64),
                            float_imm(0.1 + 0.2, DType::kF64)));
  EXPECT_TRUE(simplifies_to(call(Intrinsic::k_exp, {float_imm(0.0)}), float_imm(1.0)));
  EXPECT_TRUE(simplifies_to(call(Intrinsic::k_sqrt, {float_imm(2.0, DType::kF64)}),
                            float_imm(std::sqrt(2.0), DType::kF64)));
  double nan = std::nan("");
  EXPECT_TRUE(simplifies_to(eq(float_imm(nan), float_imm(nan)), bool_imm(false)));
  EXPECT_TRUE(simplifies_to(ne(float_imm(nan), float_imm(nan)), bool_imm(true)));
  Analyzer none;
  // f16 arithmetic stays in float precision until a store: not folded.
  EXPECT_TRUE(stays(none, float_imm(0.1, DType::kF16) + float_imm(0.2, DType::kF16)));
  // Float min / max are float_min / float_max (scalar_semantics.h), NaN on either side wins: folded.
  for (const Expr& e : {min(float_imm(nan), float_imm(1.0)), max(float_imm(1.0), float_imm(nan))}) {
    Expr simplified = none.simplify(e);
    const auto* folded = simplified.as<FloatImmNode>();
    ASSERT_NE(folded, nullptr);
    EXPECT_TRUE(std::isnan(folded->value));
  }
  EXPECT_TRUE(simplifies_to(max(float_imm(2.0), float_imm(-1.0)), float_imm(2.0)));
}

TEST(TirSimplifyFold, CastsConvertAsC) {
  EXPECT_TRUE(simplifies_to(cast(DType::kI8, int_imm(300)), int_imm(44, DType::kI8)));
  EXPECT_TRUE(simplifies_to(cast(DType::kI32, float_imm(-3.7)), int_imm(-3, DType::kI32)));
  EXPECT_TRUE(simplifies_to(cast(DType::kBool, float_imm(0.5)), bool_imm(true)));
  EXPECT_TRUE(simplifies_to(cast(DType::kF16, float_imm(0.1)),
                            float_imm(half_to_float(float_to_half(0.1f)), DType::kF16)));
  EXPECT_TRUE(simplifies_to(cast(DType::kF32, int_imm(7, DType::kU8)), float_imm(7.0)));
  Analyzer none;
  EXPECT_TRUE(stays(none, cast(DType::kI8, float_imm(1000.0))));  // out of range: undefined in C
  EXPECT_TRUE(stays(none, cast(DType::kI32, float_imm(std::nan("")))));
}

TEST(TirSimplifyAffine, LikeTermsMerge) {
  Var i = var("i"), j = var("j"), x = var("x"), y = var("y");
  EXPECT_TRUE(simplifies_to((i * 16 + j) - i * 16, j));
  EXPECT_TRUE(simplifies_to((x + 3) - 3, x));
  EXPECT_TRUE(simplifies_to(x * 2 + x * 3, x * 5));
  EXPECT_TRUE(simplifies_to((x + y) - (y + x), int_imm(0)));
  EXPECT_TRUE(simplifies_to(3 * (x + 2) - 6, x * 3));
  EXPECT_TRUE(simplifies_to(imm(16) - x - 16, x * -1));
  EXPECT_TRUE(simplifies_to(x - (y + 4), x - y - 4));
  Var k = var("k", DType::kI8);
  EXPECT_TRUE(simplifies_to(k + int_imm(0, DType::kI8), k));
  EXPECT_TRUE(simplifies_to(k - k, int_imm(0, DType::kI8)));
}

TEST(TirSimplifyAffine, SplitThenFuseRecombines) {
  Var f = var("f");
  EXPECT_TRUE(simplifies_to(floordiv(f, 16) * 16 + floormod(f, 16), f));
  EXPECT_TRUE(simplifies_to((floordiv(f, 4) * 4 + floormod(f, 4)) * 2 + 1, f * 2 + 1));
  // A flat index split into [c, 7, 7] and read back as one offset.
  EXPECT_TRUE(simplifies_to(floordiv(f, 49) * 49 + floormod(floordiv(f, 7), 7) * 7 + floormod(f, 7), f));
  EXPECT_TRUE(simplifies_to(floordiv(f, 49) * 49 + floormod(floordiv(f, 7), 7) * 7, floordiv(f, 7) * 7));
  // Divisors that do not compose stay.
  Expr mixed = floordiv(f, 48) * 49 + floormod(floordiv(f, 7), 7) * 7;
  EXPECT_FALSE(simplifies_to(mixed, floordiv(f, 7) * 7));
}

TEST(TirSimplifyFloorDiv, SplitIndicesUnderBounds) {
  Var i0 = var("i0"), i1 = var("i1");
  Analyzer an;
  an.bind(i0, 0, 4);
  an.bind(i1, 0, 16);
  EXPECT_TRUE(simplifies_to(an, floordiv(i0 * 16 + i1, 16), i0));
  EXPECT_TRUE(simplifies_to(an, floormod(i0 * 16 + i1, 16), i1));
  EXPECT_TRUE(simplifies_to(an, floordiv(i0 * 16 + i1 + 32, 16), i0 + 2));
  EXPECT_TRUE(simplifies_to(an, floormod(i1 + i0 * 16 + 35, 16), floormod(i1 + 3, 16)));
  EXPECT_TRUE(simplifies_to(an, floordiv(i0 * 16 + i1, 32), floordiv(i0, 2)));
  EXPECT_TRUE(simplifies_to(an, floormod(i0 * 16 + i1, 32), floormod(i0, 2) * 16 + i1));
  EXPECT_TRUE(simplifies_to(an, floordiv(imm(15) - i1, 16), int_imm(0)));
  // i1 may reach 16: the quotient is not i0.
  Analyzer wide;
  wide.bind(i0, 0, 4);
  wide.bind(i1, 0, 17);
  EXPECT_TRUE(simplifies_to(wide, floordiv(i0 * 16 + i1, 16), i0 + floordiv(i1, 16)));
}

TEST(TirSimplifyFloorDiv, RulesWithoutBounds) {
  Var x = var("x");
  EXPECT_TRUE(simplifies_to(floordiv(x, 1), x));
  EXPECT_TRUE(simplifies_to(floormod(x, 1), int_imm(0)));
  EXPECT_TRUE(simplifies_to(floordiv(floordiv(x, 4), 8), floordiv(x, 32)));
  EXPECT_TRUE(simplifies_to(floormod(floormod(x, 32), 8), floormod(x, 8)));
  Var w = var("w", DType::kI32);
  EXPECT_TRUE(simplifies_to(floordiv(w, int_imm(1, DType::kI32)), w));
  // An unbounded x may wrap: x*16 // 16 is not x when x*16 overflows.
  EXPECT_TRUE(stays(Analyzer(), floordiv(x * 16, 16)));
}

TEST(TirSimplifyBounds, MinMaxAndComparisonsDecided) {
  Var i = var("i"), j = var("j"), x = var("x");
  Analyzer an;
  an.bind(i, 0, 16);
  an.bind(j, 0, 16);
  EXPECT_TRUE(simplifies_to(an, min(i, int_imm(20)), i));
  EXPECT_TRUE(simplifies_to(an, max(i, int_imm(20)), int_imm(20)));
  EXPECT_TRUE(simplifies_to(an, min(i, i + 1), i));
  EXPECT_TRUE(simplifies_to(an, max(floordiv(i, 4), int_imm(3)), int_imm(3)));
  EXPECT_TRUE(simplifies_to(an, i < imm(16), bool_imm(true)));
  EXPECT_TRUE(simplifies_to(an, i >= imm(16), bool_imm(false)));
  EXPECT_TRUE(simplifies_to(an, i * 16 + j < imm(256), bool_imm(true)));
  EXPECT_TRUE(simplifies_to(an, floordiv(i, 4) < imm(4), bool_imm(true)));
  EXPECT_TRUE(simplifies_to(an, select(i < j + 16, i, j), i));
  EXPECT_TRUE(simplifies_to(an, floormod(x, 8) < imm(8), bool_imm(true)));  // x unbounded
  // Each arm of a select knows how its condition came out.
  EXPECT_TRUE(simplifies_to(an, select(i < imm(8), floordiv(i, 8), floordiv(i, 8) + 4),
                            select(i < imm(8), imm(0), imm(5))));
  EXPECT_TRUE(simplifies_to(an, select(i >= imm(2) && i < imm(6), floordiv(i - 2, 4), imm(1)),
                            select(i >= imm(2) && i < imm(6), imm(0), imm(1))));
  EXPECT_TRUE(simplifies_to(an, eq(x * 4 + i, x * 4 + i), bool_imm(true)));
  EXPECT_TRUE(stays(an, i < imm(15)));
  EXPECT_TRUE(stays(an, x < x + 1));  // false when x + 1 wraps
  EXPECT_EQ(an.bound(i * 4 + j).max, 75);
  EXPECT_EQ(an.bound(floormod(x, 8)).min, 0);
  EXPECT_FALSE(an.bound(x + 1).max.has_value());
  EXPECT_TRUE(an.can_prove(i * 16 + j < imm(256) && i >= imm(0)));
  EXPECT_FALSE(an.can_prove(i < imm(15)));
}

TEST(TirSimplifyLogic, AndOrNotFold) {
  Var i = var("i"), n = var("n");
  Expr c = n < imm(7);
  Analyzer an;
  an.bind(i, 0, 16);
  EXPECT_TRUE(simplifies_to(an, (i < imm(16)) && c, c));
  EXPECT_TRUE(simplifies_to(an, c || (i >= imm(16)), c));
  EXPECT_TRUE(simplifies_to(an, c && (i >= imm(16)), bool_imm(false)));
  EXPECT_TRUE(simplifies_to(an, logical_not(logical_not(c)), c));
  EXPECT_TRUE(simplifies_to(an, logical_not(c), n >= imm(7)));
  Var f = var("f", DType::kF32);
  EXPECT_TRUE(stays(an, logical_not(f < float_imm(1.0))));  // NaN: !(f < 1) is not f >= 1
}

TEST(TirSimplifyFloat, NeverReassociated) {
  Var f = var("f", DType::kF32);
  Analyzer none;
  EXPECT_TRUE(stays(none, f + float_imm(0.0)));  // -0.0 + 0.0 is +0.0
  EXPECT_TRUE(stays(none, (f + float_imm(1.0)) - float_imm(1.0)));
  EXPECT_TRUE(simplifies_to(f * (float_imm(2.0) + float_imm(3.0)), f * float_imm(5.0)));
}

// ---- Statements

TEST(TirSimplifyStmt, ExtentOneLoopsGoUnlessBoundOrAnnotated) {
  Buffer a = make_buffer("A", DType::kF32, {8});
  Var i = var("i"), j = var("j");
  Stmt store = make_store(a, float_imm(0.0), {i * 8 + j});
  Stmt nest = make_for(i, int_imm(0), int_imm(1), ForKind::kSerial,
                       make_for(j, int_imm(0), int_imm(8), ForKind::kSerial, store));
  Stmt expected = make_for(j, int_imm(0), int_imm(8), ForKind::kSerial, make_store(a, float_imm(0.0), {j}));
  EXPECT_TRUE(structural_equal(simplify(nest), expected)) << to_string(simplify(nest));

  Stmt bound = make_for(i, int_imm(0), int_imm(1), ForKind::kThreadBound, store, "threadIdx.x");
  Stmt simplified = simplify(bound);
  const auto* kept = simplified.as<ForNode>();
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->thread_tag, "threadIdx.x");
  Stmt annotated = make_for(i, int_imm(0), int_imm(1), ForKind::kSerial, store, "", {{"pragma_unroll", 1}});
  Stmt annotated_kept = simplify(annotated);
  EXPECT_NE(annotated_kept.as<ForNode>(), nullptr);
}

TEST(TirSimplifyStmt, ProvableIfsAndEmptyLoopsGo) {
  Buffer a = make_buffer("A", DType::kF32, {16});
  Var i = var("i");
  Stmt store = make_store(a, float_imm(1.0), {i});
  Stmt guarded = make_for(i, int_imm(0), int_imm(16), ForKind::kSerial, make_if(i < imm(16), store));
  Stmt expected = make_for(i, int_imm(0), int_imm(16), ForKind::kSerial, store);
  EXPECT_TRUE(structural_equal(simplify(guarded), expected)) << to_string(simplify(guarded));

  Stmt dead = make_for(i, int_imm(0), int_imm(16), ForKind::kSerial, make_if(i >= imm(16), store));
  Stmt emptied = simplify(dead);  // seq points into it
  const auto* seq = emptied.as<SeqNode>();
  ASSERT_NE(seq, nullptr);
  EXPECT_TRUE(seq->stmts.empty());

  Stmt never = make_for(i, int_imm(0), int_imm(0), ForKind::kSerial, store);
  Stmt never_kept = simplify(never);
  EXPECT_NE(never_kept.as<SeqNode>(), nullptr);

  // The then-branch knows i < 8: i // 8 is 0 there; the else-branch knows i >= 8.
  Stmt split = make_for(i, int_imm(0), int_imm(16), ForKind::kSerial,
                        make_if(i < imm(8), make_store(a, float_imm(1.0), {floordiv(i, 8)}),
                                make_store(a, float_imm(2.0), {floordiv(i, 8)})));
  Stmt split_expected = make_for(i, int_imm(0), int_imm(16), ForKind::kSerial,
                                 make_if(i < imm(8), make_store(a, float_imm(1.0), {int_imm(0)}),
                                         make_store(a, float_imm(2.0), {int_imm(1)})));
  EXPECT_TRUE(structural_equal(simplify(split), split_expected)) << to_string(simplify(split));
}

TEST(TirSimplifyStmt, BlockBindingsPredicatesAndBodies) {
  Buffer a = make_buffer("A", DType::kF32, {64});
  Var i0 = var("i0"), i1 = var("i1"), vi = var("vi");
  Stmt body = make_if(vi < imm(64), make_store(a, float_imm(0.0), {floormod(vi, 64)}));
  Stmt block = make_ref<BlockNode>(
      "B", std::vector<IterVar>{{vi, {int_imm(0), int_imm(64)}, IterKind::kSpatial}},
      std::vector<Expr>{floordiv(i0 * 16 + i1, 16) * 16 + floormod(i1, 16)}, i0 * 16 + i1 < imm(64),
      std::vector<BufferRegion>{{a, {{floormod(vi, 64), int_imm(1)}}}}, std::vector<BufferRegion>{}, Stmt(),
      body, std::vector<Buffer>{}, Annotations{});
  Stmt nest = make_for(i0, int_imm(0), int_imm(4), ForKind::kSerial,
                       make_for(i1, int_imm(0), int_imm(16), ForKind::kSerial, block));
  Stmt got = simplify(nest);
  const auto* b = got.as<ForNode>()->body.as<ForNode>()->body.as<BlockNode>();
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(expr_equal(b->iter_values[0], i0 * 16 + i1)) << to_string(b->iter_values[0]);
  EXPECT_TRUE(is_const_int(b->predicate, 1)) << to_string(b->predicate);
  EXPECT_TRUE(expr_equal(b->reads[0].region[0].min, vi));
  EXPECT_TRUE(structural_equal(b->body, make_store(a, float_imm(0.0), {vi}))) << to_string(b->body);
}

// for i0 in 0..4, i1 in 0..16, u in 0..1:
//   block B(vi: spatial[60] = i0*16 + i1 + u) if i0*16 + i1 < 60:
//     B[vi] = select(vi % 16 < 16, A[vi // 16 * 16 + vi % 16] * 2, 0)
PrimFunc guarded_copy() {
  Buffer a = make_buffer("A", DType::kF32, {60}), b = make_buffer("B", DType::kF32, {60});
  Var i0 = var("i0"), i1 = var("i1"), u = var("u"), vi = var("vi");
  Expr value = select(floormod(vi, 16) < imm(16),
                      load(a, {floordiv(vi, 16) * 16 + floormod(vi, 16)}) * float_imm(2.0), float_imm(0.0));
  Stmt body = make_store(b, value, {vi});
  AccessRegions regions = detect_access_regions(Stmt(), body);
  Stmt block = make_ref<BlockNode>("B", std::vector<IterVar>{{vi, {imm(0), imm(60)}, IterKind::kSpatial}},
                                   std::vector<Expr>{i0 * 16 + i1 + u}, i0 * 16 + i1 < imm(60), regions.reads,
                                   regions.writes, Stmt(), body, std::vector<Buffer>{}, Annotations{});
  Stmt nest = make_for(
      i0, imm(0), imm(4), ForKind::kSerial,
      make_for(i1, imm(0), imm(16), ForKind::kSerial, make_for(u, imm(0), imm(1), ForKind::kSerial, block)));
  return make_prim_func("guarded_copy", {a}, {b}, make_root_block(nest, {}));
}

TEST(TirSimplifyStmt, InterpretedResultsAgree) {
  PrimFunc f = guarded_copy();
  PrimFunc g = simplify(f);
  EXPECT_FALSE(g.same_as(f));
  EXPECT_TRUE(simplify(g).same_as(g));  // nothing left to simplify
  Tensor a(DType::kF32, {60});
  for (int64_t k = 0; k < 60; ++k) a.set_f64(k, double((k * 37) % 11) - 5.25);
  std::vector<double> want = interpret(f, {a})[0].to_f64_vector();
  std::vector<double> got = interpret(g, {a})[0].to_f64_vector();
  EXPECT_EQ(got, want);
  // The extent-1 loop and the select are gone; the predicate stays (i0*16 + i1 reaches 63).
  std::string text = to_string(g);
  EXPECT_EQ(text.find("select"), std::string::npos) << text;
  EXPECT_EQ(text.find("u in"), std::string::npos) << text;
  EXPECT_NE(text.find("< 60"), std::string::npos) << text;
}

TEST(TirSimplifyStmt, SimpleFunctionsComeBackShared) {
  PrimFunc f = make_matmul_func(8, 4, 2);
  EXPECT_TRUE(simplify(f).same_as(f));
}

}  // namespace
}  // namespace tessel::tir
