// The storage-only element types (ir/core/small_types.h): every code of every
// format decodes to a value that encodes back to it; rounding, saturation and
// the special values follow ONNX's cases; the three executors agree on casts;
// ONNX's packed 4- and 2-bit data round-trips; arithmetic on them is refused.
#include <cmath>
#include <filesystem>
#include <limits>

#include "ir/core/small_types.h"
#include "src/driver/compile_model.h"
#include "src/frontend/onnx/tensor_proto.h"
#include "tests/unit/lower_nn_test_util.h"

namespace tessel::lower_nn_test {
namespace {

using small_types::decode;
using small_types::encode;
using small_types::Format;

constexpr Format kFloats[] = {Format::kE4M3FN, Format::kE4M3FNUZ, Format::kE5M2, Format::kE5M2FNUZ,
                              Format::kE2M1};

TEST(SmallTypes, EveryCodeRoundTrips) {
  for (Format f : kFloats) {
    int codes = 1 << small_types::width_bits(f);
    for (int c = 0; c < codes; ++c) {
      double v = decode(f, uint8_t(c));
      if (std::isnan(v)) continue;
      EXPECT_EQ(encode(f, v, false), c) << "format " << int(f) << " code " << c << " value " << v;
    }
  }
  for (int c = 0; c < 255; ++c) EXPECT_EQ(encode(Format::kE8M0, decode(Format::kE8M0, uint8_t(c)), true), c);
}

TEST(SmallTypes, RoundingSaturationAndSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // ONNX's cases: E4M3FN saturates to 448 (0x7E); without saturation overflow is NaN (0x7F), signed.
  EXPECT_EQ(encode(Format::kE4M3FN, 1e6, true), 0x7E);
  EXPECT_EQ(encode(Format::kE4M3FN, -inf, true), 0xFE);
  EXPECT_EQ(encode(Format::kE4M3FN, 1e6, false), 0x7F);
  EXPECT_EQ(encode(Format::kE4M3FN, -inf, false), 0xFF);
  EXPECT_EQ(encode(Format::kE4M3FN, -1e-7, true), 0x80);    // -0 keeps its sign
  EXPECT_EQ(encode(Format::kE4M3FNUZ, -1e-7, true), 0x00);  // no -0 there
  EXPECT_EQ(encode(Format::kE4M3FNUZ, nan, true), 0x80);
  EXPECT_EQ(encode(Format::kE5M2, inf, false), 0x7C);
  EXPECT_EQ(encode(Format::kE5M2, inf, true), 0x7B);
  // Halfway between 448 and the next step (464) stays at 448, the even code; E5M2's largest
  // code is odd, so its tie overflows.
  EXPECT_EQ(encode(Format::kE4M3FN, 464, false), 0x7E);
  EXPECT_EQ(encode(Format::kE5M2, 61440, false), 0x7C);
  // E2M1: 0.25 ties to 0, -3.5 to -4, and it always saturates.
  EXPECT_EQ(encode(Format::kE2M1, 0.25, false), 0x0);
  EXPECT_EQ(encode(Format::kE2M1, -3.5, false), 0xE);
  EXPECT_EQ(encode(Format::kE2M1, 1e6, false), 0x7);
  // E8M0 rounds up to a power of two.
  EXPECT_EQ(encode(Format::kE8M0, 0.124, true), 124);
  EXPECT_EQ(encode(Format::kE8M0, 0.125, true), 124);
  EXPECT_EQ(encode(Format::kE8M0, -1, true), 0xFF);
  // The small integers wrap.
  EXPECT_EQ(encode(Format::kI4, -9, true), 7);
  EXPECT_EQ(decode(Format::kI4, 8), -8);
  EXPECT_EQ(encode(Format::kU2, -3, true), 1);
}

void expect_everywhere(const std::string& op, const Tensor& x, graph::Attrs attributes, const Tensor& want) {
  LoweredNode n(op, "n", {value_arg(x)}, std::move(attributes), 1);
  n.g.set_outputs({n.node->outputs[0]});
  driver::JitModel jit(driver::compile_graph(n.g, {}));
  for (const auto& [what, got] : std::vector<std::pair<std::string, Tensor>>{
           {"reference", n.reference()[0]}, {"interpreter", n.interpreted()[0]}, {"LLVM", jit.run({x})[0]}}) {
    ASSERT_EQ(got.dtype(), want.dtype()) << what;
    for (int64_t i = 0; i < want.numel(); ++i)
      EXPECT_EQ(static_cast<const uint8_t*>(got.raw())[i], static_cast<const uint8_t*>(want.raw())[i])
          << what << ": element " << i;
  }
}

Tensor codes(DType t, const std::vector<uint8_t>& bits) {
  Tensor c(t, {int64_t(bits.size())});
  for (size_t i = 0; i < bits.size(); ++i) static_cast<uint8_t*>(c.raw())[i] = bits[i];
  return c;
}

TEST(SmallTypes, CastsAgreeInTheThreeExecutors) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x(DType::kF32, {8});
  std::vector<float> v = {0.4789f, -3.5f, 464.0f, 1e6f, -inf, std::nanf(""), -1e-7f, 9.0f};
  for (int64_t i = 0; i < 8; ++i) x.data<float>()[i] = v[size_t(i)];
  for (int64_t saturate : {1, 0}) {
    graph::Attrs to = attrs(kv("to", std::string("f8e4m3fn")), kv("saturate", saturate));
    std::vector<uint8_t> want;
    for (float f : v) want.push_back(encode(Format::kE4M3FN, f, saturate != 0));
    SCOPED_TRACE(saturate);
    expect_everywhere("Cast", x, to, codes(DType::kF8E4M3FN, want));
  }
  std::vector<uint8_t> i4;
  for (float f : v) i4.push_back(encode(Format::kI4, f, true));
  expect_everywhere("Cast", x, attrs(kv("to", std::string("i4"))), codes(DType::kI4, i4));
  // Back to float: every E5M2 code decodes alike.
  std::vector<uint8_t> all(256);
  for (int c = 0; c < 256; ++c) all[size_t(c)] = uint8_t(c);
  Tensor e5m2 = codes(DType::kF8E5M2, all);
  LoweredNode n("Cast", "n", {value_arg(e5m2)}, attrs(kv("to", std::string("f32"))), 1);
  n.g.set_outputs({n.node->outputs[0]});
  driver::JitModel jit(driver::compile_graph(n.g, {}));
  Tensor ref = n.reference()[0], tir = n.interpreted()[0], llvm = jit.run({e5m2})[0];
  for (int c = 0; c < 256; ++c) {
    double want = decode(Format::kE5M2, uint8_t(c));
    for (const Tensor* got : {&ref, &tir, &llvm}) {
      double g = got->get_f64(c);
      EXPECT_TRUE((std::isnan(want) && std::isnan(g)) || g == want) << "code " << c << ": " << g;
    }
  }
}

TEST(SmallTypes, PackedOnnxDataRoundTrips) {
  Tensor t(DType::kI4, {5});
  for (int64_t i = 0; i < 5; ++i) t.set_i64(i, i - 3);  // -3 .. 1, an odd count
  std::string path = (std::filesystem::temp_directory_path() / "tessel_small_types_i4.pb").string();
  onnx_frontend::save_tensor_pb(t, "x", path);
  Tensor back = onnx_frontend::load_tensor_pb(path);
  std::filesystem::remove(path);
  ASSERT_EQ(back.dtype(), DType::kI4);
  EXPECT_EQ(back.to_i64_vector(), (std::vector<int64_t>{-3, -2, -1, 0, 1}));
}

TEST(SmallTypes, ArithmeticOnThemIsRefused) {
  try {
    LoweredNode n("Add", "n",
                  {value_arg(codes(DType::kF8E4M3FN, {1, 2})), value_arg(codes(DType::kF8E4M3FN, {3, 4}))},
                  {}, 1);
    ADD_FAILURE() << "an Add of f8e4m3fn tensors was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Add does not compute on f8e4m3fn tensors; Cast them first"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel::lower_nn_test
