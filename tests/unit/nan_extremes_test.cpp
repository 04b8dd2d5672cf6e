// NaN through the max / min family, the same in the three executors: the
// reference kernels, the tensor IR interpreter (the lowered node) and the LLVM
// code (default schedules, vectorized). A NaN is the extreme, as in numpy and
// in the tensor IR's max / min (float_max / float_min of scalar_semantics.h):
// ReduceMax, ReduceMin, MaxPool, GlobalMaxPool, Max, Min and ScatterElements'
// max / min reductions give NaN wherever a NaN is among their operands, ArgMax /
// ArgMin and MaxPool's Indices its (first, or with select_last_index last) position.
#include <cmath>
#include <limits>
#include <tuple>

#include "src/driver/compile_model.h"
#include "tests/unit/lower_nn_test_util.h"

namespace tessel::lower_nn_test {
namespace {

using std::vector;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// got == want elementwise, NaN only where want is NaN.
void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = got.get_f64(i), w = want.get_f64(i);
    EXPECT_TRUE((std::isnan(g) && std::isnan(w)) || g == w)
        << what << ": element " << i << " is " << g << ", expected " << w;
  }
}

// Runs the node in the three executors and compares each output with `want`.
void expect_everywhere(const std::string& op, const vector<Arg>& args, graph::Attrs attributes,
                       const vector<Tensor>& want) {
  LoweredNode n(op, "n", args, std::move(attributes), int(want.size()));
  vector<Tensor> inputs;  // the graph's inputs: the non-constant arguments
  for (const Arg& a : args)
    if (!a.constant && !a.omitted) inputs.push_back(a.value);
  vector<graph::Value*> outputs(n.node->outputs.begin(), n.node->outputs.end());
  n.g.set_outputs(outputs);
  driver::JitModel jit(driver::compile_graph(n.g, {}));
  vector<Tensor> ref = n.reference(), tir = n.interpreted(), llvm = jit.run(inputs);
  for (size_t o = 0; o < want.size(); ++o) {
    std::string what = op + " output " + std::to_string(o);
    expect_same(ref[o], want[o], what + " (reference)");
    expect_same(tir[o], want[o], what + " (tensor IR interpreter)\n" + n.text());
    expect_same(llvm[o], want[o], what + " (LLVM)");
  }
}

Tensor f32(Dims shape, const vector<float>& values) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = values[size_t(i)];
  return t;
}

// rows x 37 of k + 0.5 * row, NaN at nan_at[row] (-1: none): first, middle,
// last, in a vector's tail.
const vector<int64_t> kNanAt = {0, 17, 36, -1, 33, 8};

Tensor rows_with_nans(int64_t width, bool negate = false) {
  Tensor x(DType::kF32, {int64_t(kNanAt.size()), width});
  for (int64_t r = 0; r < x.shape()[0]; ++r)
    for (int64_t k = 0; k < width; ++k)
      x.data<float>()[r * width + k] = k == kNanAt[size_t(r)] ? kNaN : (negate ? -1 : 1) * (k + 0.5f * r);
  return x;
}

TEST(NanExtremes, ReduceMaxAndMinPropagateNaNWhereverItIs) {
  const int64_t w = 37;
  vector<float> max_want, min_want;
  for (size_t r = 0; r < kNanAt.size(); ++r) {
    max_want.push_back(kNanAt[r] >= 0 ? kNaN : (w - 1) + 0.5f * float(r));
    min_want.push_back(kNanAt[r] >= 0 ? kNaN : -((w - 1) + 0.5f * float(r)));
  }
  graph::Attrs drop = attrs(kv("keepdims", int64_t(0)));
  Dims rows = {int64_t(kNanAt.size())};
  expect_everywhere("ReduceMax", {value_arg(rows_with_nans(w)), const_arg(Tensor::from_i64({1}))}, drop,
                    {f32(rows, max_want)});
  expect_everywhere("ReduceMin", {value_arg(rows_with_nans(w, true)), const_arg(Tensor::from_i64({1}))}, drop,
                    {f32(rows, min_want)});
}

TEST(NanExtremes, ReduceMaxAlongAStridedAxis) {
  // Reduced along axis 0: each column is one reduction, NaN in columns 0, 17 and 36.
  Tensor x = rows_with_nans(37);
  vector<float> want;
  for (int64_t k = 0; k < 37; ++k) {
    bool nan = false;
    for (int64_t at : kNanAt) nan = nan || at == k;
    want.push_back(nan ? kNaN : float(k) + 0.5f * float(kNanAt.size() - 1));
  }
  expect_everywhere("ReduceMax", {value_arg(x), const_arg(Tensor::from_i64({0}))},
                    attrs(kv("keepdims", int64_t(0))), {f32({37}, want)});
}

