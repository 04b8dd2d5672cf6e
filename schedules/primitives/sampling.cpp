// The sampling rules of the tuner's search space: perfect tilings of a loop
// and categorical choices, drawn from a seeded mt19937_64 with our own
// distribution math (the standard distributions differ between libraries).
#include <cmath>

#include "ir/core/diagnostics.h"

#include "schedules/primitives/loop_analysis.h"
#include "schedules/primitives/loop_primitives.h"

namespace tessel::sched {

using namespace tir;

uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  TESSEL_ICHECK(n > 0) << "a uniform draw from an empty range";
  // Draws above the largest multiple of n would favour small results.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % n;
}

double uniform_unit(std::mt19937_64& rng) {
  return double(rng() >> 11) * 0x1.0p-53;
}

std::vector<std::vector<int64_t>> perfect_tilings(int64_t extent, int n, int64_t max_innermost) {
  std::vector<std::vector<int64_t>> out;
  if (n < 1 || extent < 1) return out;
  // Depth-first over the positions with an explicit stack of partial tilings:
  // each entry holds the factors so far and what remains to be divided.
  struct Partial {
    std::vector<int64_t> factors;
    int64_t remaining;
  };
  // Every factor divides extent: list its divisors once, largest first.
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= extent; ++d) {
    if (extent % d != 0) continue;
    small.push_back(d);
    if (d != extent / d) large.push_back(extent / d);
  }
  std::vector<int64_t> divisors(large.begin(), large.end());
  divisors.insert(divisors.end(), small.rbegin(), small.rend());
  std::vector<Partial> stack{{{}, extent}};
  while (!stack.empty()) {
    Partial p = std::move(stack.back());
    stack.pop_back();
    if (int(p.factors.size()) == n - 1) {
      if (p.remaining > max_innermost) continue;
      p.factors.push_back(p.remaining);
      out.push_back(std::move(p.factors));
      continue;
    }
    // Push divisors in decreasing order so that smaller outer factors come first.
    for (int64_t d : divisors) {
      if (d > p.remaining || p.remaining % d != 0) continue;
      Partial next{p.factors, p.remaining / d};
      next.factors.push_back(d);
      stack.push_back(std::move(next));
    }
  }
  return out;
}

namespace {

int64_t tiled_extent(const PrimFunc& func, const VarNode* var, int n, int64_t max_innermost) {
  const ForNode& loop = loop_or_throw(func, var, "sample_perfect_tile");
  int64_t extent = constant_extent(loop, "sample_perfect_tile");
  if (n < 1 || max_innermost < 1) {
    throw ScheduleError("sample_perfect_tile.bad_request",
                        "sample_perfect_tile: n (" + std::to_string(n) + ") and max_innermost (" +
                            std::to_string(max_innermost) + ") must be positive");
  }
  return extent;
}

}  // namespace

std::vector<int64_t> sample_perfect_tile(const PrimFunc& func, const VarNode* var, int n,
                                         int64_t max_innermost, std::mt19937_64& rng) {
  int64_t extent = tiled_extent(func, var, n, max_innermost);
  std::vector<std::vector<int64_t>> tilings = perfect_tilings(extent, n, max_innermost);
  // The innermost factor 1 always qualifies, so tilings is never empty here.
  return tilings[uniform_below(rng, tilings.size())];
}

void check_perfect_tile(const PrimFunc& func, const VarNode* var, int n, int64_t max_innermost,
                        const std::vector<int64_t>& decision) {
  int64_t extent = tiled_extent(func, var, n, max_innermost);
  std::string what = "sample_perfect_tile: decision [";
  for (size_t i = 0; i < decision.size(); ++i) what += (i ? ", " : "") + std::to_string(decision[i]);
  what += "] for a loop of extent " + std::to_string(extent);
  if (int(decision.size()) != n) {
    throw ScheduleError("sample.invalid_decision", what + " does not have " + std::to_string(n) + " factors");
  }
  int64_t product = 1;
  for (int64_t f : decision) {
    if (f < 1 || __builtin_mul_overflow(product, f, &product)) {
      throw ScheduleError("sample.invalid_decision", what + ": factors must be positive");
    }
  }
  if (product != extent) {
    throw ScheduleError("sample.invalid_decision", what + " multiplies to " + std::to_string(product));
  }
  if (decision.back() > max_innermost) {
    throw ScheduleError("sample.invalid_decision",
                        what + ": the innermost factor exceeds " + std::to_string(max_innermost));
  }
}

void check_categorical(const std::vector<int64_t>& candidates, const std::vector<double>& probs) {
  if (candidates.empty() || candidates.size() != probs.size()) {
    throw ScheduleError("sample_categorical.bad_request",
                        "sample_categorical: " + std::to_string(candidates.size()) + " candidates and " +
                            std::to_string(probs.size()) +
                            " probabilities; need as many of each, at least one");
  }
  double total = 0;
  for (double p : probs) {
    if (!(p >= 0) || !std::isfinite(p)) {
      throw ScheduleError("sample_categorical.bad_request",
                          "sample_categorical: probabilities must be finite and >= 0");
    }
    total += p;
  }
  if (total <= 0)
    throw ScheduleError("sample_categorical.bad_request", "sample_categorical: probabilities sum to 0");
}

int64_t sample_categorical_index(const std::vector<double>& probs, std::mt19937_64& rng) {
  double total = 0;
  for (double p : probs) total += p;
  double x = uniform_unit(rng) * total;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (x < probs[i]) return int64_t(i);
    x -= probs[i];
  }
  // Rounding can leave x just above the last weight: take the last non-zero one.
  for (size_t i = probs.size(); i-- > 0;)
    if (probs[i] > 0) return int64_t(i);
  return 0;
}

}  // namespace tessel::sched
