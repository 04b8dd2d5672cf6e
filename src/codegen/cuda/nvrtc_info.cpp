// NVRTC version queries.
#include "src/codegen/cuda/nvrtc_info.h"

#include <nvrtc.h>

namespace tessel::codegen {

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unavailable";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<int> nvrtc_architectures() {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return {};
  std::vector<int> archs(static_cast<size_t>(n));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

}  // namespace tessel::codegen
