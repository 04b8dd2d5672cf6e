// What the control-flow adapters share (adapters_control.cpp, adapters_while.cpp).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

// A Scan node over body with inputs (states, scans, captured) and the given attributes.
std::vector<graph::Value*> add_scan(AdaptContext& c, std::shared_ptr<graph::Graph> body,
                                    std::vector<graph::Value*> inputs, graph::Attrs attrs);

// Scan-8 (a batch axis 0 on every input), as one Scan per batch entry.
void adapt_scan8(AdaptContext& c);

// A Loop whose iterations only a run decides (its body computes the
// condition, or its trip count or first condition is known only at run
// time) as a Scan with a while_state: the states are the condition, the
// iteration number (its next one added to the body) and the carried values.
// `body` is the Loop's as imported (inputs: iteration, condition, carried,
// captured; outputs: condition, carried, scan outputs); `trip_count` bounds
// it when known while compiling, else M (if given) is read at run time.
// Scan outputs need a known bound and come out with their extent along axis
// 0 decided by the run (the iterations that ran). Returns the Loop's outputs.
std::vector<graph::Value*> while_loop(AdaptContext& c, std::shared_ptr<graph::Graph> body,
                                      const std::vector<graph::Value*>& captured,
                                      const std::vector<graph::Value*>& carried, size_t scan_outputs,
                                      std::optional<int64_t> trip_count);

}  // namespace tessel::onnx_frontend
