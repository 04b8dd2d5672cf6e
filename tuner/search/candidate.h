// A candidate schedule of a task: the default schedule of its space (CPU or
// GPU) with some of its knobs decided (its genotype), the trace it produced, and the function the
// backend builds from it, with its features for the cost model.
//
//   Candidate c = make_candidate(task_func, space, {{"b0.rows", 4}});
//   c.trace;     // the instructions, sample_categorical decisions included
//   c.hash;      // of c.flat: two genotypes with one program are one candidate
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "schedules/defaults/cpu_knobs.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/search/schedule_space.h"

namespace tessel::tune {

struct Candidate {
  sched::KnobDecisions knobs;      // every knob the schedule asked, with the value taken
  std::vector<sched::Knob> asked;  // their candidates, for mutation
  std::string trace;               // sched::Trace::to_json of the schedule
  tir::PrimFunc flat;              // what the backend builds (ScheduleSpace::prepare)
  uint64_t hash = 0;               // structural hash of flat
  Features features;
};

// The task's function scheduled with `decisions` (the rest at their
// defaults, or drawn with `sample_seed`). nullopt when the schedule rejects
// a step (a ScheduleError); anything else is a bug and propagates.
std::optional<Candidate> make_candidate(const tir::PrimFunc& func, const ScheduleSpace& space,
                                        const sched::KnobDecisions& decisions,
                                        std::optional<uint64_t> sample_seed = std::nullopt);

// The decisions with one knob (among those with more than one candidate)
// moved to another of its candidates; unchanged when no knob can move.
sched::KnobDecisions mutate(const Candidate& parent, std::mt19937_64& rng);

}  // namespace tessel::tune