TEST(NanExtremes, ArgMaxAndArgMinPointAtTheNaN) {
  Tensor x = rows_with_nans(37);
  x.data<float>()[4 * 37 + 35] = kNaN;  // row 4 has two: 33 and 35
  for (int64_t last : {0, 1}) {
    vector<int64_t> want;
    for (size_t r = 0; r < kNanAt.size(); ++r)
      want.push_back(kNanAt[r] < 0 ? 36 : (r == 4 && last) ? 35 : kNanAt[r]);
    Tensor idx = Tensor::from_i64(want);
    graph::Attrs a = attrs(kv("axis", int64_t(1)), kv("keepdims", int64_t(0)), kv("select_last_index", last));
    expect_everywhere("ArgMax", {value_arg(x)}, a, {idx});
    vector<int64_t> min_want = want;
    for (size_t r = 0; r < kNanAt.size(); ++r)
      if (kNanAt[r] < 0) min_want[r] = 0;
    expect_everywhere("ArgMin", {value_arg(x)}, a, {Tensor::from_i64(min_want)});
  }
}

// A 1 x 2 x 9 x 9 image, NaN at (0, 0, 0, 0), (0, 0, 4, 5) and (0, 1, 8, 8).
Tensor image_with_nans() {
  Tensor x(DType::kF32, {1, 2, 9, 9});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = float((i * 7) % 23) - 11;
  for (int64_t at : {int64_t(0), int64_t(4 * 9 + 5), int64_t(81 + 8 * 9 + 8)}) x.data<float>()[at] = kNaN;
  return x;
}

// MaxPool by definition: NaN if a tap is NaN, the first such tap's flat index.
vector<Tensor> max_pool_want(const Tensor& x, int64_t k, int64_t stride, int64_t pad) {
  int64_t n = 9, out = (n + 2 * pad - k) / stride + 1;
  Tensor y(DType::kF32, {1, 2, out, out});
  vector<int64_t> indices;
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t oi = 0; oi < out; ++oi)
      for (int64_t oj = 0; oj < out; ++oj) {
        float best = -std::numeric_limits<float>::infinity();
        int64_t at = -1;
        for (int64_t i = oi * stride - pad; i < oi * stride - pad + k; ++i)
          for (int64_t j = oj * stride - pad; j < oj * stride - pad + k; ++j) {
            if (i < 0 || j < 0 || i >= n || j >= n) continue;
            float v = x.data<float>()[(c * n + i) * n + j];
            if (at >= 0 && (std::isnan(best) || !(v > best || std::isnan(v)))) continue;
            best = v;
            at = (c * n + i) * n + j;
          }
        y.data<float>()[(c * out + oi) * out + oj] = best;
        indices.push_back(at);
      }
  return {y, Tensor::from_i64(indices, {1, 2, out, out})};
}

TEST(NanExtremes, MaxPoolPropagatesNaNAndItsIndexIsTheNaN) {
  Tensor x = image_with_nans();
  for (auto [k, stride, pad] : {std::tuple{3, 1, 1}, std::tuple{2, 2, 0}, std::tuple{3, 2, 1}}) {
    graph::Attrs a = attrs(kv("kernel_shape", ints({k, k})), kv("strides", ints({stride, stride})),
                           kv("pads", ints({pad, pad, pad, pad})));
    vector<Tensor> want = max_pool_want(x, k, stride, pad);
    SCOPED_TRACE("kernel " + std::to_string(k) + " stride " + std::to_string(stride));
    expect_everywhere("MaxPool", {value_arg(x)}, a, {want[0]});
    expect_everywhere("MaxPool", {value_arg(x)}, a, want);
  }
}

TEST(NanExtremes, GlobalMaxPoolPropagatesNaN) {
  Tensor x = image_with_nans();
  x.data<float>()[81 + 8 * 9 + 8] = 100;  // channel 1 without NaN
  expect_everywhere("GlobalMaxPool", {value_arg(x)}, {}, {f32({1, 2, 1, 1}, {kNaN, 100})});
}

TEST(NanExtremes, MaxAndMinOfANaNAreNaNOnEitherSide) {
  Tensor a = f32({8}, {1, kNaN, 3, kNaN, -1, 0, 5, kNaN});
  Tensor b = f32({8}, {kNaN, 2, 1, kNaN, -2, 7, 5, 4});
  expect_everywhere("Max", {value_arg(a), value_arg(b)}, {},
                    {f32({8}, {kNaN, kNaN, 3, kNaN, -1, 7, 5, kNaN})});
  expect_everywhere("Min", {value_arg(a), value_arg(b)}, {},
                    {f32({8}, {kNaN, kNaN, 1, kNaN, -2, 0, 5, kNaN})});
}

// ScatterElements' max / min reductions combine with the same max / min: a
// NaN, already there or scattered, stays.
TEST(NanExtremes, ScatterElementsMaxAndMinKeepEveryNaN) {
  Tensor data = f32({4}, {1, kNaN, 3, 4});
  Tensor updates = f32({3}, {kNaN, 5, 2});
  Tensor indices = Tensor::from_i64({0, 1, 3});
  for (const char* r : {"max", "min"}) {
    float last = std::string(r) == "max" ? 4 : 2;
    expect_everywhere("ScatterElements", {value_arg(data), value_arg(indices), value_arg(updates)},
                      attrs(kv("axis", int64_t(0)), kv("reduction", std::string(r))),
                      {f32({4}, {kNaN, kNaN, 3, last})});
  }
}

}  // namespace
}  // namespace tessel::lower_nn_test
