// Tests of compute_at, reverse_compute_at and legal_compute_locations on the
// two-stage function, a padded convolution and a softmax.
#include "tests/unit/sched_block_test_util.h"

namespace tessel::block_test {
namespace {

using sched::compute_at;
using sched::reverse_compute_at;

int64_t extent_of(const PrimFunc& f, const VarNode* loop) {
  Stmt s = sched::find_loop(f, loop);
  const int64_t* e = as_const_int(s.as<ForNode>()->extent);
  return e ? *e : -1;
}

std::vector<int64_t> extents_below(const PrimFunc& f, const std::string& block, size_t skip) {
  std::vector<int64_t> out;
  std::vector<const VarNode*> loops = loops_of(f, block);
  for (size_t i = skip; i < loops.size(); ++i) out.push_back(extent_of(f, loops[i]));
  return out;
}

TEST(SchedBlockComputeAt, UnderEachLoopOfTheConsumer) {
  PrimFunc f = make_two_stage(6, 5, 4);
  std::vector<const VarNode*> c = loops_of(f, "C");
  // Under m: the row B[m, 0:4]; under n: the same row, recomputed; under k: one element.
  PrimFunc at_m = compute_at(f, "B", c[0]);
  EXPECT_EQ(loops_of(at_m, "B")[0], c[0]);
  EXPECT_EQ(extents_below(at_m, "B", 1), (std::vector<int64_t>{4}));
  expect_equivalent(f, at_m);
  PrimFunc at_n = compute_at(f, "B", c[1]);
  EXPECT_EQ(extents_below(at_n, "B", 2), (std::vector<int64_t>{4}));
  expect_equivalent(f, at_n);
  PrimFunc at_k = compute_at(f, "B", c[2]);
  EXPECT_EQ(loops_of(at_k, "B").size(), 3u);
  expect_equivalent(f, at_k);
}

TEST(SchedBlockComputeAt, UnderASplitLoopCoversOneTile) {
  PrimFunc f = make_two_stage(8, 3, 4);
  sched::SplitResult s = sched::split(f, loops_of(f, "C")[0], {2, 4}, true);
  PrimFunc g = compute_at(s.func, "B", s.loops[0].get());
  EXPECT_EQ(extents_below(g, "B", 1), (std::vector<int64_t>{4, 4}));
  expect_equivalent(f, g);
  // A non-exact split: the last tile is guarded by the block's predicate.
  PrimFunc h = make_two_stage(7, 3, 4);
  sched::SplitResult t = sched::split(h, loops_of(h, "C")[0], {2, 4}, false);
  PrimFunc k = compute_at(t.func, "B", t.loops[0].get());
  expect_equivalent(h, k);
}

TEST(SchedBlockComputeAt, UnderAFusedAndSplitLoopCoversConservatively) {
  PrimFunc f = make_two_stage(6, 4, 5);
  std::vector<const VarNode*> c = loops_of(f, "C");
  sched::FuseResult fused = sched::fuse(f, {c[0], c[1]});
  sched::SplitResult s = sched::split(fused.func, fused.loop.get(), {8, 3}, true);
  // Three consecutive (m, n) points span one or two rows of B.
  expect_equivalent(f, compute_at(s.func, "B", s.loops[0].get()));
  expect_equivalent(f, compute_at(s.func, "B", s.loops[1].get()));
}

TEST(SchedBlockComputeAt, PaddedConvolutionComputesTheHalo) {
  PrimFunc f = make_conv(6, 5);
  std::vector<const VarNode*> y = loops_of(f, "Y");
  PrimFunc row = compute_at(f, "pad", y[0]);
  EXPECT_EQ(extents_below(row, "pad", 1), (std::vector<int64_t>{3, 7}));
  expect_equivalent(f, row);
  PrimFunc point = compute_at(f, "pad", y[1]);
  EXPECT_EQ(extents_below(point, "pad", 2), (std::vector<int64_t>{3, 3}));
  expect_equivalent(f, point);
  sched::SplitResult s = sched::split(f, y[1], {-1, 2}, false);
  PrimFunc tile = compute_at(s.func, "pad", s.loops[1].get());
  expect_equivalent(f, tile);
}

TEST(SchedBlockComputeAt, SoftmaxStagesUnderOneRowLoop) {
  PrimFunc f = make_softmax(4, 6);
  const VarNode* row = loops_of(f, "out")[0];
  PrimFunc g = compute_at(f, "sm", row);
  g = compute_at(g, "mx", row);
  EXPECT_EQ(loops_of(g, "mx")[0], row);
  EXPECT_EQ(loops_of(g, "sm")[0], row);
  EXPECT_EQ(sched::root_item(g, &block_of(g, "mx")), 0);
  expect_equivalent(f, g, 1e-6);
}

TEST(SchedBlockComputeAt, Rejections) {
  PrimFunc f = make_two_stage(6, 5, 4);
  std::vector<const VarNode*> c = loops_of(f, "C");
  expect_error([&] { compute_at(f, "nope", c[0]); }, "compute_at.no_block", "no block named 'nope'");
  Var stray = var("stray");
  expect_error([&] { compute_at(f, "B", stray.get()); }, "compute_at.no_loop", "no loop over 'stray'");
  expect_error([&] { compute_at(f, "B", loops_of(f, "B")[1]); }, "compute_at.loop_in_own_nest",
               "block 'B' itself");
  expect_error([&] { compute_at(f, "C", loops_of(f, "B")[0]); }, "compute_at.output_block",
               "function output 'C'");
  PrimFunc s = make_softmax(4, 6);
  expect_error([&] { compute_at(s, "mx", loops_of(s, "out")[0]); }, "compute_at.consumer_outside_loop",
               "consumer 'sm' of block 'mx' is not under loop");
  PrimFunc r = make_reversed(5);
  expect_error([&] { compute_at(r, "T", loops_of(r, "O")[0]); }, "compute_at.write_not_trivial", "plain");
  PrimFunc split_init = sched::decompose_reduction(s, "mx", loops_of(s, "mx")[0]).func;
  expect_error([&] { compute_at(split_init, "mx_init", loops_of(split_init, "sm")[0]); },
               "compute_at.multiple_writers", "buffer 'mx'");
  // After moving sm under out's row loop, mx cannot go below sm's own loops there.
  PrimFunc g = compute_at(s, "sm", loops_of(s, "out")[0]);
  expect_error([&] { compute_at(g, "mx", loops_of(g, "out")[1]); }, "compute_at.consumer_outside_loop",
               "'sm'");
}

TEST(SchedBlockReverseComputeAt, ConsumerUnderTheProducerLoops) {
  PrimFunc f = make_matmul_relu(4, 5, 3);
  std::vector<const VarNode*> c = loops_of(f, "C");
  PrimFunc at_j = reverse_compute_at(f, "D", c[1]);
  EXPECT_EQ(loops_of(at_j, "D").size(), 2u);
  expect_equivalent(f, at_j);
  PrimFunc at_i = reverse_compute_at(f, "D", c[0]);
  EXPECT_EQ(extents_below(at_i, "D", 1), (std::vector<int64_t>{5}));
  expect_equivalent(f, at_i);
  // A reduction consumer whose whole reduction range is produced below the loop.
  PrimFunc t = make_two_stage(6, 5, 4);
  PrimFunc g = reverse_compute_at(t, "C", loops_of(t, "B")[0]);
  expect_equivalent(t, g);
  sched::SplitResult s = sched::split(t, loops_of(t, "B")[0], {3, 2}, true);
  expect_equivalent(t, reverse_compute_at(s.func, "C", s.loops[0].get()));
}

TEST(SchedBlockReverseComputeAt, UnderAFusedProducerLoop) {
  PrimFunc t = make_two_stage(6, 5, 4);
  std::vector<const VarNode*> b = loops_of(t, "B");
  sched::FuseResult fused = sched::fuse(t, {b[0], b[1]});
  // Tiles of 4 are whole rows of B: C computes that row.
  sched::SplitResult rows = sched::split(fused.func, fused.loop.get(), {6, 4}, true);
  expect_equivalent(t, reverse_compute_at(rows.func, "C", rows.loops[0].get()));
  // Tiles of 3 straddle rows: the produced region is no box, and C must not read the rest.
  sched::SplitResult straddle = sched::split(fused.func, fused.loop.get(), {8, 3}, true);
  expect_error([&] { reverse_compute_at(straddle.func, "C", straddle.loops[0].get()); },
               "reverse_compute_at.inexact_region", "producer 'B'");
}

// A consumer reading a dimension at a computed index (a flat row's h * 12 + w)
// follows its producer's loops where those write that dimension whole: under
// the channel loop it reads the channel's whole flat row, over every (h, w).
TEST(SchedBlockReverseComputeAt, AComputedIndexIsReadWhereItsDimensionIsWrittenWhole) {
  PrimFunc f = make_flat_plane(3, 4, 10, 12);
  PrimFunc g = reverse_compute_at(f, "Y", loops_of(f, "F")[0]);
  EXPECT_EQ(loops_of(g, "Y")[0], loops_of(f, "F")[0]);
  EXPECT_EQ(extents_below(g, "Y", 1), (std::vector<int64_t>{4, 10}));
  expect_equivalent(f, g);
  // Tiles of the flat row inside the channel loop: the row is whole under the channel loop only.
  sched::SplitResult tiles = sched::split(f, loops_of(f, "F")[1], {3, 16}, true);
  expect_equivalent(f, reverse_compute_at(tiles.func, "Y", loops_of(tiles.func, "F")[0]));
  expect_error([&] { reverse_compute_at(tiles.func, "Y", tiles.loops[0].get()); },
               "reverse_compute_at.read_not_trivial", "do not write all of it");
}

TEST(SchedBlockReverseComputeAt, Rejections) {
  PrimFunc f = make_matmul_relu(4, 5, 3);
  std::vector<const VarNode*> c = loops_of(f, "C");
  expect_error([&] { reverse_compute_at(f, "D", c[2]); }, "reverse_compute_at.inside_reduction",
               "reduction loop of producer 'C'");
  expect_error([&] { reverse_compute_at(f, "D", loops_of(f, "D")[0]); },
               "reverse_compute_at.loop_in_own_nest", "block 'D' itself");
  PrimFunc t = make_two_stage(6, 5, 4);
  expect_error([&] { reverse_compute_at(t, "C", loops_of(t, "B")[1]); }, "reverse_compute_at.reduction_split",
               "piecewise");
  PrimFunc conv = make_conv(5, 5);
  expect_error([&] { reverse_compute_at(conv, "Y", loops_of(conv, "pad")[0]); },
               "reverse_compute_at.read_not_trivial", "plain");
  PrimFunc s = make_softmax(3, 4);
  expect_error([&] { reverse_compute_at(s, "sm", loops_of(s, "out")[0]); },
               "reverse_compute_at.producer_outside_loop", "no producer of block 'sm'");
  expect_error([&] { reverse_compute_at(s, "out", loops_of(s, "mx")[0]); }, "reverse_compute_at.dependence",
               "'sm'");
}

TEST(SchedBlockComputeLocations, LegalLoopsOutermostFirst) {
  PrimFunc f = make_two_stage(6, 5, 4);
  EXPECT_EQ(sched::legal_compute_locations(f, "B"), loops_of(f, "C"));
  PrimFunc s = make_softmax(3, 4);
  EXPECT_TRUE(sched::legal_compute_locations(s, "mx").empty());
  EXPECT_EQ(sched::legal_compute_locations(s, "sm"), loops_of(s, "out"));
  EXPECT_TRUE(sched::legal_compute_locations(f, "C").empty());
}

}  // namespace
}  // namespace tessel::block_test

