// Operators whose output depends only on their constant inputs and
// attributes: the spectral windows (HannWindow, HammingWindow, BlackmanWindow)
// become constants, computed in double as ONNX's reference does and stored
// in the requested type.
#include <cmath>
#include <numbers>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/tensor_proto.h"

namespace tessel::onnx_frontend {

namespace {

// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N the size (periodic) or
// size - 1 (symmetric).
void adapt_window(AdaptContext& c, double a0, double a1, double a2) {
  c.required_input(0, "size");
  const Tensor* size_value = c.constant_input(0);
  TESSEL_USER_CHECK(size_value && size_value->numel() == 1, c.span())
      << "size must be a constant scalar (it decides the output's shape)";
  int64_t size = size_value->get_i64(0);
  TESSEL_USER_CHECK(size > 0, c.span()) << "size must be positive, got " << size;
  auto dtype = dtype_from_onnx(int(c.int_attr("output_datatype", 1)));
  TESSEL_USER_CHECK(dtype.has_value() && dtype != DType::kBool, c.span())
      << "attribute 'output_datatype' names an unsupported type";
  double period = c.int_attr("periodic", 1) != 0 ? double(size) : double(size - 1);
  Tensor w(*dtype, {size});
  for (int64_t n = 0; n < size; ++n) {
    double phase = period > 0 ? 2 * std::numbers::pi * double(n) / period : 0.0;
    w.set_f64(n, a0 - a1 * std::cos(phase) + a2 * std::cos(2 * phase));
  }
  c.results = std::vector<graph::Value*>{c.constant(std::move(w))};
}

}  // namespace

void register_generator_adapters(AdapterTable& t) {
  t["HannWindow"] = [](AdaptContext& c) { adapt_window(c, 0.5, 0.5, 0.0); };
  t["HammingWindow"] = [](AdaptContext& c) { adapt_window(c, 25.0 / 46.0, 21.0 / 46.0, 0.0); };
  t["BlackmanWindow"] = [](AdaptContext& c) { adapt_window(c, 0.42, 0.5, 0.08); };
}

}  // namespace tessel::onnx_frontend
