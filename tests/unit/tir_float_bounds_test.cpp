// float_bounds: the range a clamp gives a float expression of the tensor IR,
// and a NaN guard's exclusion of NaN, as the lowering of Clip, QuantizeLinear
// and Cast writes them; what code generation asks before it converts a float
// to int32 directly.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/tensor/float_bounds.h"
#include "ir/tensor/printer.h"

namespace tessel::tir {
namespace {

const Buffer kX = make_buffer("x", DType::kF64, {8});

Expr c(double v) {
  return float_imm(v, DType::kF64);
}
// std::max(v, lo) and std::min(v, hi) as the lowering writes them.
Expr at_least(const Expr& v, double lo) {
  return select(lt(v, c(lo)), c(lo), v);
}
Expr at_most(const Expr& v, double hi) {
  return select(lt(c(hi), v), c(hi), v);
}
Expr nan_to_zero(const Expr& v) {
  return select(eq(v, v), v, c(0));
}

void expect_bounds(const Expr& e, double lo, double hi, bool may_be_nan) {
  FloatBounds b = float_bounds(e);
  EXPECT_EQ(b.lo, lo) << e;
  EXPECT_EQ(b.hi, hi) << e;
  EXPECT_EQ(b.may_be_nan, may_be_nan) << e;
}

TEST(FloatBounds, AClampBoundsItsValueAndAGuardRulesOutNaN) {
  Var i = var("i");
  Expr clamped = at_most(at_least(load(kX, {i}), 0), 255);  // a NaN fails both comparisons
  expect_bounds(at_least(load(kX, {i}), 0), 0, INFINITY, true);
  expect_bounds(clamped, 0, 255, true);
  expect_bounds(nan_to_zero(clamped), 0, 255, false);
  expect_bounds(max(min(load(kX, {i}), c(6)), c(-6)), -6, 6, true);
  EXPECT_TRUE(float_within(nan_to_zero(clamped), -2147483648.0, 2147483648.0));
  EXPECT_FALSE(float_within(clamped, -2147483648.0, 2147483648.0));
  EXPECT_FALSE(float_within(nan_to_zero(clamped), 0, 255));  // 255 is outside [0, 255)
  // A widening conversion keeps the bounds; f32(clamped) could round, and is unbounded.
  Expr s = load(make_buffer("s", DType::kF32, {8}), {i}), one = float_imm(1);
  Expr single = select(lt(one, s), one, s);
  expect_bounds(cast(DType::kF64, single), -INFINITY, 1, true);
  expect_bounds(cast(DType::kF32, clamped), -INFINITY, INFINITY, true);
}

TEST(FloatBounds, ACopyOfTheClampedValueIsItAndAnotherValueIsNot) {
  Var i = var("i"), j = var("j");
  Expr v = load(kX, {i}) * c(0.5), copy = load(kX, {i}) * c(0.5);
  expect_bounds(select(lt(v, c(-1)), c(-1), copy), -1, INFINITY, true);
  expect_bounds(select(eq(v, copy), copy, c(7)), -INFINITY, INFINITY, false);
  expect_bounds(select(lt(v, c(-1)), c(-1), load(kX, {i}) * c(0.25)), -INFINITY, INFINITY, true);
  expect_bounds(select(lt(load(kX, {i}), c(-1)), c(-1), load(kX, {j})), -INFINITY, INFINITY, true);
  expect_bounds(select(lt(load(kX, {i}), c(-1)), c(-1), load(kX, {i + 1})), -INFINITY, INFINITY, true);
}

TEST(FloatBounds, AnythingElseIsUnboundedAndMayBeNaN) {
  Var i = var("i");
  expect_bounds(load(kX, {i}), -INFINITY, INFINITY, true);
  expect_bounds(load(kX, {i}) + c(1), -INFINITY, INFINITY, true);
  expect_bounds(c(3), 3, 3, false);
  EXPECT_TRUE(float_bounds(c(NAN)).may_be_nan);
  // select(a < b, b, b) is neither std::min nor std::max.
  expect_bounds(select(lt(load(kX, {i}), c(0)), c(0), c(0) + c(1)), -INFINITY, INFINITY, true);
  expect_bounds(cast(DType::kF64, int_imm(3, DType::kI32)), -INFINITY, INFINITY, true);
}

}  // namespace
}  // namespace tessel::tir