namespace tessel::block_test {
namespace {

// Functions with split loops too, so that locations inside tiles are tried.
std::vector<PrimFunc> location_cases() {
  std::vector<PrimFunc> cases = {make_two_stage(6, 5, 4), make_conv(5, 4), make_softmax(3, 6),
                                 make_matmul_relu(4, 6, 3), make_flat_plane(3, 4, 5, 6)};
  PrimFunc conv = make_conv(5, 4);
  cases.push_back(sched::split(conv, loops_of(conv, "Y")[1], {2, 2}, false).func);
  PrimFunc relu = make_matmul_relu(4, 6, 3);
  cases.push_back(sched::split(relu, loops_of(relu, "C")[1], {3, 2}, true).func);
  PrimFunc two = make_two_stage(6, 5, 4);
  cases.push_back(sched::split(two, loops_of(two, "B")[0], {2, 3}, true).func);
  return cases;
}

TEST(SchedBlockComputeLocations, EveryAcceptedMoveComputesTheSame) {
  int accepted = 0;
  for (const PrimFunc& f : location_cases()) {
    for (const Stmt& b : sched::all_blocks(f)) {
      const std::string& name = b.as<BlockNode>()->name;
      for (const VarNode* loop : sched::legal_compute_locations(f, name)) {
        expect_equivalent(f, compute_at(f, name, loop), 1e-6);
        ++accepted;
      }
      // Every loop of every other block, for the reverse direction.
      for (const Stmt& other : sched::all_blocks(f)) {
        for (const VarNode* loop : loops_of(f, other.as<BlockNode>()->name)) {
          try {
            expect_equivalent(f, reverse_compute_at(f, name, loop), 1e-6);
            ++accepted;
          } catch (const ScheduleError&) {
          }
        }
      }
    }
  }
  EXPECT_GE(accepted, 30);
}

}  // namespace
}  // namespace tessel::block_test
