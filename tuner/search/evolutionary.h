// The search of one task: which candidates to measure next. Round 0 is the
// default schedule alone (so a tuned kernel is never worse than the default:
// it is always among the measured). After it, each round evolves a
// population, seeded with the best measured candidates and fresh samples,
// by mutating the knobs of those the cost model scores best; then it
// proposes the best-scored candidates not measured yet, with an epsilon
// share drawn at random from the rest (so that a wrong model still sees new
// ground). Candidates are told apart by the structural hash of the program
// they build, so two genotypes of one program are measured once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "tuner/cost_model/cost_model.h"
#include "tuner/search/candidate.h"

namespace tessel::tune {

struct SearchOptions {
  int population = 48;      // candidates per generation
  int generations = 3;      // of mutation under the cost model
  int elite = 8;            // best measured candidates that seed a population
  double epsilon = 0.2;     // share of a round's proposals drawn at random
};

class TaskSearch {
 public:
  TaskSearch(tir::PrimFunc func, ScheduleSpace space, uint64_t seed, SearchOptions search = {});

  // Up to n candidates never measured (fewer when the space has no more);
  // `model` ranks them (a model that has learned nothing ranks at random).
  std::vector<Candidate> propose(const CostModel& model, bool model_trained, int n);
  // What measuring c gave: its best time, or failed.
  void record(const Candidate& c, double best_ms, bool ok);
  // A measured candidate from an earlier session (a resumed log): its knobs
  // and result; returns the candidate they make (nullopt: they no longer make one).
  std::optional<Candidate> record_previous(const sched::KnobDecisions& knobs, double best_ms, bool ok);

  bool exhausted() const { return exhausted_; }  // a round found nothing new to propose
  size_t measured() const { return measured_hashes_.size(); }

 private:
  struct Scored {
    Candidate c;
    double score;
  };
  std::vector<Candidate> seeds();
  // A population evolved under the model; the unmeasured programs it met, scored.
  std::map<uint64_t, Scored> evolve(const CostModel& model, bool model_trained);
  void score(std::vector<Scored>& pool, const CostModel& model, bool model_trained);

  tir::PrimFunc func_;
  ScheduleSpace space_;
  SearchOptions search_;
  std::mt19937_64 rng_;
  std::set<uint64_t> measured_hashes_;
  std::vector<std::pair<double, sched::KnobDecisions>> good_;  // measured and ok: (best ms, knobs)
  bool exhausted_ = false;
};

}  // namespace tessel::tune
