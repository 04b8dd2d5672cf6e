// Tests of rfactor and decompose_reduction on a matmul, the two-stage function
// and a softmax's reductions.
#include "tests/unit/sched_block_test_util.h"

namespace tessel::block_test {
namespace {

using sched::decompose_reduction;
using sched::rfactor;

TEST(SchedBlockRfactor, WholeReductionLoop) {
  PrimFunc f = make_matmul_func(4, 5, 6);
  for (int axis = 0; axis <= 2; ++axis) {
    sched::PrimitiveResult r = rfactor(f, loops_of(f, "C")[2], axis);
    EXPECT_EQ(r.new_block, "C_rf");
    const BlockNode& rf = block_of(r.func, "C_rf");
    std::vector<int64_t> shape = {4, 5};
    shape.insert(shape.begin() + axis, 6);
    EXPECT_EQ(rf.writes[0].buffer->shape, shape);
    EXPECT_EQ(block_of(r.func, "C").iter_vars.size(), 3u);
    expect_equivalent(f, r.func);
  }
}

TEST(SchedBlockRfactor, InnerLoopOfASplitReduction) {
  PrimFunc f = make_matmul_func(3, 4, 8);
  sched::SplitResult s = sched::split(f, loops_of(f, "C")[2], {2, 4}, true);
  sched::PrimitiveResult inner = rfactor(s.func, s.loops[1].get(), 0);
  EXPECT_EQ(block_of(inner.func, "C_rf").writes[0].buffer->shape, (std::vector<int64_t>{4, 3, 4}));
  expect_equivalent(f, inner.func);
  sched::PrimitiveResult outer = rfactor(s.func, s.loops[0].get(), 2);
  EXPECT_EQ(block_of(outer.func, "C_rf").writes[0].buffer->shape, (std::vector<int64_t>{3, 4, 2}));
  expect_equivalent(f, outer.func);
}

TEST(SchedBlockRfactor, SoftmaxMaxAndSum) {
  PrimFunc f = make_softmax(3, 8);
  sched::SplitResult s = sched::split(f, loops_of(f, "sm")[1], {2, 4}, true);
  PrimFunc g = rfactor(s.func, s.loops[1].get(), 1).func;
  sched::SplitResult t = sched::split(g, loops_of(g, "mx")[1], {4, 2}, true);
  g = rfactor(t.func, t.loops[0].get(), 0).func;
  expect_equivalent(f, g, 1e-5);
}

TEST(SchedBlockRfactor, Rejections) {
  PrimFunc f = make_matmul_func(4, 5, 6);
  std::vector<const VarNode*> c = loops_of(f, "C");
  expect_error([&] { rfactor(f, c[0], 0); }, "rfactor.not_reduction_loop",
               "loop 'i' binds a spatial variable");
  expect_error([&] { rfactor(f, c[2], 3); }, "rfactor.bad_factor_axis", "factor_axis 3 is not in [0, 2]");
  Var stray = var("stray");
  expect_error([&] { rfactor(f, stray.get(), 0); }, "rfactor.no_loop", "stray");
  PrimFunc t = make_two_stage(6, 5, 4);
  PrimFunc at_k = sched::compute_at(t, "B", loops_of(t, "C")[2]);
  expect_error([&] { rfactor(at_k, loops_of(at_k, "C")[2], 0); }, "rfactor.multiple_blocks", "2 blocks");
  PrimFunc at_m = sched::compute_at(t, "B", loops_of(t, "C")[0]);
  expect_error([&] { rfactor(at_m, loops_of(at_m, "C")[2], 0); }, "rfactor.shared_nest", "block 'B'");
  // A sum starting from 5 is not a sum of partial results each starting from 5.
  LowerContext ctx("offset_sum");
  TensorExpr a = ctx.input("A", DType::kF32, {3, 4});
  TensorExpr s = ctx.reduce(
      "S", {3}, DType::kF32, {4}, Combiner::kSum,
      [&](const std::vector<Expr>& sp, const std::vector<Expr>& r) {
        return a.at({sp[0], r[0]});
      },
      float_imm(5));
  ctx.output("S", s);
  PrimFunc offset = ctx.finish();
  expect_error([&] { rfactor(offset, loops_of(offset, "S")[1], 0); }, "rfactor.unknown_combiner", "identity");
  PrimFunc odd = make_matmul_func(3, 4, 7);
  sched::SplitResult sp = sched::split(odd, loops_of(odd, "C")[2], {2, 4}, false);
  expect_error([&] { rfactor(sp.func, sp.loops[1].get(), 0); }, "rfactor.predicated", "predicate");
}

TEST(SchedBlockDecompose, InitBeforeTheGivenLoop) {
  PrimFunc f = make_matmul_func(4, 5, 6);
  std::vector<const VarNode*> c = loops_of(f, "C");
  for (const VarNode* loop : c) {
    sched::PrimitiveResult r = decompose_reduction(f, "C", loop);
    EXPECT_EQ(r.new_block, "C_init");
    EXPECT_FALSE(block_of(r.func, "C").init.defined());
    const BlockNode& init = block_of(r.func, "C_init");
    EXPECT_FALSE(init.is_reduction());
    // The loops above `loop` are shared; the spatial ones at and below it are copied.
    EXPECT_EQ(loops_of(r.func, "C_init").size(), 2u);
    expect_equivalent(f, r.func);
  }
}

TEST(SchedBlockDecompose, AfterCacheWriteAndComputeAt) {
  PrimFunc f = make_two_stage(6, 5, 4);
  sched::PrimitiveResult w = sched::cache_write(f, "C", 0, MemScope::kLocal);
  PrimFunc g = sched::reverse_compute_at(w.func, "C_local", loops_of(w.func, "C")[0]);
  sched::PrimitiveResult d = decompose_reduction(g, "C", loops_of(g, "C")[1]);
  expect_equivalent(f, d.func);
  PrimFunc s = make_softmax(3, 4);
  PrimFunc h = sched::compute_at(s, "sm", loops_of(s, "out")[0]);
  expect_equivalent(s, decompose_reduction(h, "sm", loops_of(h, "sm")[1]).func, 1e-6);
}

TEST(SchedBlockDecompose, Rejections) {
  PrimFunc f = make_two_stage(6, 5, 4);
  expect_error([&] { decompose_reduction(f, "B", loops_of(f, "B")[0]); }, "decompose_reduction.not_reduction",
               "block 'B' is not a reduction");
  expect_error([&] { decompose_reduction(f, "C", loops_of(f, "B")[0]); },
               "decompose_reduction.loop_not_ancestor", "is not a loop of block 'C'");
  std::vector<const VarNode*> c = loops_of(f, "C");
  PrimFunc reordered = sched::reorder(f, {c[2], c[0], c[1]});
  expect_error([&] { decompose_reduction(reordered, "C", c[0]); }, "decompose_reduction.reduce_loop_above",
               "once per iteration");
  PrimFunc fused = sched::fuse(f, {c[1], c[2]}).func;
  expect_error([&] { decompose_reduction(fused, "C", loops_of(fused, "C")[1]); },
               "decompose_reduction.mixed_loop", "both spatial and reduction");
}

}  // namespace
}  // namespace tessel::block_test
