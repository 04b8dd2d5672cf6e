// The .npy format: magic, version, a header dict, then raw data. Written by
// hand: it is ~200 lines and Debian packages no C++ reader we would trust more.
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
    case DType::kI16: return "<i2";
    case DType::kU16: return "<u2";
    case DType::kU32: return "<u4";
    case DType::kU64: return "<u8";
    default: break;  // bf16 and the storage-only types
  }
  TESSEL_USER_ERROR(Span{}) << dtype_name(t) << " tensors cannot be stored as .npy (numpy has no such type)";
  return "";
}

DType dtype_of_descr(const std::string& d, const std::string& path) {
  for (DType t : kAllDTypes)
    if (t != DType::kBF16 && !is_small(t) && descr_of(t) == d) return t;
  if (d == "=f4") return DType::kF32;
  TESSEL_USER_ERROR(Span{}) << path << ": unsupported .npy dtype '" << d << "'";
  return DType::kF32;
}

// "(2, 3)", "(5,)", "()": a shape as Python writes a tuple.
std::string shape_text(const Dims& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Reads the three keys of a header dict, as numpy writes it:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Each value is checked for what numpy itself accepts; anything else is an
// error naming the file, never a guess (a '-3' is not a 3).
struct Header {
  DType dtype = DType::kF32;
  Dims shape;
  int64_t numel = 1;
};

// The text of `key`'s value, matched by `value` (one capture group).
std::string header_value(const std::string& header, const std::string& key, const std::string& value,
                         const std::string& path) {
  std::smatch m;
  TESSEL_USER_CHECK(std::regex_search(header, m, std::regex("'" + key + "':\\s*" + value)), Span{})
      << path << ": .npy header has no valid '" << key << "' (header: " << header << ")";
  return m[1];
}

// "2, 3" or "5," or "": non-negative decimal integers separated by commas, a
// trailing comma allowed; their product must fit in int64.
Dims parse_shape(const std::string& dims, const std::string& path, int64_t& numel) {
  Dims shape;
  numel = 1;
  size_t at = 0;
  auto skip_space = [&] {
    while (at < dims.size() && (dims[at] == ' ' || dims[at] == '\t')) ++at;
  };
  skip_space();
  while (at < dims.size()) {
    int64_t d = 0;
    auto [end, ec] = std::from_chars(dims.data() + at, dims.data() + dims.size(), d);
    TESSEL_USER_CHECK(ec != std::errc::result_out_of_range, Span{})
        << path << ": .npy shape (" << dims << ") is too large";
    TESSEL_USER_CHECK(ec == std::errc() && d >= 0 && dims[at] != '-', Span{})
        << path << ": .npy shape (" << dims << ") is not a tuple of non-negative integers";
    TESSEL_USER_CHECK(!__builtin_mul_overflow(numel, d, &numel), Span{})
        << path << ": .npy shape (" << dims << ") is too large";
    shape.push_back(d);
    at = size_t(end - dims.data());
    skip_space();
    if (at == dims.size()) break;
    TESSEL_USER_CHECK(dims[at] == ',', Span{})
        << path << ": .npy shape (" << dims << ") is not a tuple of non-negative integers";
    ++at;
    skip_space();
  }
  return shape;
}

Header parse_header(const std::string& header, const std::string& path) {
  Header h;
  h.dtype = dtype_of_descr(header_value(header, "descr", "'([^']*)'", path), path);
  std::string fortran = header_value(header, "fortran_order", "([A-Za-z0-9_]+)", path);
  TESSEL_USER_CHECK(fortran == "False" || fortran == "True", Span{})
      << path << ": .npy header's fortran_order is " << fortran << ", not True or False";
  TESSEL_USER_CHECK(fortran == "False", Span{}) << path << ": Fortran-ordered .npy files are not supported";
  std::string dims = header_value(header, "shape", "\\(([^)]*)\\)", path);
  h.shape = parse_shape(dims, path, h.numel);
  return h;
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
  // Versions 1.0, 2.0 (a 4-byte header length) and 3.0 (the header in UTF-8) differ only there.
  int major = static_cast<unsigned char>(magic[6]), minor = static_cast<unsigned char>(magic[7]);
  TESSEL_USER_CHECK(major >= 1 && major <= 3 && minor == 0, Span{})
      << path << ": unsupported .npy format version " << major << "." << minor
      << " (1.0, 2.0 and 3.0 are read)";
  unsigned char len[4] = {};
  in.read(reinterpret_cast<char*>(len), major == 1 ? 2 : 4);
  uint32_t header_len = major == 1 ? uint32_t(len[0] | len[1] << 8)
                                   : uint32_t(len[0] | len[1] << 8 | len[2] << 16 | uint32_t(len[3]) << 24);
  TESSEL_USER_CHECK(in.good() && header_len < (1u << 20), Span{}) << path << ": corrupt .npy header";
  std::string text(header_len, '\0');
  in.read(text.data(), header_len);
  TESSEL_USER_CHECK(in.gcount() == std::streamsize(header_len), Span{})
      << path << ": .npy header is truncated (" << in.gcount() << " of " << header_len << " bytes)";
  Header h = parse_header(text, path);
  // The data must be exactly what the header describes, and in the file before
  // a buffer is allocated for it: a few bytes of header must not ask for gigabytes.
  std::streamoff data_start = in.tellg();
  in.seekg(0, std::ios::end);
  int64_t available = int64_t(in.tellg() - data_start);
  in.seekg(data_start);
  int64_t itemsize = int64_t(dtype_size(h.dtype));
  TESSEL_USER_CHECK(h.numel <= available / itemsize, Span{})
      << path << ": .npy data is truncated (" << available << " bytes, shape " << shape_text(h.shape)
      << " needs " << h.numel << " x " << itemsize << ")";
  TESSEL_USER_CHECK(h.numel * itemsize == available, Span{})
      << path << ": .npy data is longer than its header says (" << available << " bytes, shape "
      << shape_text(h.shape) << " needs " << h.numel << " x " << itemsize << ")";
  Tensor t(h.dtype, h.shape);
  in.read(static_cast<char*>(t.raw()), std::streamsize(t.nbytes()));
  TESSEL_USER_CHECK(in.gcount() == std::streamsize(t.nbytes()), Span{})
      << path << ": .npy data is truncated (" << in.gcount() << " of " << t.nbytes() << " bytes)";
  // A bool byte other than 0 or 1 is not a valid C++ bool.
  if (h.dtype == DType::kBool)
    for (int64_t i = 0; i < h.numel; ++i)
      static_cast<uint8_t*>(t.raw())[i] = static_cast<uint8_t*>(t.raw())[i] != 0;
  return t;
}

void write_npy(const std::string& path, const Tensor& t) {
  std::string header = "{'descr': '" + descr_of(t.dtype()) +
                       "', 'fortran_order': False, 'shape': " + shape_text(t.shape()) + ", }";
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
