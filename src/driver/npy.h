// Reading and writing numpy .npy files (format version 1.0 and 2.0, C order,
// little-endian), the exchange format of `tessel run --inputs/--out`.
#pragma once

#include <string>

#include "ir/core/tensor.h"

namespace tessel::driver {

Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& t);

}  // namespace tessel::driver
