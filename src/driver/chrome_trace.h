// Traced runs as a Chrome trace: the JSON event format that Perfetto and
// chrome://tracing open, as ONNX Runtime's and PyTorch's profilers write
// it. Each kernel is a slice on the calling thread's track, each chunk of a
// parallel loop a slice on the track of the thread that ran it; runs follow
// each other on the time axis.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "src/driver/compiled_model.h"

namespace tessel::driver {

nlohmann::json chrome_trace(const std::vector<KernelInfo>& kernels, const std::vector<TracedRun>& runs);

}  // namespace tessel::driver
