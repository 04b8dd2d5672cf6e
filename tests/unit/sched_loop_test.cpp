// The loop primitives through the Schedule: split, fuse, reorder, the loop
// kinds and annotations on a matmul, each checked by its printed IR, by the
// interpreter against the unscheduled function, and by its must-fail cases.
#include <gtest/gtest.h>

#include "tests/unit/sched_test_util.h"

namespace tessel::sched_test {
namespace {

using sched::BlockRV;
using sched::LoopRV;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Matmul {
  PrimFunc func = make_matmul_func(16, 12, 8);
  Schedule sch{func};
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);  // i, j, k
};

TEST(SchedSplit, SplitsIntoNestWithLinearBinding) {
  Matmul m;
  std::vector<LoopRV> parts = m.sch.split(m.loops[0], {4, -1});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(m.sch.loop(parts[1]).var->name, "i_1");
  std::string text = to_string(m.sch.func());
  EXPECT_TRUE(contains(text, "for i_0 in 0..4:\n    for i_1 in 0..4:\n      for j in 0..12:")) << text;
  EXPECT_TRUE(contains(text, "vi: spatial[16] = i_0 * 4 + i_1")) << text;
  EXPECT_FALSE(contains(text, "predicate")) << text;
  expect_same_results(m.func, m.sch.func());
}

TEST(SchedSplit, InexactSplitGuardsTheBlock) {
  PrimFunc func = make_matmul_func(10, 4, 3);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> parts = sch.split(loops[0], {-1, 4});
  EXPECT_EQ(as_const_int(sch.loop(parts[0]).extent)[0], 3);
  std::string text = to_string(sch.func());
  EXPECT_TRUE(contains(text, "predicate i_0 * 4 + i_1 < 10")) << text;
  expect_same_results(func, sch.func());
  // Three levels, the middle one inferred.
  std::vector<LoopRV> k_parts = sch.split(loops[2], {1, -1, 2});
  EXPECT_EQ(as_const_int(sch.loop(k_parts[1]).extent)[0], 2);
  expect_same_results(func, sch.func());
}

TEST(SchedSplit, RejectsBadFactors) {
  Matmul m;
  expect_rejected(
      m.sch,
      [&] {
        m.sch.split(m.loops[0], {4, 5}, /*exact=*/true);
      },
      "split.not_divisible", "multiply to 16, not 20");
  expect_rejected(
      m.sch,
      [&] {
        m.sch.split(m.loops[0], {3, 5});
      },
      "split.too_small", "less than the extent");
  expect_rejected(
      m.sch,
      [&] {
        m.sch.split(m.loops[0], {0, 16});
      },
      "split.bad_factor", "must be positive");
  expect_rejected(
      m.sch,
      [&] {
        m.sch.split(m.loops[0], {-1, -1});
      },
      "split.bad_factor", "one may be -1");
  expect_rejected(
      m.sch, [&] { m.sch.split(m.loops[0], {16}); }, "split.too_few_factors", "two factors");
  m.sch.parallel(m.loops[0]);
  expect_rejected(
      m.sch,
      [&] {
        m.sch.split(m.loops[0], {4, 4});
      },
      "split.loop_kind", "only serial loops");
}

TEST(SchedSplit, OldHandleGoesStale) {
  Matmul m;
  m.sch.split(m.loops[1], {3, 4});
  expect_rejected(
      m.sch,
      [&] {
        m.sch.split(m.loops[1], {2, 6});
      },
      "handle.stale", "loop j");
  expect_rejected(
      m.sch, [&] { m.sch.parallel(LoopRV{99}); }, "handle.invalid", "loop handle 99");
}

TEST(SchedFuse, FusesNestedLoops) {
  Matmul m;
  LoopRV fused = m.sch.fuse({m.loops[0], m.loops[1]});
  EXPECT_EQ(as_const_int(m.sch.loop(fused).extent)[0], 192);
  std::string text = to_string(m.sch.func());
  EXPECT_TRUE(contains(text, "for i_j_fused in 0..192:\n    for k in 0..8:")) << text;
  EXPECT_TRUE(contains(text, "vi: spatial[16] = i_j_fused // 12, vj: spatial[12] = i_j_fused % 12")) << text;
  expect_same_results(m.func, m.sch.func());
  // Fuse back what a split made: the combination simplifies away.
  std::vector<LoopRV> parts = m.sch.split(m.loops[2], {2, 4});
  m.sch.fuse(parts);
  text = to_string(m.sch.func());
  EXPECT_TRUE(contains(text, "for k_0_k_1_fused in 0..8:")) << text;
  EXPECT_TRUE(contains(text, "vk: reduce[8] = k_0_k_1_fused)")) << text;
  expect_same_results(m.func, m.sch.func());
}

TEST(SchedFuse, RejectsLoopsNotDirectlyNested) {
  Matmul m;
  expect_rejected(
      m.sch,
      [&] {
        m.sch.fuse({m.loops[0], m.loops[2]});
      },
      "fuse.not_nested", "directly nested");
  expect_rejected(
      m.sch,
      [&] {
        m.sch.fuse({m.loops[1], m.loops[0]});
      },
      "fuse.not_nested", "outermost first");
  expect_rejected(
      m.sch,
      [&] {
        m.sch.fuse({m.loops[0], m.loops[0]});
      },
      "fuse.duplicate_loop", "listed twice");
  expect_rejected(
      m.sch, [&] { m.sch.fuse({m.loops[0]}); }, "fuse.too_few_loops", "at least two");
  m.sch.parallel(m.loops[0]);
  expect_rejected(
      m.sch,
      [&] {
        m.sch.fuse({m.loops[0], m.loops[1]});
      },
      "fuse.loop_kind", "is parallel");
}

TEST(SchedReorder, PermutesOneChain) {
  Matmul m;
  m.sch.reorder({m.loops[2], m.loops[0]});
  std::string text = to_string(m.sch.func());
  EXPECT_TRUE(contains(text, "for k in 0..8:\n    for j in 0..12:\n      for i in 0..16:")) << text;
  expect_same_results(m.func, m.sch.func());
  // Handles survive: the loops are the same loops in new places.
  m.sch.reorder({m.loops[0], m.loops[1], m.loops[2]});
  EXPECT_TRUE(
      contains(to_string(m.sch.func()), "for i in 0..16:\n    for j in 0..12:\n      for k in 0..8:"));
  expect_same_results(m.func, m.sch.func());
}

TEST(SchedReorder, RejectsLoopsOfDifferentNests) {
  PrimFunc func = make_matmul_relu_func(8, 4, 4);
  Schedule sch(func);
  std::vector<LoopRV> mm = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> relu = sch.get_loops(sch.get_block("D"));
  expect_rejected(
      sch,
      [&] {
        sch.reorder({relu[1], mm[0]});
      },
      "reorder.not_one_chain", "different loop nests");
  expect_rejected(
      sch,
      [&] {
        sch.reorder({mm[1], mm[1]});
      },
      "reorder.duplicate_loop", "listed twice");
  sch.reorder({relu[1], relu[0]});
  expect_same_results(func, sch.func());
}

TEST(SchedLoopKind, ParallelOnlyOverSpatialLoops) {
  Matmul m;
  expect_rejected(
      m.sch, [&] { m.sch.parallel(m.loops[2]); }, "parallel.reduction_loop",
      "binds the reduction variable vk of block C");
  m.sch.parallel(m.loops[0]);
  EXPECT_EQ(m.sch.loop(m.loops[0]).for_kind, ForKind::kParallel);
  EXPECT_TRUE(contains(to_string(m.sch.func()), "for i in 0..16 parallel:"));
  expect_same_results(m.func, m.sch.func());
  expect_rejected(
      m.sch, [&] { m.sch.parallel(m.loops[0]); }, "parallel.loop_kind", "already parallel");
}

TEST(SchedLoopKind, VectorizeNeedsInnermostSpatialLoop) {
  Matmul m;
  expect_rejected(
      m.sch, [&] { m.sch.vectorize(m.loops[1]); }, "vectorize.not_innermost", "encloses other loops");
  expect_rejected(
      m.sch, [&] { m.sch.vectorize(m.loops[2]); }, "vectorize.reduction_loop", "reduction variable vk");
  m.sch.reorder({m.loops[2], m.loops[1]});
  m.sch.vectorize(m.loops[1]);
  EXPECT_TRUE(contains(to_string(m.sch.func()), "for j in 0..12 vectorized:"));
  expect_same_results(m.func, m.sch.func());
  // A vectorized loop stays innermost.
  expect_rejected(
      m.sch,
      [&] {
        m.sch.reorder({m.loops[1], m.loops[2]});
      },
      "reorder.vectorized_not_innermost", "would enclose other loops");
}

// An unrolled inner loop is straight-line code to the backend: the loop
// around it still vectorizes (a stride-2 read with its two phases unrolled
// inside the vector loop). A serial inner loop still keeps it from it.
TEST(SchedLoopKind, VectorizeMayEncloseUnrolledLoops) {
  Matmul m;
  expect_rejected(
      m.sch, [&] { m.sch.vectorize(m.loops[1]); }, "vectorize.not_innermost", "not unrolled");
  m.sch.unroll(m.loops[2]);
  m.sch.vectorize(m.loops[1]);
  EXPECT_TRUE(contains(to_string(m.sch.func()), "vectorized:\n")) << m.sch.func();
  expect_same_results(m.func, m.sch.func());
}

TEST(SchedLoopKind, UnrollAnyLoopButThreadBound) {
  Matmul m;
  m.sch.unroll(m.loops[2]);
  EXPECT_TRUE(contains(to_string(m.sch.func()), "for k in 0..8 unrolled:"));
  expect_same_results(m.func, m.sch.func());
  m.sch.bind(m.loops[0], "blockIdx.x");
  expect_rejected(
      m.sch, [&] { m.sch.unroll(m.loops[0]); }, "unroll.thread_bound", "bound to blockIdx.x");
}

TEST(SchedLoopKind, BindToThreads) {
  Matmul m;
  std::vector<LoopRV> j_parts = m.sch.split(m.loops[1], {3, 4});
  expect_rejected(
      m.sch, [&] { m.sch.bind(m.loops[0], "warp.x"); }, "bind.bad_tag", "not a thread tag");
  expect_rejected(
      m.sch, [&] { m.sch.bind(m.loops[2], "blockIdx.y"); }, "bind.reduction_loop", "reduction variable vk");
  m.sch.bind(m.loops[0], "blockIdx.x");
  m.sch.bind(j_parts[1], "threadIdx.x");
  expect_rejected(
      m.sch, [&] { m.sch.bind(m.loops[0], "blockIdx.y"); }, "bind.already_bound",
      "already bound to blockIdx.x");
  expect_rejected(
      m.sch, [&] { m.sch.bind(j_parts[0], "threadIdx.x"); }, "bind.tag_in_use",
      "loop j_1 (extent 4) in the same nest is bound to it");
  EXPECT_TRUE(contains(to_string(m.sch.func()), "for i in 0..16 thread_bound(blockIdx.x):"));
  expect_same_results(m.func, m.sch.func());
}

TEST(SchedAnnotate, LoopsAndBlocks) {
  Matmul m;
  m.sch.annotate(m.loops[0], "pragma_unroll_max", 16);
  m.sch.annotate(m.c, "meta_tile", 4);
  m.sch.parallel(m.loops[0]);  // the handle still names the annotated loop
  EXPECT_EQ(m.sch.loop(m.loops[0]).annotations.at("pragma_unroll_max"), 16);
  std::string text = to_string(m.sch.func());
  EXPECT_TRUE(contains(text, "pragma_unroll_max=16")) << text;
  EXPECT_TRUE(contains(text, "meta_tile=4")) << text;
  expect_rejected(
      m.sch, [&] { m.sch.annotate(m.c, "", 1); }, "annotate.empty_key", "key is empty");
  expect_same_results(m.func, m.sch.func());
}

// B[i, j] = A[i, j] below the diagonal: the inner loop's extent is i + 1.
PrimFunc make_triangle_func() {
  Buffer a = make_buffer("A", DType::kF32, {4, 4}), b = make_buffer("B", DType::kF32, {4, 4});
  Var i = var("i"), j = var("j"), vi = var("vi"), vj = var("vj");
  Stmt copy = make_test_block("B",
                              {{vi, {int_imm(0), int_imm(4)}, IterKind::kSpatial},
                               {vj, {int_imm(0), int_imm(4)}, IterKind::kSpatial}},
                              {i, j}, {}, make_store(b, load(a, {vi, vj}), {vi, vj}));
  Stmt nest = make_for(i, int_imm(0), int_imm(4), ForKind::kSerial,
                       make_for(j, int_imm(0), i + 1, ForKind::kSerial, copy));
  return make_prim_func("triangle", {a}, {b}, make_root_block(nest, {}));
}

TEST(SchedLoopShape, LoopsWithVariableExtents) {
  Schedule sch(make_triangle_func());
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
  expect_rejected(
      sch,
      [&] {
        sch.split(loops[1], {2, -1});
      },
      "split.non_constant_extent", "loop j");
  expect_rejected(
      sch, [&] { sch.vectorize(loops[1]); }, "vectorize.non_constant_extent", "loop j");
  expect_rejected(
      sch, [&] { sch.sample_perfect_tile(loops[1], 2, 4); }, "sample_perfect_tile.non_constant_extent",
      "loop j");
  expect_rejected(
      sch, [&] { sch.fuse(loops); }, "fuse.dependent_extent", "depends on loop i");
  expect_rejected(
      sch,
      [&] {
        sch.reorder({loops[1], loops[0]});
      },
      "reorder.dependent_extent", "which would move inside it");
  sch.parallel(loops[0]);
  sch.unroll(loops[1]);
  EXPECT_TRUE(contains(to_string(sch.func()), "for j in 0..i + 1 unrolled:")) << sch.func();
}

}  // namespace
}  // namespace tessel::sched_test
