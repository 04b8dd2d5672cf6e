// What every cost model shares, and the random baseline.
#include "tuner/cost_model/cost_model.h"

#include <cmath>
#include <fstream>
#include <random>

#include "ir/core/diagnostics.h"

namespace tessel::tune {

void Measured::add(Features f, double t, int64_t g) {
  TESSEL_USER_CHECK(std::isfinite(t) && t >= 0, Span{}) << "a measured throughput of " << t;
  features.push_back(std::move(f));
  throughput.push_back(t);
  group.push_back(g);
}

double pairwise_accuracy(const std::vector<double>& predicted, const std::vector<double>& throughput,
                         const std::vector<int64_t>& group) {
  TESSEL_ICHECK(predicted.size() == throughput.size() && group.size() == throughput.size())
      << "pairwise accuracy of " << predicted.size() << " predictions for " << throughput.size() << " measurements";
  double agree = 0, pairs = 0;
  for (size_t i = 0; i < throughput.size(); ++i)
    for (size_t j = i + 1; j < throughput.size(); ++j) {
      if (group[i] != group[j] || throughput[i] == throughput[j]) continue;
      pairs += 1;
      bool truth = throughput[i] > throughput[j];
      if (predicted[i] == predicted[j]) agree += 0.5;  // a tie is a coin
      else if ((predicted[i] > predicted[j]) == truth) agree += 1;
    }
  return pairs > 0 ? agree / pairs : 0.5;
}

namespace {

constexpr const char* kRandomHeader = "tessel-cost-model random 1";

class RandomModel final : public CostModel {
 public:
  explicit RandomModel(uint64_t seed) : seed_(seed), rng_(seed) {}
  void update(const Measured&) override {}
  std::vector<double> predict(const std::vector<Features>& features) const override {
    std::uniform_real_distribution<double> score(0.0, 1.0);
    std::vector<double> out;
    for (size_t i = 0; i < features.size(); ++i) out.push_back(score(rng_));
    return out;
  }
  void save(const std::string& path) const override {
    std::ofstream out(path);
    out << kRandomHeader << "\n" << seed_ << "\n";
    TESSEL_USER_CHECK(out.good(), Span{}) << "cannot write the cost model " << path;
  }
  void load(const std::string& path) override {
    std::ifstream in(path);
    std::string header;
    uint64_t seed = 0;
    TESSEL_USER_CHECK(std::getline(in, header) && header == kRandomHeader && (in >> seed), Span{})
        << path << " is not a Tessel random cost model";
    seed_ = seed;
    rng_.seed(seed);
  }
  std::string name() const override { return "random"; }

 private:
  uint64_t seed_;
  mutable std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<CostModel> make_random_model(uint64_t seed) { return std::make_unique<RandomModel>(seed); }

}  // namespace tessel::tune
