// The .npy format: magic, version, a header dict, then raw data. Written by
// hand: it is ~100 lines and Debian packages no C++ reader we would trust more.
#include "src/driver/npy.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

namespace tessel::driver {

namespace {

const char kMagic[] = "\x93NUMPY";

std::string descr_of(DType t) {
  switch (t) {
    case DType::kF32: return "<f4";
    case DType::kF64: return "<f8";
    case DType::kF16: return "<f2";
    case DType::kI8: return "|i1";
    case DType::kU8: return "|u1";
    case DType::kI32: return "<i4";
    case DType::kI64: return "<i8";
    case DType::kBool: return "|b1";
    case DType::kBF16: break;
  }
  TESSEL_USER_ERROR(Span{}) << "bf16 tensors cannot be stored as .npy";
  return "";
}

DType dtype_of_descr(const std::string& d, const std::string& path) {
  for (DType t : kAllDTypes)
    if (t != DType::kBF16 && descr_of(t) == d) return t;
  if (d == "=f4") return DType::kF32;
  TESSEL_USER_ERROR(Span{}) << path << ": unsupported .npy dtype '" << d << "'";
  return DType::kF32;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::error_code ec;  // a FIFO would block forever, a folder reads as nothing
  TESSEL_USER_CHECK(std::filesystem::is_regular_file(path, ec), Span{}) << path << ": no such file or not a regular file";
  std::ifstream in(path, std::ios::binary);
  TESSEL_USER_CHECK(in.good(), Span{}) << path << ": cannot open file";
  char magic[8] = {};
  in.read(magic, 8);
  TESSEL_USER_CHECK(in.good() && std::memcmp(magic, kMagic, 6) == 0, Span{}) << path << ": not a .npy file";
  int major = magic[6];
  uint32_t header_len = 0;
  unsigned char len[4] = {};
  in.read(reinterpret_cast<char*>(len), major == 1 ? 2 : 4);
  header_len = major == 1 ? uint32_t(len[0] | len[1] << 8)
                          : uint32_t(len[0] | len[1] << 8 | len[2] << 16 | uint32_t(len[3]) << 24);
  TESSEL_USER_CHECK(in.good() && header_len < (1u << 20), Span{}) << path << ": corrupt .npy header";
  std::string header(header_len, '\0');
  in.read(header.data(), header_len);
  std::smatch m;
  TESSEL_USER_CHECK(std::regex_search(header, m, std::regex("'descr':\\s*'([^']+)'")), Span{})
      << path << ": .npy header has no descr";
  DType dtype = dtype_of_descr(m[1], path);
  TESSEL_USER_CHECK(!std::regex_search(header, std::regex("'fortran_order':\\s*True")), Span{})
      << path << ": Fortran-ordered .npy files are not supported";
  TESSEL_USER_CHECK(std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")), Span{})
      << path << ": .npy header has no shape";
  Dims shape;
  std::string dims = m[1];
  std::regex num("\\d+");
  int64_t numel = 1;
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator(); ++it) {
    int64_t d = 0;
    std::string text = it->str();
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    TESSEL_USER_CHECK(ec == std::errc() && !__builtin_mul_overflow(numel, d, &numel), Span{})
        << path << ": .npy shape (" << dims << ") is too large";
    shape.push_back(d);
  }
  // The data must be in the file before a buffer is allocated for it: a few
  // bytes of header must not ask for gigabytes.
  std::streamoff data_start = in.tellg();
  in.seekg(0, std::ios::end);
  int64_t available = int64_t(in.tellg() - data_start);
  in.seekg(data_start);
  int64_t itemsize = int64_t(dtype_size(dtype));
  TESSEL_USER_CHECK(numel <= available / itemsize, Span{})
      << path << ": .npy data is truncated (" << available << " bytes, shape (" << dims << ") needs "
      << numel << " x " << itemsize << ")";
  Tensor t(dtype, shape);
  in.read(static_cast<char*>(t.raw()), std::streamsize(t.nbytes()));
  TESSEL_USER_CHECK(in.gcount() == std::streamsize(t.nbytes()), Span{})
      << path << ": .npy data is truncated (" << in.gcount() << " of " << t.nbytes() << " bytes)";
  // A bool byte other than 0 or 1 is not a valid C++ bool.
  if (dtype == DType::kBool)
    for (int64_t i = 0; i < numel; ++i) static_cast<uint8_t*>(t.raw())[i] = static_cast<uint8_t*>(t.raw())[i] != 0;
  return t;
}

void write_npy(const std::string& path, const Tensor& t) {
  std::string shape = "(";
  for (int64_t d : t.shape()) shape += std::to_string(d) + ", ";
  if (t.rank() > 1) shape.resize(shape.size() - 2);
  else if (t.rank() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + descr_of(t.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::ofstream out(path, std::ios::binary);
  TESSEL_USER_CHECK(out.good(), Span{}) << path << ": cannot write file";
  out.write(kMagic, 6);
  out.put(1);
  out.put(0);
  uint16_t len = uint16_t(header.size());
  out.put(char(len & 0xff));
  out.put(char(len >> 8));
  out << header;
  out.write(static_cast<const char*>(t.raw()), std::streamsize(t.nbytes()));
  TESSEL_USER_CHECK(out.good(), Span{}) << path << ": cannot write file";
}

}  // namespace tessel::driver
