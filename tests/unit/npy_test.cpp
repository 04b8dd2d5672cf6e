// The .npy reader (src/driver/npy.cpp) on files numpy writes and on headers it
// would refuse: each refusal is a user error that names the file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "src/driver/npy.h"
#include "tessel/error.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

struct NpyFile {
  fs::path path = fs::temp_directory_path() / ("tessel_npy_test_" + std::to_string(::getpid()) + ".npy");
  ~NpyFile() { fs::remove(path); }

  // Writes magic, version major.0, the header (v1: 2-byte length, else 4) and `data` bytes.
  void write(const std::string& header, size_t data_bytes, int major = 1, int minor = 0) const {
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY", 6);
    out.put(char(major));
    out.put(char(minor));
    uint32_t n = uint32_t(header.size());
    for (int b = 0; b < (major == 1 ? 2 : 4); ++b) out.put(char((n >> (8 * b)) & 0xff));
    out << header;
    out << std::string(data_bytes, '\0');
  }
};

std::string f32_header(const std::string& shape, const std::string& fortran = "False") {
  return "{'descr': '<f4', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

void expect_error(const NpyFile& f, const std::string& substring) {
  try {
    driver::read_npy(f.path.string());
    ADD_FAILURE() << "no error, expected: " << substring;
  } catch (const UserError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(f.path.string() + ": "), std::string::npos) << what;
    EXPECT_NE(what.find(substring), std::string::npos) << what;
  }
}

TEST(Npy, ReadsWhatNumpyWrites) {
  NpyFile f;
  f.write(f32_header("(2, 3)"), 24);
  EXPECT_EQ(driver::read_npy(f.path.string()).shape(), (Dims{2, 3}));
  f.write(f32_header("(5,)"), 20, 2);
  EXPECT_EQ(driver::read_npy(f.path.string()).shape(), (Dims{5}));
  f.write(f32_header("()"), 4, 3);
  EXPECT_EQ(driver::read_npy(f.path.string()).rank(), 0);
  f.write(f32_header("(0, 4)"), 0);
  EXPECT_EQ(driver::read_npy(f.path.string()).numel(), 0);
}

TEST(Npy, RoundTripsAScalar) {
  NpyFile f;
  Tensor t = Tensor::scalar_f64(DType::kF32, 2.5);
  driver::write_npy(f.path.string(), t);
  Tensor back = driver::read_npy(f.path.string());
  EXPECT_EQ(back.rank(), 0);
  EXPECT_EQ(back.get_f64(0), 2.5);
}

TEST(Npy, RefusesANegativeDimension) {
  NpyFile f;
  f.write(f32_header("(2, -3)"), 24);  // read as (2, 3) before
  expect_error(f, "shape (2, -3) is not a tuple of non-negative integers");
  f.write(f32_header("(-0,)"), 0);
  expect_error(f, "is not a tuple of non-negative integers");
}

TEST(Npy, RefusesAShapeThatIsNotIntegers) {
  NpyFile f;
  f.write(f32_header("(2.5,)"), 40);  // read as (2, 5) before
  expect_error(f, "shape (2.5,) is not a tuple of non-negative integers");
  f.write(f32_header("(2 3)"), 24);
  expect_error(f, "is not a tuple");
  f.write(f32_header("(,)"), 4);
  expect_error(f, "is not a tuple");
}

TEST(Npy, RefusesAnUnknownVersion) {
  NpyFile f;
  f.write(f32_header("(1,)"), 4, 4);
  expect_error(f, "unsupported .npy format version 4.0");
  f.write(f32_header("(1,)"), 4, 0);
  expect_error(f, "unsupported .npy format version 0.0");
  f.write(f32_header("(1,)"), 4, 1, 1);
  expect_error(f, "unsupported .npy format version 1.1");
}

TEST(Npy, RefusesAFortranOrderThatIsNotABoolean) {
  NpyFile f;
  f.write(f32_header("(1,)", "0"), 4);
  expect_error(f, "fortran_order is 0, not True or False");
  f.write(f32_header("(1,)", "Maybe"), 4);
  expect_error(f, "fortran_order is Maybe");
  f.write(f32_header("(1,)", "True"), 4);
  expect_error(f, "Fortran-ordered .npy files are not supported");
  f.write("{'descr': '<f4', 'shape': (1,), }\n", 4);
  expect_error(f, "no valid 'fortran_order'");
}

TEST(Npy, RefusesOverflowingShapes) {
  NpyFile f;
  f.write(f32_header("(4294967296, 4294967296)"), 4);
  expect_error(f, "is too large");
  f.write(f32_header("(99999999999999999999,)"), 4);
  expect_error(f, "is too large");
  // The element count fits in int64, the byte count does not.
  f.write(f32_header("(4611686018427387904,)"), 4);
  expect_error(f, "data is truncated");
}

TEST(Npy, RefusesDataOfAnotherLength) {
  NpyFile f;
  f.write(f32_header("(2, 3)"), 20);
  expect_error(f, "data is truncated (20 bytes, shape (2, 3) needs 6 x 4)");
  f.write(f32_header("(2, 3)"), 28);
  expect_error(f, "data is longer than its header says (28 bytes, shape (2, 3) needs 6 x 4)");
}

TEST(Npy, RefusesATruncatedHeader) {
  NpyFile f;
  {
    std::ofstream out(f.path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00\x40\x00{'descr': '<f4'", 25);
  }
  expect_error(f, "header is truncated");
}

}  // namespace
}  // namespace tessel
