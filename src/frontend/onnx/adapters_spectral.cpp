// DFT, STFT and MelWeightMatrix. A DFT along an axis is two MatMuls of the
// real and imaginary parts with constant cosine and sine matrices (computed
// in double): O(n^2) per transform, exact to rounding, and one kernel the
// schedules already tile. Zero padding or truncation to dft_length folds
// into the matrices; onesided keeps the first n / 2 + 1 frequencies, and an
// inverse onesided transform reads a Hermitian spectrum's first half and
// returns the real signal (each bin but DC and Nyquist counted twice). STFT
// gathers the frames with constant indices, applies the window and takes a
// DFT of each; MelWeightMatrix is a constant.
#include <cmath>
#include <numbers>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/tensor_proto.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

struct Transform {
  int64_t inputs;   // signal samples (or spectrum bins) read along the axis
  int64_t length;   // the DFT's n
  int64_t outputs;  // values written along the axis
  bool inverse, onesided;
};

// [inputs, outputs] matrices: out = re @ a + im @ b (real part), re @ c + im @ d
// (imaginary part); a C2R inverse has only the real part.
struct Matrices {
  Tensor a, b, c, d;
};

Matrices dft_matrices(DType t, const Transform& f) {
  Matrices m{Tensor(t, {f.inputs, f.outputs}), Tensor(t, {f.inputs, f.outputs}),
             Tensor(t, {f.inputs, f.outputs}), Tensor(t, {f.inputs, f.outputs})};
  double n = double(f.length), sign = f.inverse ? 1.0 : -1.0, scale = f.inverse ? 1.0 / n : 1.0;
  bool real_out = f.inverse && f.onesided;
  for (int64_t j = 0; j < f.inputs && j < f.length; ++j) {  // samples past the length are truncated
    for (int64_t k = 0; k < f.outputs; ++k) {
      // Forward: input j is a sample, output k a frequency; inverse: the other way.
      double theta = 2 * std::numbers::pi * double(j) * double(k) / n;
      double weight = scale;
      if (real_out) weight *= (j == 0 || 2 * j == f.length) ? 1.0 : (2 * j < f.length ? 2.0 : 0.0);
      double cs = weight * std::cos(theta), sn = sign * weight * std::sin(theta);
      int64_t at = j * f.outputs + k;
      m.a.set_f64(at, cs);   // re * cos
      m.b.set_f64(at, -sn);  // - im * sin(sign)
      m.c.set_f64(at, sn);   // re * sin(sign)
      m.d.set_f64(at, cs);   // im * cos
    }
  }
  return m;
}

// x [..., n, 1 or 2] transformed along `axis` (a signal axis, not the last).
Value* dft(AdaptContext& c, Value* x, int64_t axis, const Transform& f) {
  int rank = x->type.rank();
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  perm.push_back(rank - 1);
  Value* moved = c.transpose(x, perm);  // [..., n, parts]
  bool complex_in = c.static_dim(x, -1, "input") == 2;
  DType t = x->type.dtype;
  auto part = [&](int64_t i) {
    return c.emit("Squeeze",
                  {c.emit("Gather", {moved, c.i64_vector({i})}, one_attr("axis", int64_t(rank - 1)))[0],
                   c.i64_vector({rank - 1})})[0];
  };
  Value* re = part(0);
  Value* im = complex_in ? part(1) : nullptr;
  Matrices m = dft_matrices(t, f);
  auto product = [&](Value* v, Tensor& mat) { return c.emit("MatMul", {v, c.constant(std::move(mat))})[0]; };
  Value* out_re = product(re, m.a);
  if (im) out_re = c.emit("Add", {out_re, product(im, m.b)})[0];
  std::vector<Value*> parts{out_re};
  if (!(f.inverse && f.onesided)) {
    Value* out_im = product(re, m.c);
    if (im) out_im = c.emit("Add", {out_im, product(im, m.d)})[0];
    parts.push_back(out_im);
  }
  for (Value*& p : parts) p = c.emit("Unsqueeze", {p, c.i64_vector({-1})})[0];
  Value* joined = parts.size() == 1 ? parts[0] : c.emit("Concat", parts, one_attr("axis", int64_t(-1)))[0];
  std::vector<int64_t> back(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) back[size_t(perm[size_t(i)])] = i;
  return c.transpose(joined, back);
}

int64_t scalar_input(AdaptContext& c, size_t i, const char* what) {
  const Tensor* v = c.constant_input(i);
  TESSEL_USER_CHECK(v && v->numel() == 1, c.span()) << what << " must be a scalar known while compiling";
  return v->get_i64(0);
}

