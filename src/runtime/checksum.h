// The checksum a model library carries over its plan and its weights
// (XXH64, seed 0): written at export, verified by tessel_model_load.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessel::rt {

// XXH64 of size bytes at data (the reference algorithm, little-endian reads):
// about 10 GB/s, so verifying the weights costs little next to loading them.
uint64_t checksum64(const void* data, size_t size);

}  // namespace tessel::rt
