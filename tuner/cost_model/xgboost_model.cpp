// The default cost model: gradient-boosted trees (XGBoost's C API) with a
// pairwise ranking objective, the candidates of one task forming one query.
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>

#include "ir/core/diagnostics.h"
#include "tuner/cost_model/cost_model.h"

namespace tessel::tune {

namespace {

// The first line of a saved model; the rest is XGBoost's JSON.
constexpr const char* kHeader = "tessel-cost-model xgboost 1\n";

void check_xgb(int rc, const char* what) {
  TESSEL_USER_CHECK(rc == 0, Span{}) << "XGBoost: " << what << ": " << XGBGetLastError();
}

// A row-major matrix of the feature vectors, all of one length.
class FeatureMatrix {
 public:
  FeatureMatrix(const std::vector<const Features*>& rows, size_t columns) {
    values_.reserve(rows.size() * columns);
    for (const Features* f : rows) {
      TESSEL_USER_CHECK(f->size() == columns, Span{})
          << "a feature vector of " << f->size() << " values where the cost model has " << columns;
      values_.insert(values_.end(), f->begin(), f->end());
    }
    check_xgb(XGDMatrixCreateFromMat(values_.data(), rows.size(), columns, NAN, &handle_), "a feature matrix");
  }
  ~FeatureMatrix() { XGDMatrixFree(handle_); }
  FeatureMatrix(const FeatureMatrix&) = delete;
  FeatureMatrix& operator=(const FeatureMatrix&) = delete;
  DMatrixHandle handle() const { return handle_; }

 private:
  std::vector<float> values_;
  DMatrixHandle handle_ = nullptr;
};

class XGBoostModel final : public CostModel {
 public:
  explicit XGBoostModel(const XGBoostOptions& options) : options_(options) {}
  ~XGBoostModel() override { free_booster(); }

  void update(const Measured& batch) override {
    for (size_t i = 0; i < batch.size(); ++i) data_.add(batch.features[i], batch.throughput[i], batch.group[i]);
    if (data_.size() == 0) return;
    if (columns_ == 0) columns_ = data_.features[0].size();
    train();
  }

  std::vector<double> predict(const std::vector<Features>& features) const override {
    if (!booster_ || features.empty()) return std::vector<double>(features.size(), 0.0);
    std::vector<const Features*> rows;
    for (const Features& f : features) rows.push_back(&f);
    FeatureMatrix m(rows, columns_);
    bst_ulong length = 0;
    const float* scores = nullptr;
    check_xgb(XGBoosterPredict(booster_, m.handle(), 0, 0, 0, &length, &scores), "predict");
    return std::vector<double>(scores, scores + length);
  }

  void save(const std::string& path) const override {
    TESSEL_USER_CHECK(booster_, Span{}) << "the cost model has not been trained: nothing to save to " << path;
    bst_ulong length = 0;
    const char* bytes = nullptr;
    check_xgb(XGBoosterSaveModelToBuffer(booster_, R"({"format": "json"})", &length, &bytes), "save");
    std::ofstream out(path, std::ios::binary);
    out << kHeader << columns_ << "\n";
    out.write(bytes, std::streamsize(length));
    TESSEL_USER_CHECK(out.good(), Span{}) << "cannot write the cost model " << path;
  }

  void load(const std::string& path) override {
    std::ifstream in(path, std::ios::binary);
    TESSEL_USER_CHECK(in.good(), Span{}) << "cannot read the cost model " << path;
    std::string header, columns;
    std::getline(in, header);
    std::getline(in, columns);
    char* end = nullptr;
    unsigned long long width = std::strtoull(columns.c_str(), &end, 10);
    TESSEL_USER_CHECK(header + "\n" == kHeader && !columns.empty() && end && *end == 0 && width > 0, Span{})
        << path << " is not a Tessel XGBoost cost model";
    std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    free_booster();
    check_xgb(XGBoosterCreate(nullptr, 0, &booster_), "a booster");
    int rc = XGBoosterLoadModelFromBuffer(booster_, body.data(), body.size());
    if (rc != 0) free_booster();
    TESSEL_USER_CHECK(rc == 0, Span{}) << path << " is not a Tessel XGBoost cost model: " << XGBGetLastError();
    columns_ = size_t(width);
  }

  std::string name() const override { return "xgboost"; }

 private:
  void free_booster() {
    if (booster_) XGBoosterFree(booster_);
    booster_ = nullptr;
  }

  // Rows ordered by task (a ranking query must be contiguous); each task's
  // throughputs divided by its best, so that tasks of different speeds
  // weigh alike.
  void train() {
    std::vector<size_t> order(data_.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return data_.group[a] < data_.group[b]; });
    std::map<int64_t, double> best;
    for (size_t i = 0; i < data_.size(); ++i) best[data_.group[i]] = std::max(best[data_.group[i]], data_.throughput[i]);
    std::vector<const Features*> rows;
    std::vector<float> labels;
    std::vector<unsigned> query_sizes;
    for (size_t k = 0; k < order.size(); ++k) {
      size_t i = order[k];
      rows.push_back(&data_.features[i]);
      double top = best[data_.group[i]];
      labels.push_back(top > 0 ? float(data_.throughput[i] / top) : 0.0f);
      if (k == 0 || data_.group[order[k - 1]] != data_.group[i]) query_sizes.push_back(0);
      ++query_sizes.back();
    }
    FeatureMatrix m(rows, columns_);
    check_xgb(XGDMatrixSetFloatInfo(m.handle(), "label", labels.data(), labels.size()), "labels");
    check_xgb(XGDMatrixSetUIntInfo(m.handle(), "group", query_sizes.data(), query_sizes.size()), "groups");
    free_booster();
    DMatrixHandle train_set[] = {m.handle()};
    check_xgb(XGBoosterCreate(train_set, 1, &booster_), "a booster");
    const std::pair<const char*, std::string> params[] = {
        {"objective", "rank:pairwise"},     {"max_depth", std::to_string(options_.max_depth)},
        {"eta", std::to_string(options_.learning_rate)}, {"seed", std::to_string(options_.seed)},
        {"nthread", "1"},                    {"verbosity", "0"}};
    for (const auto& [key, value] : params) check_xgb(XGBoosterSetParam(booster_, key, value.c_str()), key);
    for (int round = 0; round < options_.rounds; ++round)
      check_xgb(XGBoosterUpdateOneIter(booster_, round, m.handle()), "a boosting round");
  }

  XGBoostOptions options_;
  Measured data_;
  size_t columns_ = 0;
  BoosterHandle booster_ = nullptr;
};

}  // namespace

std::unique_ptr<CostModel> make_xgboost_model(const XGBoostOptions& options) {
  return std::make_unique<XGBoostModel>(options);
}

}  // namespace tessel::tune