void adapt_dft(AdaptContext& c) {
  Value* x = c.required_input(0, "input");
  int rank = x->type.rank();
  TESSEL_USER_CHECK(rank >= 2, c.span()) << "input must be [..., signal, 1 or 2]";
  int64_t parts = c.static_dim(x, -1, "input");
  TESSEL_USER_CHECK(parts == 1 || parts == 2, c.span())
      << "input's last dimension must be 1 (real) or 2 (complex)";
  int64_t axis =
      c.opset >= 20 ? (c.input_or_null(2) ? scalar_input(c, 2, "axis") : -2) : c.int_attr("axis", 1);
  TESSEL_USER_CHECK(axis >= -rank && axis < rank, c.span()) << "axis " << axis << " is out of range";
  if (axis < 0) axis += rank;
  TESSEL_USER_CHECK(axis != rank - 1, c.span())
      << "axis must be a signal axis, not the last (real/imaginary) one";
  Transform f{c.static_dim(x, axis, "input"), 0, 0, c.int_attr("inverse", 0) != 0,
              c.int_attr("onesided", 0) != 0};
  bool c2r = f.inverse && f.onesided;
  f.length = c.input_or_null(1) ? scalar_input(c, 1, "dft_length") : c2r ? 2 * (f.inputs - 1) : f.inputs;
  TESSEL_USER_CHECK(f.length >= 1, c.span()) << "dft_length must be positive, got " << f.length;
  f.outputs = c2r || !f.onesided ? f.length : f.length / 2 + 1;
  c.results = std::vector<Value*>{dft(c, x, axis, f)};
}

void adapt_stft(AdaptContext& c) {
  Value* signal = c.required_input(0, "signal");
  TESSEL_USER_CHECK(signal->type.rank() == 3, c.span()) << "signal must be [batch, length, 1 or 2]";
  int64_t step = scalar_input(c, 1, "frame_step");
  Value* window = c.input_or_null(2);
  int64_t frame = c.input_or_null(3) ? scalar_input(c, 3, "frame_length")
                  : window           ? c.static_dim(window, 0, "window")
                                     : 0;
  TESSEL_USER_CHECK(frame >= 1 && step >= 1, c.span())
      << "frame_length (or a window) and frame_step must be positive";
  TESSEL_USER_CHECK(!window || c.static_dim(window, 0, "window") == frame, c.span())
      << "the window must have frame_length values";
  int64_t length = c.static_dim(signal, 1, "signal");
  TESSEL_USER_CHECK(length >= frame, c.span()) << "the signal is shorter than one frame";
  int64_t frames = (length - frame) / step + 1;
  std::vector<int64_t> at;
  for (int64_t i = 0; i < frames; ++i)
    for (int64_t j = 0; j < frame; ++j) at.push_back(i * step + j);
  Value* framed = c.emit("Gather", {signal, c.constant(Tensor::from_i64(at, {frames, frame}))},
                         one_attr("axis", int64_t(1)))[0];  // [batch, frames, frame, parts]
  if (window)
    framed = c.emit("Mul", {framed, c.emit("Reshape", {c.cast(window, signal->type.dtype),
                                                       c.i64_vector({1, 1, frame, 1})})[0]})[0];
  bool onesided = c.int_attr("onesided", 1) != 0;
  Transform f{frame, frame, onesided ? frame / 2 + 1 : frame, false, onesided};
  c.results = std::vector<Value*>{dft(c, framed, 2, f)};
}

void adapt_mel_weight_matrix(AdaptContext& c) {
  int64_t bins = scalar_input(c, 0, "num_mel_bins"), length = scalar_input(c, 1, "dft_length");
  int64_t rate = scalar_input(c, 2, "sample_rate");
  const Tensor* lower = c.constant_input(3);
  const Tensor* upper = c.constant_input(4);
  TESSEL_USER_CHECK(lower && upper && lower->numel() == 1 && upper->numel() == 1, c.span())
      << "lower_edge_hertz and upper_edge_hertz must be scalars known while compiling";
  TESSEL_USER_CHECK(bins >= 1 && length >= 1 && rate >= 1, c.span())
      << "num_mel_bins, dft_length and sample_rate must be positive";
  auto dtype = dtype_from_onnx(int(c.int_attr("output_datatype", 1)));
  TESSEL_USER_CHECK(dtype.has_value() && *dtype != DType::kBool, c.span())
      << "attribute 'output_datatype' names an unsupported type";
  // Triangles between bins + 2 points spaced evenly in mels, as ONNX's reference places them.
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double low = mel(lower->get_f64(0)), step = (mel(upper->get_f64(0)) - low) / double(bins + 2);
  std::vector<int64_t> point;
  for (int64_t i = 0; i < bins + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (double(i) * step + low) / 2595) - 1);
    point.push_back(int64_t(std::floor(double(length + 1) * hz / double(rate))));
  }
  int64_t spectrum = length / 2 + 1;
  Tensor w(*dtype, {spectrum, bins});
  auto set = [&](int64_t j, int64_t i, double v) {
    TESSEL_USER_CHECK(j >= 0 && j < spectrum, c.span())
        << "the mel edges lie past the spectrum's " << spectrum << " bins";
    w.set_f64(j * bins + i, v);
  };
  for (int64_t i = 0; i < bins; ++i) {
    int64_t left = point[size_t(i)], center = point[size_t(i + 1)], right = point[size_t(i + 2)];
    if (center == left) set(center, i, 1);
    for (int64_t j = left; center > left && j <= center; ++j)
      set(j, i, double(j - left) / double(center - left));
    for (int64_t j = center; j < right; ++j) set(j, i, double(right - j) / double(right - center));
  }
  c.results = std::vector<Value*>{c.constant(std::move(w))};
}

}  // namespace

void register_spectral_adapters(AdapterTable& t) {
  t["DFT"] = adapt_dft;
  t["STFT"] = adapt_stft;
  t["MelWeightMatrix"] = adapt_mel_weight_matrix;
}

}  // namespace tessel::onnx_frontend
