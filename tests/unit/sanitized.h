// Whether the tests run under AddressSanitizer (build-asan, made by
// scripts/run_sanitizers.sh), and how many samples a sweep takes there.
//
// The sweeps rerun one code path over many sampled schedules or knob values
// on the interpreter, which ASan slows several times over. The sanitizer
// stage looks for memory errors and undefined behaviour, which a quarter of
// the samples reach as well; the main build checks every sample's numerics.
#pragma once

#include <cstdint>

namespace tessel::test_support {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// n samples, or a quarter of them (at least one) under AddressSanitizer.
inline int64_t sweep_samples(int64_t n) { return kAddressSanitizer ? (n + 3) / 4 : n; }

// Whether the sweep point numbered `point` (0, 1, ...) runs: every point, or
// every fourth under AddressSanitizer.
inline bool sweep_point_runs(int64_t point) { return !kAddressSanitizer || point % 4 == 0; }

}  // namespace tessel::test_support
