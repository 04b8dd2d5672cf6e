// The default CPU schedule's choices, as knobs a tuner can turn: the width
// and rows of a register tile, whether the tile accumulates in a local
// buffer, which of a matmul's tile loops runs outside, whether a short
// reduction loop is unrolled, how many chunks per thread a parallel loop
// gets, how many vectors a per-channel tile holds. Each knob is keyed by its
// block and choice ("b3.rows"), has candidates (every one legal to ask for:
// the primitives check the rest) and the default's own pick.
//
// Without a KnobChoices the default schedule takes its picks and records
// nothing. With one it takes the decided values (a value not among the
// candidates asked for falls back to the default), draws the undecided ones
// when sampling or else takes the default, and records each choice in the
// trace as a sample_categorical with its decision, so that the trace says
// what was chosen and replays without the rules.
//
//   KnobChoices k({{"b0.rows", 4}});
//   apply_default_cpu_schedule(sch, {.knobs = &k});   // b0's tile: 4 rows
//   k.knobs();   // [{b0.cols, [16, 32, 48], 32, 32}, {b0.rows, [1..8], 4, 6}, ...]
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tessel::sched {

class Schedule;

struct Knob {
  std::string key;
  std::vector<int64_t> candidates;  // ascending, the default among them
  int64_t value = 0;                // taken
  int64_t default_value = 0;        // the default schedule's pick
};

using KnobDecisions = std::map<std::string, int64_t>;

class KnobChoices {
 public:
  // Every knob not in `decisions` at its default, or drawn uniformly from
  // its candidates with this seed.
  explicit KnobChoices(KnobDecisions decisions = {}, std::optional<uint64_t> sample_seed = std::nullopt);

  // The value for knob `key`: decided, drawn or the default, recorded in
  // sch's trace. A key asked again (a rule tried twice) gets the same value.
  int64_t choose(Schedule& sch, const std::string& key, std::vector<int64_t> candidates, int64_t default_value);

  const std::vector<Knob>& knobs() const { return knobs_; }  // as asked, in order
  KnobDecisions taken() const;                                 // key -> value of every knob asked

 private:
  KnobDecisions decisions_;
  std::optional<std::mt19937_64> rng_;
  std::vector<Knob> knobs_;
};

// Multiples of `lanes`, up to `most` vectors, that divide `extent`, with `fallback`; ascending.
std::vector<int64_t> vector_widths(int64_t extent, int64_t lanes, int64_t most, int64_t fallback);

}  // namespace tessel::sched
