// The conformance runner over ONNX's own operator test cases (the onnx-node
// layout: model.onnx + test_data_set_N/{input,output}_M.pb per case folder).
#pragma once

#include <ostream>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/core/tensor.h"
#include "src/passes/fusion.h"

namespace tessel::driver {

struct ConformanceOptions {
  std::string dir;                   // the folder of case folders
  std::string list_file;             // one case name a line; empty: every case in dir
  std::string target = "reference";  // "reference" | "tir" | "llvm" | "cuda" | "cuda-emulated"
  passes::FusionPolicy fusion = passes::FusionPolicy::kNone;  // grouping of the tir and llvm targets
  double case_timeout_s = 120;
  std::optional<uint64_t> knob_seed;  // llvm: schedules drawn from the tuner's space (CompileOptions::knob_seed)
};

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Compares like numpy.testing.assert_allclose (NaN equals NaN); integers
// and bools exactly. Returns an empty string on a match, else why not.
std::string compare_tensors(const Tensor& got, const Tensor& want, Tolerance tol);

// Runs every listed case, each in a child process (a crash or a hang fails
// that case only), prints one line per case and closes with
// "N passed, N failed". Returns the number of failed cases.
int run_conformance(const ConformanceOptions& options, std::ostream& out);

// Runs one case in this process: empty on success, else the reason. Target
// "reference" runs the reference executor; "tir" lowers the graph to the
// tensor IR (grouped by `fusion`) and interprets it; "cuda" compiles with
// NVRTC and, with cuda_on_gpu, runs on the GPU, else interprets the
// scheduled tensor IR (run_conformance decides which, by whether the
// machine has a GPU its driver can use).
std::string run_conformance_case(const std::string& case_dir, const std::string& target,
                                 passes::FusionPolicy fusion = passes::FusionPolicy::kNone,
                                 std::optional<uint64_t> knob_seed = std::nullopt, bool cuda_on_gpu = false);

}  // namespace tessel::driver
