// The tuner's cost models (tuner/cost_model/cost_model.h): XGBoost learns a
// synthetic ranking well enough to order candidates it has not seen, the
// random baseline does not, a saved model predicts what it did before, and
// bad input (a corrupt file, a feature vector of the wrong length) is a user
// error.
#include "tuner/cost_model/cost_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "tessel/error.h"

namespace tessel::tune {
namespace {

// Candidates of four tasks: 8 features in [0, 1), of which three decide the
// throughput (a peak at tile-like optima, scaled per task), plus 2% noise.
Measured synthetic(size_t per_task, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<double> noise(0.0, 0.02);
  Measured m;
  for (int64_t task = 0; task < 4; ++task)
    for (size_t i = 0; i < per_task; ++i) {
      Features f(8);
      for (float& x : f) x = u(rng);
      double t = (1.0 + task) / (1.0 + 8 * std::pow(f[0] - 0.3, 2) + 16 * std::pow(f[1] - 0.6, 2)) * (1 + 0.5 * f[2]);
      m.add(f, t * (1 + noise(rng)), task);
    }
  return m;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tessel_" + std::to_string(getpid()) + "_" + name)).string();
}

TEST(CostModel, PairwiseAccuracyCountsOrderedPairsWithinATask) {
  // Task 0: 3 > 2 > 1 predicted as 3 > 1 > 2 (2 of 3 pairs); task 1: one pair, reversed.
  std::vector<double> truth = {3, 2, 1, 5, 4}, predicted = {0.9, 0.1, 0.2, 0.1, 0.2};
  std::vector<int64_t> group = {0, 0, 0, 1, 1};
  EXPECT_DOUBLE_EQ(pairwise_accuracy(predicted, truth, group), 2.0 / 4.0);
  EXPECT_DOUBLE_EQ(pairwise_accuracy(truth, truth, group), 1.0);
  EXPECT_DOUBLE_EQ(pairwise_accuracy({1, 1}, {2, 1}, {0, 0}), 0.5);  // a tie is a coin
}

TEST(CostModel, XGBoostLearnsASyntheticRankingTheRandomModelDoesNot) {
  Measured train = synthetic(150, 1), held_out = synthetic(50, 2);
  std::unique_ptr<CostModel> xgb = make_xgboost_model(), random = make_random_model(7);
  EXPECT_EQ(xgb->predict(held_out.features), std::vector<double>(held_out.size(), 0.0)) << "untrained: no preference";
  xgb->update(train);
  random->update(train);
  double learned = pairwise_accuracy(xgb->predict(held_out.features), held_out.throughput, held_out.group);
  double guessed = pairwise_accuracy(random->predict(held_out.features), held_out.throughput, held_out.group);
  EXPECT_GT(learned, 0.85);
  EXPECT_GT(guessed, 0.4);
  EXPECT_LT(guessed, 0.6);
  EXPECT_EQ(xgb->name(), "xgboost");
  EXPECT_EQ(random->name(), "random");
}

TEST(CostModel, ASavedModelPredictsWhatItDidBefore) {
  std::unique_ptr<CostModel> xgb = make_xgboost_model();
  xgb->update(synthetic(60, 3));
  Measured probe = synthetic(10, 4);
  std::string path = temp_path("model.tcm");
  xgb->save(path);
  std::unique_ptr<CostModel> loaded = make_xgboost_model();
  loaded->load(path);
  std::vector<double> before = xgb->predict(probe.features), after = loaded->predict(probe.features);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_NEAR(before[i], after[i], 1e-6) << i;
  std::unique_ptr<CostModel> random = make_random_model(11), again = make_random_model(0);
  random->save(path);
  again->load(path);
  EXPECT_EQ(random->predict(probe.features), again->predict(probe.features));
  std::filesystem::remove(path);
}

TEST(CostModel, BadInputIsAUserError) {
  std::unique_ptr<CostModel> xgb = make_xgboost_model();
  std::string path = temp_path("corrupt.tcm");
  std::ofstream(path) << "tessel-cost-model xgboost 1\n8\n{\"not\": \"a model\"";
  EXPECT_THROW(xgb->load(path), UserError);
  std::ofstream(path) << "tessel-cost-model xgboost 1\nwide\n{}";
  EXPECT_THROW(xgb->load(path), UserError);
  std::ofstream(path) << "something else\n";
  EXPECT_THROW(xgb->load(path), UserError);
  EXPECT_THROW(make_random_model(1)->load(path), UserError);
  EXPECT_THROW(xgb->load(temp_path("missing.tcm")), UserError);
  EXPECT_THROW(xgb->save(path), UserError) << "nothing trained to save";
  xgb->update(synthetic(20, 5));
  EXPECT_THROW(xgb->predict({Features(3, 0.5f)}), UserError) << "3 features for a model of 8";
  Measured bad;
  EXPECT_THROW(bad.add(Features(8), std::nan(""), 0), UserError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tessel::tune
