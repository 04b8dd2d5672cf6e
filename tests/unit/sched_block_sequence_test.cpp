// Random sequences of block primitives (and splits) on the test functions: after
// every accepted step the function still verifies and computes what the
// original does. Seeded, so a failure replays.
#include "tests/unit/sched_block_test_util.h"

namespace tessel::block_test {
namespace {

using Step = std::function<PrimFunc()>;

// Every request one might make on f, accepted or not.
std::vector<Step> candidate_steps(const PrimFunc& f) {
  std::vector<Step> steps;
  for (const Stmt& s : sched::all_blocks(f)) {
    const BlockNode& b = *s.as<BlockNode>();
    std::string name = b.name;
    steps.push_back([f, name] { return sched::compute_inline(f, name); });
    steps.push_back([f, name] { return sched::reverse_compute_inline(f, name); });
    for (int i = 0; i < int(b.reads.size()); ++i)
      steps.push_back([f, name, i] { return sched::cache_read(f, name, i, MemScope::kShared).func; });
    for (int i = 0; i < int(b.writes.size()); ++i)
      steps.push_back([f, name, i] { return sched::cache_write(f, name, i, MemScope::kLocal).func; });
    for (const Stmt& other : sched::all_blocks(f)) {
      for (const VarNode* loop : loops_of(f, other.as<BlockNode>()->name)) {
        steps.push_back([f, name, loop] { return sched::compute_at(f, name, loop); });
        steps.push_back([f, name, loop] { return sched::reverse_compute_at(f, name, loop); });
      }
    }
    for (const VarNode* loop : loops_of(f, name)) {
      steps.push_back([f, name, loop] { return sched::decompose_reduction(f, name, loop).func; });
      steps.push_back([f, loop] { return sched::rfactor(f, loop, 0).func; });
      steps.push_back([f, loop] { return sched::split(f, loop, {2, -1}, false).func; });
    }
  }
  return steps;
}

TEST(SchedBlockSequence, RandomAcceptedStepsKeepTheResult) {
  std::vector<PrimFunc> starts = {make_two_stage(6, 5, 4), make_conv(5, 4), make_softmax(3, 5),
                                  make_matmul_relu(4, 5, 4)};
  std::mt19937_64 rng(2026);
  int applied = 0;
  for (int sequence = 0; sequence < 64; ++sequence) {
    const PrimFunc& original = starts[sequence % starts.size()];
    PrimFunc f = original;
    for (int step = 0; step < 6; ++step) {
      std::vector<Step> steps = candidate_steps(f);
      std::shuffle(steps.begin(), steps.end(), rng);
      for (const Step& s : steps) {
        PrimFunc next;
        try {
          next = s();
        } catch (const ScheduleError&) {
          continue;
        }
        expect_equivalent(original, next, 1e-5);
        if (::testing::Test::HasFailure()) return;
        f = next;
        ++applied;
        break;
      }
    }
  }
  EXPECT_GE(applied, 300);
}

}  // namespace
}  // namespace tessel::block_test
