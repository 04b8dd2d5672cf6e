#include "schedules/defaults/cpu_knobs.h"

#include <algorithm>

#include "schedules/primitives/loop_primitives.h"
#include "schedules/schedule.h"

namespace tessel::sched {

KnobChoices::KnobChoices(KnobDecisions decisions, std::optional<uint64_t> sample_seed)
    : decisions_(std::move(decisions)) {
  if (sample_seed) rng_.emplace(*sample_seed);
}

int64_t KnobChoices::choose(Schedule& sch, const std::string& key, std::vector<int64_t> candidates,
                            int64_t default_value) {
  candidates.push_back(default_value);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  auto asked = std::find_if(knobs_.begin(), knobs_.end(), [&](const Knob& k) { return k.key == key; });
  int64_t value = default_value;
  auto decided = decisions_.find(key);
  bool usable = asked != knobs_.end() && std::count(candidates.begin(), candidates.end(), asked->value);
  if (usable) {
    value = asked->value;
  } else if (decided != decisions_.end() && std::count(candidates.begin(), candidates.end(), decided->second)) {
    value = decided->second;
  } else if (rng_) {
    value = candidates[uniform_below(*rng_, candidates.size())];
  }
  if (asked == knobs_.end()) {
    knobs_.push_back({key, candidates, value, default_value});
  } else {
    *asked = {key, candidates, value, default_value};
  }
  if (candidates.size() > 1) {
    int64_t index = std::find(candidates.begin(), candidates.end(), value) - candidates.begin();
    sch.sample_categorical(candidates, std::vector<double>(candidates.size(), 1.0), index);
  }
  return value;
}

KnobDecisions KnobChoices::taken() const {
  KnobDecisions out;
  for (const Knob& k : knobs_) out[k.key] = k.value;
  return out;
}

std::vector<int64_t> vector_widths(int64_t extent, int64_t lanes, int64_t most, int64_t fallback) {
  std::vector<int64_t> out;
  for (int64_t v = 1; v <= most; ++v)
    if (extent % (v * lanes) == 0) out.push_back(v * lanes);
  out.push_back(fallback);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace tessel::sched
