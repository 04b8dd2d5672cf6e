// The tuner's search of a task and its task scheduler: the default schedule
// is the first candidate, nothing is proposed twice, a cost model that knows
// the answer steers the proposals to it; the scheduler gives every task a
// first round, then the task whose improvement lowers the estimate most.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "ir/tensor/structural.h"
#include "tests/unit/sched_workloads_util.h"
#include "tuner/scheduler/task_scheduler.h"
#include "tuner/search/evolutionary.h"

namespace tessel::tune {
namespace {

using sched_workloads::lower_workload;
using sched_workloads::Workload;

sched::CpuScheduleOptions one_thread() {
  sched::CpuScheduleOptions o;
  o.num_threads = 1;
  return o;
}

// Scores candidates by how close their tile is to 2 rows: a model that "knows" the best tile.
class RowsOracle final : public CostModel {
 public:
  explicit RowsOracle(const std::vector<Candidate>* pool) : pool_(pool) {}
  void update(const Measured&) override {}
  std::vector<double> predict(const std::vector<Features>& features) const override {
    std::vector<double> out;
    for (const Features& f : features) {
      double score = -1e9;
      for (const Candidate& c : *pool_)
        if (c.features == f) score = -std::abs(double(c.knobs.at("mm.rows")) - 2);
      out.push_back(score);
    }
    return out;
  }
  void save(const std::string&) const override {}
  void load(const std::string&) override {}
  std::string name() const override { return "rows oracle"; }

 private:
  const std::vector<Candidate>* pool_;
};

TEST(TunerSearch, TheDefaultScheduleComesFirstAndNothingIsProposedTwice) {
  tir::PrimFunc f = lower_workload(Workload::kMatmul);
  TaskSearch search(f, one_thread(), 7);
  std::unique_ptr<CostModel> random = make_random_model(1);
  std::vector<Candidate> first = search.propose(*random, false, 8);
  ASSERT_EQ(first.size(), 1u);
  std::optional<Candidate> baseline = make_candidate(f, one_thread(), {});
  ASSERT_TRUE(baseline);
  EXPECT_EQ(first[0].hash, baseline->hash);
  search.record(first[0], 1.0, true);
  std::set<uint64_t> seen{first[0].hash};
  for (int round = 0; round < 6 && !search.exhausted(); ++round) {
    for (const Candidate& c : search.propose(*random, true, 4)) {
      EXPECT_TRUE(seen.insert(c.hash).second) << "proposed twice: " << c.trace;
      search.record(c, 1.0, true);
    }
  }
  EXPECT_GT(seen.size(), 5u);
}

TEST(TunerSearch, AModelThatKnowsTheAnswerSteersTheProposals) {
  tir::PrimFunc f = lower_workload(Workload::kMatmul);
  SearchOptions options;
  options.epsilon = 0;
  TaskSearch search(f, one_thread(), 3, options);
  std::vector<Candidate> pool;
  // Every candidate the search could make, for the oracle to recognise.
  for (uint64_t seed = 0; seed < 200; ++seed)
    if (std::optional<Candidate> c = make_candidate(f, one_thread(), {}, seed)) pool.push_back(*c);
  RowsOracle oracle(&pool);
  search.record(search.propose(oracle, false, 1).at(0), 1.0, true);
  std::vector<Candidate> picks = search.propose(oracle, true, 2);
  ASSERT_FALSE(picks.empty());
  for (const Candidate& c : picks) EXPECT_EQ(c.knobs.at("mm.rows"), 2) << c.trace;
}

TEST(TaskScheduler, EveryTaskGetsAFirstRoundThenTheHeaviestGradient) {
  TaskSchedulerOptions o;
  o.epsilon = 0;
  TaskScheduler scheduler({1, 4}, 0, o);
  size_t a = scheduler.next();
  scheduler.report(a, 1, 1.0);
  size_t b = scheduler.next();
  EXPECT_NE(a, b);
  scheduler.report(b, 1, 1.0);
  // Same time per run, task 1 runs 4 times per inference: it pays more.
  EXPECT_EQ(scheduler.next(), 1u);
  EXPECT_DOUBLE_EQ(scheduler.estimated_ms(), 5.0);
  scheduler.set_weight(1, 0);  // a task the model will not run: it no longer pays
  EXPECT_EQ(scheduler.next(), 0u);
  EXPECT_DOUBLE_EQ(scheduler.estimated_ms(), 1.0);
  scheduler.set_weight(1, 4);
  scheduler.mark_done(1);
  EXPECT_EQ(scheduler.next(), 0u);
  scheduler.mark_done(0);
  EXPECT_EQ(scheduler.next(), SIZE_MAX);
}

TEST(TaskScheduler, ATaskThatStoppedImprovingYieldsToOneThatStillDoes) {
  TaskSchedulerOptions o;
  o.epsilon = 0;
  o.backward_weight = 1;  // the recent improvement alone
  TaskScheduler scheduler({1, 1}, 0, o);
  scheduler.report(0, 1, 1.0);
  scheduler.report(1, 1, 1.0);
  for (int r = 0; r < 4; ++r) {
    scheduler.report(0, 8, 1.0);                 // flat
    scheduler.report(1, 8, 1.0 - 0.1 * (r + 1));  // still falling
  }
  EXPECT_LT(scheduler.gradient(1), scheduler.gradient(0));
  EXPECT_EQ(scheduler.next(), 1u);
}

}  // namespace
}  // namespace tessel::tune
