// The median of a few measured times: what the tuner ranks a candidate by,
// and what the timing commands report.
#pragma once

#include <algorithm>
#include <vector>

namespace tessel::tune {

// The median of v (0 when empty).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace tessel::tune
