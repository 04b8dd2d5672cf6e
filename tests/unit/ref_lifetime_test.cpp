// The handle accessors that return a pointer into a node refuse a temporary
// handle (it may hold the node's last reference), and still work on a named one.
#include <gtest/gtest.h>

#include <utility>

#include "ir/tensor/expr.h"
#include "ir/tensor/simplify.h"
#include "schedules/primitives/loop_analysis.h"
#include "schedules/tree_query.h"

namespace tessel::tir {
namespace {

// H is a handle type: H&& is a temporary (prvalue or xvalue), H& a named one.
template <typename H>
concept AsIntImm = requires(H&& h) { std::forward<H>(h).template as<IntImmNode>(); };
template <typename H>
concept AsConstInt = requires(H&& h) { as_const_int(std::forward<H>(h)); };
template <typename H>
concept RootBlock = requires(H&& h) { sched::root_block(std::forward<H>(h)); };
template <typename H>
concept BlocksBelow = requires(H&& h) { sched::blocks_below(std::forward<H>(h)); };

// Must-fail at compile time: each of these dangled once (issue 11).
static_assert(!AsIntImm<Expr> && !AsIntImm<const Expr>);
static_assert(!AsConstInt<Expr>);
static_assert(!RootBlock<PrimFunc>);
static_assert(!BlocksBelow<Stmt>);
// Named handles are fine.
static_assert(AsIntImm<Expr&> && AsIntImm<const Expr&>);
static_assert(AsConstInt<Expr&> && AsConstInt<const Expr&>);
static_assert(RootBlock<const PrimFunc&>);
static_assert(BlocksBelow<const Stmt&>);

TEST(RefLifetime, NamedSimplifiedExprKeepsItsConstant) {
  Var x = var("x");
  Expr folded = simplify((x + 7) - x);  // a new IntImm, owned only by `folded`
  const int64_t* c = as_const_int(folded);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(*c, 7);
  const auto* imm = folded.as<IntImmNode>();
  ASSERT_NE(imm, nullptr);
  EXPECT_EQ(imm->value, 7);
}

}  // namespace
}  // namespace tessel::tir
