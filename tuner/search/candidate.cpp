#include "tuner/search/candidate.h"

#include "ir/core/diagnostics.h"
#include "ir/tensor/structural.h"
#include "schedules/primitives/loop_primitives.h"
#include "schedules/schedule.h"
#include "tuner/features/features.h"

namespace tessel::tune {

std::optional<Candidate> make_candidate(const tir::PrimFunc& func, const ScheduleSpace& space,
                                        const sched::KnobDecisions& decisions,
                                        std::optional<uint64_t> sample_seed) {
  sched::KnobChoices knobs(decisions, sample_seed);
  sched::Schedule sch(func);
  try {
    space.apply(sch, knobs);
  } catch (const sched::ScheduleError&) {
    return std::nullopt;
  }
  Candidate c;
  c.flat = space.prepare(sch.func());
  c.knobs = knobs.taken();
  c.asked = knobs.knobs();
  c.trace = sch.trace().to_json();
  c.hash = tir::structural_hash(c.flat);
  c.features = extract_features(c.flat);
  return c;
}

sched::KnobDecisions mutate(const Candidate& parent, std::mt19937_64& rng) {
  std::vector<const sched::Knob*> movable;
  for (const sched::Knob& k : parent.asked)
    if (k.candidates.size() > 1) movable.push_back(&k);
  sched::KnobDecisions out = parent.knobs;
  if (movable.empty()) return out;
  const sched::Knob& k = *movable[sched::uniform_below(rng, movable.size())];
  int64_t current = out[k.key];
  std::vector<int64_t> others;
  for (int64_t v : k.candidates)
    if (v != current) others.push_back(v);
  out[k.key] = others[sched::uniform_below(rng, others.size())];
  return out;
}

}  // namespace tessel::tune
