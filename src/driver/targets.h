// Targets as the commands meet them: a spec parsed and checked against the
// backends of this build, what `tessel target` and `tessel version` print,
// the check that code for a target can run on this CPU, and what names a
// target and compiler version in a tuning log.
#pragma once

#include <string>
#include <vector>

#include "src/codegen/target.h"

namespace tessel::driver {

// The target of spec (plus the CLI's separate -mcpu / -mattr options); a
// user error when it is malformed or no backend of this build serves it.
codegen::Target served_target(const std::string& spec, const std::vector<std::string>& extra_options = {});

// A user error when this CPU lacks a feature the target's code uses: that
// code would stop on an illegal instruction here.
void check_runs_here(const codegen::Target& target);

// `tessel target SPEC`: the parsed target, described; a user error when it
// cannot be served here or its code cannot run on this CPU.
std::string target_report(const std::string& spec);

// `tessel version`: Tessel, LLVM, NVRTC, XGBoost, protobuf, the targets this
// build serves, the host CPU.
// "0.1.0", the release (compiler_version() adds the code generation's revision).
const char* tessel_version();
std::string version_report();

// The log's target: the target's kind, CPU and vector width (a log made on
// another machine kind is reported, not applied).
std::string log_target(const codegen::Target& target);
// The compiler version the log's records carry: the release and the code
// generation's revision ("0.1.0+codegen.3").
std::string compiler_version();

// Why target cuda cannot run on a GPU here ("" if it can: a CUDA driver and
// a GPU), asked in a child process: a driver started in this process would
// not work in the children it forks later (conformance cases, tuning
// measurements).
std::string gpu_unavailable_reason();

}  // namespace tessel::driver
