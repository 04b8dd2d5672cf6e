// The CPU features a model library was compiled for, checked at load against
// the running CPU (cpuid, no LLVM), so that a missing one is an error naming
// it instead of SIGILL in the first kernel.
#pragma once

#include <string>
#include <vector>

namespace tessel::rt {

// The features this runtime can check, in LLVM's spelling ("avx2",
// "avx512f", "amx-tile", ...): the x86 ISA extensions the code generator may
// use. Empty on other architectures.
const std::vector<std::string>& checkable_cpu_features();

// What a model compiled for the target needs: its enabled ("+name") features
// that are checkable, sorted, each once.
std::vector<std::string> required_cpu_features(const std::vector<std::string>& target_features);

// The names in `required` the running CPU (and its operating system, for the
// register state) does not offer, in order. A name this runtime cannot check
// counts as missing.
std::vector<std::string> missing_cpu_features(const std::vector<std::string>& required);

// Throws StatusError(TESSEL_ERR_UNSUPPORTED_CPU) naming every missing feature.
void check_cpu_features(const std::vector<std::string>& required);

}  // namespace tessel::rt
