// What the CUDA backend's compiler (NVRTC) is: its version and the GPU
// architectures it can compile for. Needs no GPU.
#pragma once

#include <string>
#include <vector>

namespace tessel::codegen {

std::string nvrtc_version();             // "13.0"
std::vector<int> nvrtc_architectures();  // 75, 80, 86, 89, 90, ...

}  // namespace tessel::codegen
