// Reading and writing numpy .npy files (format version 1.0, 2.0 and 3.0, C
// order, little-endian), the exchange format of `tessel run --inputs/--out`.
// read_npy accepts only a header numpy would accept, and data exactly as long
// as the header says; every error names the file.
#pragma once

#include <string>

#include "ir/core/tensor.h"

namespace tessel::driver {

Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& t);

}  // namespace tessel::driver
