// LRN and GlobalLpPool as compositions. LRN's sum of squares over a window of
// neighbouring channels is an average pool of x^2 over a [C, H x W] view with
// zero padding counted (so the mean is the sum / size); GlobalLpPool is the
// p-th root of the sum of |x|^p over the spatial axes.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

void adapt_lrn(AdaptContext& c) {
  Value* x = c.required_input(0, "X");
  int rank = x->type.rank();
  TESSEL_USER_CHECK(rank >= 3, c.span()) << "X must be (N, C, spatial...)";
  TESSEL_USER_CHECK(c.attrs.has("size"), c.span()) << "missing required attribute 'size'";
  int64_t size = c.int_attr("size", 1);
  TESSEL_USER_CHECK(size >= 1, c.span()) << "size must be positive, got " << size;
  double alpha = c.float_attr("alpha", 1e-4), beta = c.float_attr("beta", 0.75),
         bias = c.float_attr("bias", 1.0);
  std::vector<int64_t> shape;
  int64_t pixels = 1;
  for (int d = 0; d < rank; ++d) {
    shape.push_back(c.static_dim(x, d, "X"));
    if (d >= 2) pixels *= shape.back();
  }
  DType t = x->type.dtype;
  Value* squares = c.emit("Mul", {x, x})[0];
  Value* planes = c.emit("Reshape", {squares, c.i64_vector({shape[0], 1, shape[1], pixels})})[0];
  graph::Attrs pool;
  pool.set("kernel_shape", std::vector<int64_t>{size, 1});
  pool.set("pads", std::vector<int64_t>{(size - 1) / 2, 0, size - 1 - (size - 1) / 2, 0});
  pool.set("count_include_pad", int64_t(1));
  Value* mean = c.emit("AveragePool", {planes}, std::move(pool))[0];
  mean = c.emit("Reshape", {mean, c.i64_vector(shape)})[0];
  Value* base = c.emit("Add", {c.emit("Mul", {mean, c.scalar(t, alpha)})[0], c.scalar(t, bias)})[0];
  c.results = c.emit("Mul", {x, c.emit("Pow", {base, c.scalar(t, -beta)})[0]});
}

void adapt_global_lp_pool(AdaptContext& c) {
  Value* x = c.required_input(0, "X");
  int rank = x->type.rank();
  TESSEL_USER_CHECK(rank >= 3, c.span()) << "X must be (N, C, spatial...)";
  double p = double(c.int_attr("p", 2));
  TESSEL_USER_CHECK(p > 0, c.span()) << "p must be positive, got " << p;
  DType t = x->type.dtype;
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Value* powered = c.emit("Pow", {c.emit("Abs", {x})[0], c.scalar(t, p)})[0];
  Value* sum = c.emit("ReduceSum", {powered, c.i64_vector(axes)}, one_attr("keepdims", int64_t(1)))[0];
  c.results = c.emit("Pow", {sum, c.scalar(t, 1.0 / p)});
}

}  // namespace

void register_channel_norm_adapters(AdapterTable& t) {
  t["LRN"] = adapt_lrn;
  t["GlobalLpPool"] = adapt_global_lp_pool;
}

}  // namespace tessel::onnx_frontend
