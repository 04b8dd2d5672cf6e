// Spans of a traced run: each step of the plan on the calling thread, and
// each thread's chunk of each parallel loop inside it, in seconds from the
// run's start, for timelines (tessel run --trace). Off unless a traced run is
// in progress: one at a time per process (another caller's run meanwhile is
// not traced, and its loops are not recorded).
#pragma once

#include <cstdint>

#include "tessel/runtime.h"

namespace tessel::rt {

class Tracer {
 public:
  // Starts recording into spans[capacity]; false (nothing recorded) when
  // another traced run is in progress.
  static bool begin(tessel_trace_span* spans, int32_t capacity);
  // Stops recording; the number of spans recorded, which may exceed the
  // capacity (those past it were dropped).
  static int32_t end();

  // Whether the calling thread runs a traced run now (a pool's workers learn
  // it from the thread that dispatched their loop).
  static bool on();
  // The step whose loops are recorded next.
  static void set_step(int32_t step);
  // Seconds since begin().
  static double now();
  static void record(tessel_trace_kind kind, int32_t thread, double begin_seconds, double end_seconds);
};

}  // namespace tessel::rt
