// The execution plan the runtime tests share: x[2,3] f32 -> add(x, w) into an
// arena buffer -> relu into y[2,3] (steps "add" and "relu", 24 weight bytes).
#pragma once

#include <cstring>
#include <vector>

#include "src/runtime/checksum.h"
#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::rt {

inline Plan add_relu_plan() {
  Plan p;
  p.model_name = "tiny";
  p.inputs = {{"x", TESSEL_F32, {2, 3}}};
  p.outputs = {{"y", TESSEL_F32, {2, 3}}};
  p.buffers = {{Storage::kInput, 0, 0, 24},
               {Storage::kWeight, 0, 0, 24},
               {Storage::kArena, 0, 0, 24},
               {Storage::kOutput, 0, 0, 24}};
  p.steps = {{0, "add", {0, 1, 2}, 6, 72}, {1, "relu", {2, 3}, 6, 48}};
  p.output_buffers = {3};
  p.arena_bytes = 64;
  p.weights_bytes = 24;
  return p;
}

// add_relu_plan with "relu" in a loop of two iterations over a 48-byte
// arena buffer (4): x copied in once, slice t of buffer 4 copied into the
// add's result before each relu, y copied out to slice 1 - t and back.
inline Plan looped_plan() {
  Plan p = add_relu_plan();
  p.buffers.push_back({Storage::kArena, 0, 64, 48});
  p.arena_bytes = 128;
  p.loops = {Loop{-1, 1, 2, 2, {{0, 2, false}}, {{4, 2, false}}, {{3, 4, true}}, {{3, 2, false}}}};
  return p;
}

// A plan's bytes, changed, with their last 8 bytes set to the checksum of the
// rest, as a deliberate forgery would have: what reaches the parser's checks.
inline void reseal(std::vector<uint8_t>& blob) {
  uint64_t sum = checksum64(blob.data(), blob.size() - 8);
  std::memcpy(blob.data() + blob.size() - 8, &sum, 8);
}

}  // namespace tessel::rt
