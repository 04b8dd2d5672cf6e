#include "tuner/search/evolutionary.h"

#include <algorithm>
#include <map>

#include "schedules/primitives/loop_primitives.h"

namespace tessel::tune {

namespace {

constexpr int kWiderDraws = 2;

}  // namespace

TaskSearch::TaskSearch(tir::PrimFunc func, ScheduleSpace space, uint64_t seed, SearchOptions search)
    : func_(std::move(func)), space_(std::move(space)), search_(search), rng_(seed) {}

void TaskSearch::record(const Candidate& c, double best_ms, bool ok) {
  measured_hashes_.insert(c.hash);
  if (ok) good_.emplace_back(best_ms, c.knobs);
}

std::optional<Candidate> TaskSearch::record_previous(const sched::KnobDecisions& knobs, double best_ms, bool ok) {
  std::optional<Candidate> c = make_candidate(func_, space_, knobs);
  if (c) record(*c, best_ms, ok);
  return c;
}

// The best measured candidates, remade, and fresh samples up to the population.
std::vector<Candidate> TaskSearch::seeds() {
  std::vector<Candidate> out;
  std::vector<std::pair<double, sched::KnobDecisions>> best = good_;
  std::sort(best.begin(), best.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < best.size() && int(i) < search_.elite; ++i)
    if (std::optional<Candidate> c = make_candidate(func_, space_, best[i].second))
      out.push_back(std::move(*c));
  while (int(out.size()) < search_.population) {
    std::optional<Candidate> c = make_candidate(func_, space_, {}, rng_());
    if (c) out.push_back(std::move(*c));
  }
  return out;
}

void TaskSearch::score(std::vector<Scored>& pool, const CostModel& model, bool model_trained) {
  if (!model_trained) {
    for (Scored& s : pool) s.score = double(rng_() >> 11) * 0x1.0p-53;
    return;
  }
  std::vector<Features> features;
  for (const Scored& s : pool) features.push_back(s.c.features);
  std::vector<double> scores = model.predict(features);
  for (size_t i = 0; i < pool.size(); ++i) pool[i].score = scores[i];
}

std::map<uint64_t, TaskSearch::Scored> TaskSearch::evolve(const CostModel& model, bool model_trained) {
  std::map<uint64_t, Scored> unmeasured;  // everything seen this round, by program
  std::vector<Scored> population;
  for (Candidate& c : seeds()) population.push_back({std::move(c), 0});
  for (int g = 0; g <= search_.generations; ++g) {
    score(population, model, model_trained);
    for (const Scored& s : population)
      if (!measured_hashes_.count(s.c.hash)) unmeasured.emplace(s.c.hash, s);
    if (g == search_.generations) break;
    std::sort(population.begin(), population.end(), [](const Scored& a, const Scored& b) { return a.score > b.score; });
    population.resize(std::max<size_t>(1, population.size() / 2));
    size_t parents = population.size();
    for (size_t i = 0; i < parents; ++i) {
      std::optional<Candidate> child = make_candidate(func_, space_, mutate(population[i].c, rng_));
      if (child) population.push_back({std::move(*child), 0});
    }
  }
  // Nothing new among the population: the space may be nearly spent, or the
  // samples unlucky; a wider draw decides before the task is given up.
  for (int draw = 0; draw < kWiderDraws && unmeasured.empty(); ++draw) {
    std::vector<Scored> more;
    for (int i = 0; i < 2 * search_.population; ++i)
      if (std::optional<Candidate> c = make_candidate(func_, space_, {}, rng_());
          c && !measured_hashes_.count(c->hash))
        more.push_back({std::move(*c), 0});
    score(more, model, model_trained);
    for (Scored& s : more) unmeasured.emplace(s.c.hash, std::move(s));
  }
  return unmeasured;
}

std::vector<Candidate> TaskSearch::propose(const CostModel& model, bool model_trained, int n) {
  if (measured_hashes_.empty()) {  // round 0: the default schedule
    std::optional<Candidate> c = make_candidate(func_, space_, {});
    if (c) return {std::move(*c)};
  }
  std::vector<Scored> ranked;
  for (auto& [hash, s] : evolve(model, model_trained)) ranked.push_back(std::move(s));
  exhausted_ = ranked.empty();
  std::sort(ranked.begin(), ranked.end(), [](const Scored& a, const Scored& b) { return a.score > b.score; });
  int want = std::min<int>(n, int(ranked.size()));
  // When every candidate left is taken anyway, none needs to be drawn.
  int random_picks = int(ranked.size()) > want ? int(want * search_.epsilon + 0.5) : 0;
  int by_model = want - random_picks;
  std::vector<Candidate> out;
  for (int i = 0; i < by_model; ++i) out.push_back(std::move(ranked[size_t(i)].c));
  ranked.erase(ranked.begin(), ranked.begin() + by_model);
  for (int i = 0; i < random_picks && !ranked.empty(); ++i) {
    size_t pick = sched::uniform_below(rng_, ranked.size());
    out.push_back(std::move(ranked[pick].c));
    ranked.erase(ranked.begin() + long(pick));
  }
  return out;
}

}  // namespace tessel::tune
