// Tests of integer sets for region analysis: eval_set over relaxed loop
// variables (affine hulls, strides, floordiv/floormod, min/max, select,
// unbounded loads), eval_region, union_set, union_regions and covers.
#include <gtest/gtest.h>

#include "ir/tensor/int_set.h"
#include "ir/tensor/printer.h"
#include "ir/tensor/simplify_internal.h"
#include "tessel/error.h"

namespace tessel::tir {
namespace {

using simplify_detail::expr_equal;

Expr imm(int64_t v) {
  return int_imm(v);
}

// The set is [min, min + extent) with the given stride, compared as expressions.
testing::AssertionResult is_set(const IntSet& s, const Expr& min, const Expr& extent, int64_t stride = 1) {
  if (!s.bounded) return testing::AssertionFailure() << "unbounded set";
  if (expr_equal(s.min, min) && expr_equal(s.extent, extent) && s.stride == stride)
    return testing::AssertionSuccess();
  return testing::AssertionFailure() << "got [" << to_string(s.min) << ", +" << to_string(s.extent)
                                     << ") stride " << s.stride << ", expected [" << to_string(min) << ", +"
                                     << to_string(extent) << ") stride " << stride;
}

class TirIntSet : public testing::Test {
 protected:
  TirIntSet() {
    outer.bind(i, 0, 4);
    relax[j.get()] = Range{imm(0), imm(16)};
  }
  Var i = var("i"), j = var("j"), k = var("k");
  Analyzer outer;  // i in [0, 4) stays symbolic
  RelaxMap relax;  // j runs over [0, 16)
};

TEST_F(TirIntSet, ExpressionsWithoutRelaxedVariablesArePoints) {
  EXPECT_TRUE(is_set(eval_set(i * 4 + 1, relax, outer), i * 4 + 1, imm(1)));
}

TEST_F(TirIntSet, AffineHullsAndStrides) {
  EXPECT_TRUE(is_set(eval_set(i * 16 + j, relax, outer), i * 16, imm(16)));
  EXPECT_TRUE(is_set(eval_set(j * 4 + 1, relax, outer), imm(1), imm(61), 4));
  EXPECT_TRUE(is_set(eval_set(imm(20) - j, relax, outer), imm(5), imm(16)));
  relax[k.get()] = Range{imm(0), imm(3)};
  EXPECT_TRUE(is_set(eval_set(j * 6 + k * 4, relax, outer), imm(0), imm(99), 2));
}

TEST_F(TirIntSet, FloorDivAndFloorMod) {
  EXPECT_TRUE(is_set(eval_set(floordiv(i * 16 + j, 4), relax, outer), i * 4, imm(4)));
  EXPECT_TRUE(is_set(eval_set(floormod(i * 16 + j, 8), relax, outer), imm(0), imm(8)));
  // Within one period: (i*32 + j) % 32 is j, whatever i.
  EXPECT_TRUE(is_set(eval_set(floormod(i * 32 + j + 8, 32), relax, outer), imm(8), imm(16)));
  // Across periods of 4 at a symbolic offset: the whole period.
  EXPECT_TRUE(is_set(eval_set(floormod(i + j, 4), relax, outer), imm(0), imm(4)));
}

TEST_F(TirIntSet, MinMaxAndSelect) {
  EXPECT_TRUE(is_set(eval_set(min(j, imm(5)) + i, relax, outer), i, imm(6)));
  EXPECT_TRUE(is_set(eval_set(max(j, i * 4), relax, outer), i * 4, imm(16) - i * 4));
  EXPECT_TRUE(is_set(eval_set(select(i < imm(2), j, j + 20), relax, outer), imm(0), imm(36)));
}

TEST_F(TirIntSet, LoadedIndicesAreUnbounded) {
  Buffer idx = make_buffer("idx", DType::kI64, {16});
  IntSet s = eval_set(load(idx, {j}), relax, outer);
  EXPECT_FALSE(s.bounded);
  EXPECT_FALSE(s.min.defined());
  // A narrower type bounds the value by its range.
  Buffer small = make_buffer("small", DType::kU8, {16});
  EXPECT_TRUE(is_set(eval_set(cast(kIndexType, load(small, {j})), relax, outer), imm(0), imm(256)));
}

TEST_F(TirIntSet, RangesMayDependOnOtherRelaxedVariables) {
  relax[k.get()] = Range{j, imm(4)};  // k in [j, j + 4)
  EXPECT_TRUE(is_set(eval_set(k, relax, outer), imm(0), imm(19)));
}

TEST_F(TirIntSet, RegionsAndUnions) {
  std::vector<IntSet> region = eval_region({{i * 16 + j, imm(1)}, {j, imm(4)}}, relax, outer);
  ASSERT_EQ(region.size(), 2u);
  EXPECT_TRUE(is_set(region[0], i * 16, imm(16)));
  EXPECT_TRUE(is_set(region[1], imm(0), imm(19)));

  Analyzer none;
  EXPECT_TRUE(is_set(union_set(IntSet::interval(imm(0), imm(4)), IntSet::interval(imm(8), imm(4)), none),
                     imm(0), imm(12)));
  IntSet points =
      union_set(union_set(IntSet::point(imm(0)), IntSet::point(imm(4)), none), IntSet::point(imm(12)), none);
  EXPECT_TRUE(is_set(points, imm(0), imm(13), 4));
  EXPECT_FALSE(union_set(IntSet::point(imm(0)), IntSet::everything(), none).bounded);

  std::vector<std::vector<IntSet>> regions = {{IntSet::interval(i * 4, imm(4)), IntSet::point(imm(3))},
                                              {IntSet::interval(i * 4 + 2, imm(4)), IntSet::everything()}};
  EXPECT_THROW(union_regions(regions, outer), InternalError);
  std::vector<Range> ranges = union_regions(regions, {64, 10}, outer);
  EXPECT_TRUE(expr_equal(ranges[0].min, i * 4));
  EXPECT_TRUE(expr_equal(ranges[0].extent, imm(6)));
  EXPECT_TRUE(expr_equal(ranges[1].min, imm(0)));
  EXPECT_TRUE(expr_equal(ranges[1].extent, imm(10)));
}

TEST_F(TirIntSet, Covers) {
  std::vector<Range> whole = {{imm(0), imm(16)}};
  EXPECT_TRUE(covers(whole, {{i * 4, imm(4)}}, outer));
  EXPECT_FALSE(covers({{imm(0), imm(15)}}, {{i * 4, imm(4)}}, outer));
  EXPECT_TRUE(covers({{i * 4, imm(8)}}, {{i * 4 + 2, imm(6)}}, outer));
  EXPECT_FALSE(covers({{i * 4, imm(8)}}, {{i * 4 + 2, imm(7)}}, outer));
  // An unbound variable may wrap around: nothing about it is provable.
  EXPECT_FALSE(covers({{k * 4, imm(8)}}, {{k * 4 + 2, imm(6)}}, outer));
}

}  // namespace
}  // namespace tessel::tir
