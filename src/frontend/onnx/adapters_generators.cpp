// Operators whose output depends only on their constant inputs and
// attributes: the spectral windows (HannWindow, HammingWindow, BlackmanWindow)
// become constants, computed in double as ONNX's reference does and stored
// in the requested type; AffineGrid's grid of sampling positions is a
// constant too, transformed by theta with one MatMul. Range keeps its op;
// its adapter reads known input values and checks Range-27's stash_type.
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

// The normalised position of index i of n along one axis: the corners at
// -1 and 1 (align_corners) or the pixel centres.
double grid_position(int64_t i, int64_t n, bool align_corners) {
  if (align_corners) return n > 1 ? -1.0 + 2.0 * double(i) / double(n - 1) : -1.0;
  return -1.0 + (2.0 * double(i) + 1.0) / double(n);
}

// AffineGrid-20: theta [N, K, K + 1] and size (N, C, spatial...) known while
// compiling; grid[n, spatial..., :] = theta[n] (x, y[, z], 1), x along the
// last spatial axis.
void adapt_affine_grid(AdaptContext& c) {
  graph::Value* theta = c.required_input(0, "theta");
  c.required_input(1, "size");
  const Tensor* size = c.constant_input(1);
  TESSEL_USER_CHECK(size && (size->numel() == 4 || size->numel() == 5), c.span())
      << "size must be a constant (N, C, H, W) or (N, C, D, H, W): it decides the output's shape";
  const int64_t spatial = size->numel() - 2;
  std::vector<int64_t> dims;
  int64_t positions = 1;
  for (int64_t d = 0; d < spatial; ++d) {
    dims.push_back(size->get_i64(2 + d));
    TESSEL_USER_CHECK(dims.back() > 0, c.span()) << "size must be positive, got " << dims.back();
    positions *= dims.back();
  }
  TESSEL_USER_CHECK(
      c.static_dim(theta, 1, "theta") == spatial && c.static_dim(theta, 2, "theta") == spatial + 1, c.span())
      << "theta must be [N, " << spatial << ", " << spatial + 1 << "] for " << spatial
      << " spatial axes, got " << theta->type.str();
  bool align = c.int_attr("align_corners", 0) != 0;
  Tensor base(theta->type.dtype, {positions, spatial + 1});  // (x, y[, z], 1) per position, x fastest
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    for (int64_t d = spatial - 1; d >= 0; --d) {  // d = spatial - 1 is x
      int64_t n = dims[size_t(d)], i = rest % n;
      rest /= n;
      base.set_f64(p * (spatial + 1) + (spatial - 1 - d), grid_position(i, n, align));
    }
    base.set_f64(p * (spatial + 1) + spatial, 1.0);
  }
  graph::Value* grid = c.emit("MatMul", {c.constant(std::move(base)), c.transpose(theta, {0, 2, 1})})[0];
  std::vector<int64_t> shape{size->get_i64(0)};
  shape.insert(shape.end(), dims.begin(), dims.end());
  shape.push_back(spatial);
  c.results = c.emit("Reshape", {grid, c.i64_vector(shape)});
}

// Range's length is a function of its inputs' values: over graph inputs
// whose values are known (ImportOptions::input_values, as the conformance
// runner gives them) it specialises on them, as Resize does on its scales;
// otherwise its length is unknown and compiling it is refused. Range-27 computes float16
// and bfloat16 ranges in stash_type (float unless named), as the lowering
// does: other stash types are refused rather than computed otherwise. The
// attribute has no effect on other types.
void adapt_range(AdaptContext& c) {
  for (size_t i = 0; i < 3; ++i) c.constant_input(i);
  if (!c.attrs.has("stash_type")) return;
  DType stash = c.float_type_attr("stash_type", DType::kF32);
  graph::Value* start = c.required_input(0, "start");
  bool half = start->type.dtype == DType::kF16 || start->type.dtype == DType::kBF16;
  TESSEL_USER_CHECK(!half || stash == DType::kF32, c.span())
      << "a " << dtype_name(start->type.dtype) << " Range is computed in float; stash_type "
      << dtype_name(stash) << " is not supported";
  c.attrs.erase("stash_type");
}

}  // namespace

void register_generator_adapters(AdapterTable& t) {
  t["AffineGrid"] = adapt_affine_grid;
  t["Range"] = adapt_range;
  t["HannWindow"] = [](AdaptContext& c) { adapt_window(c, 0.5, 0.5, 0.0); };
  t["HammingWindow"] = [](AdaptContext& c) { adapt_window(c, 25.0 / 46.0, 21.0 / 46.0, 0.0); };
  t["BlackmanWindow"] = [](AdaptContext& c) { adapt_window(c, 0.42, 0.5, 0.08); };
}

}  // namespace tessel::onnx_frontend
