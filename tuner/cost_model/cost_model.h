// The tuner's cost model: it learns from measured candidates (a feature
// vector each, and how fast it ran) to rank the candidates of a task that
// were not measured, so that measurement goes to the promising ones. Behind a
// small interface: update with what was measured, predict scores (higher:
// faster; only their order within a task means anything), save and load.
//
// XGBoost with a pairwise ranking objective is the default (the ranking is
// within a task: a task's candidates are compared with one another, never
// with another task's); a random model is the baseline search efficiency is
// measured against.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessel::tune {

using Features = std::vector<float>;

// Measured candidates: features[i] ran at throughput[i] (higher is better,
// e.g. FLOP per second) and belongs to task group[i].
struct Measured {
  std::vector<Features> features;
  std::vector<double> throughput;
  std::vector<int64_t> group;

  size_t size() const { return features.size(); }
  void add(Features f, double t, int64_t g);
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Adds the batch to what the model has learned from and retrains.
  virtual void update(const Measured& batch) = 0;
  virtual std::vector<double> predict(const std::vector<Features>& features) const = 0;
  // A user error when the file cannot be written or read, or is not a model of this kind.
  virtual void save(const std::string& path) const = 0;
  virtual void load(const std::string& path) = 0;
  virtual std::string name() const = 0;
};

struct XGBoostOptions {
  int rounds = 60;         // boosting rounds per retraining
  int max_depth = 6;
  double learning_rate = 0.2;
  uint64_t seed = 0;
};

// Retrains from scratch on every candidate measured so far at each update
// (the data stays small: thousands of rows). A loaded model predicts until
// its first update, which trains on this instance's data only.
std::unique_ptr<CostModel> make_xgboost_model(const XGBoostOptions& options = {});
// Uniform random scores from a seeded generator; learns nothing.
std::unique_ptr<CostModel> make_random_model(uint64_t seed);

// Of the pairs of candidates of one task whose throughputs differ, the share
// that `predicted` orders the same way: 1 is a perfect ranking, 0.5 a coin.
// Reported after each round on the batch the model had not seen yet.
double pairwise_accuracy(const std::vector<double>& predicted, const std::vector<double>& throughput,
                         const std::vector<int64_t>& group);

}  // namespace tessel::tune
