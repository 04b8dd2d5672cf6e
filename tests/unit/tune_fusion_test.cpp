// A `--fusion tuned` session's decisions (src/driver/tune_fusion.h): per
// region, each side's kernels' applied times added; aggressive's side only
// when it is faster by the margin a tuned schedule needs; a region with an
// unmeasured task undecided; a region repeated in the model decided once.
#include "src/driver/tune_fusion.h"

#include <gtest/gtest.h>

namespace tessel::driver {
namespace {

TunedTask task(const std::string& key, double default_ms, double best_ms) {
  TunedTask t;
  t.key = key;
  t.default_ms = default_ms;
  t.best_ms = best_ms;
  return t;
}

FusionRegionChoice region(std::vector<std::string> base, std::vector<std::string> alternative) {
  FusionRegionChoice r;
  r.base_tasks = std::move(base);
  r.alternative_tasks = std::move(alternative);
  r.key = fusion_region_key(r.base_tasks, r.alternative_tasks);
  return r;
}

TEST(TuneFusion, AggressivesSideIsTakenOnlyWhenClearlyFaster) {
  // gemm + softmax = 1.0 ms against 0.98 ms fused: within the margin.
  std::vector<TunedTask> tasks = {task("gemm", 0.8, 0.8), task("softmax", 0.2, 0.2), task("fused", 0.98, 0.98)};
  std::vector<FusionRegionChoice> regions = {region({"gemm", "softmax"}, {"fused"})};
  std::vector<tune::FusionRecord> close = decide_fusion(regions, tasks, "llvm", "0.1.0");
  ASSERT_EQ(close.size(), 1u);
  EXPECT_FALSE(close[0].take_alternative);
  EXPECT_DOUBLE_EQ(close[0].base_ms, 1.0);
  EXPECT_DOUBLE_EQ(close[0].alternative_ms, 0.98);
  EXPECT_EQ(close[0].target, "llvm");

  // A tuned schedule of the fused task (0.90, applied: 8% better than its default) decides it.
  tasks[2].best_ms = 0.90;
  std::vector<tune::FusionRecord> clear = decide_fusion(regions, tasks, "llvm", "0.1.0");
  ASSERT_EQ(clear.size(), 1u);
  EXPECT_TRUE(clear[0].take_alternative);
  EXPECT_DOUBLE_EQ(clear[0].alternative_ms, 0.90);
}

TEST(TuneFusion, UnmeasuredRegionsAreUndecidedAndRepeatedOnesDecidedOnce) {
  std::vector<TunedTask> tasks = {task("a", 1.0, 1.0), task("b", 1.0, 1.0), task("ab", 1.5, 1.5), task("c", 0, 0)};
  std::vector<FusionRegionChoice> regions = {region({"a", "b"}, {"ab"}), region({"a", "c"}, {"ab"}),
                                             region({"a", "b"}, {"ab"}), region({"a", "b"}, {"missing"})};
  std::vector<tune::FusionRecord> decided = decide_fusion(regions, tasks, "llvm", "0.1.0");
  ASSERT_EQ(decided.size(), 1u);  // "c" unmeasured, the third a repeat, "missing" never tuned
  EXPECT_TRUE(decided[0].take_alternative);
  EXPECT_EQ(decided[0].base, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(decided[0].runs, 2);

  // The estimate counts the decision once per run of the region: 2 x (1.5 - 2.0).
  TuneSummary summary;
  summary.tasks = {task("a", 1.0, 1.0), task("b", 1.0, 1.0)};
  summary.tasks[0].weight = summary.tasks[1].weight = 2;
  summary.fusion = decided;
  EXPECT_DOUBLE_EQ(summary.default_ms(), 4.0);
  EXPECT_DOUBLE_EQ(summary.tuned_ms(), 3.0);
}

}  // namespace
}  // namespace tessel::driver
