// Resize (opsets 11 to 19) and Upsample become, per resized axis, a Gather of
// the input rows each output position reads (nearest: one) and, for linear
// and cubic, a sum of those rows weighted by the interpolation's
// coefficients. The taps and weights are worked out here, once, from the
// static shape and the constant scales, sizes and roi, by ONNX's rules:
// every coordinate transformation, nearest rounding, cubic_coeff_a,
// exclude_outside, antialiased downsampling, keep_aspect_ratio_policy, axes,
// and tf_crop_and_resize's extrapolation value.
#include <algorithm>
#include <cmath>
#include <limits>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

struct ResizeRules {
  std::string mode, coordinates, nearest_mode, aspect_policy;
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false, antialias = false;
};

// The taps of one resized axis: for output position o, `taps` input indices
// (clamped to the axis) and their weights; `outside` where tf_crop_and_resize
// maps o off the input, which then reads the extrapolation value.
struct AxisTaps {
  int64_t taps = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<bool> outside;
};

// Where output position x of `out` falls on an input axis of `in` elements.
double source_coordinate(const ResizeRules& r, double x, int64_t in, int64_t out, double scale,
                         double roi_start, double roi_end) {
  double out_f = scale * double(in);  // the output length before rounding
  const std::string& m = r.coordinates;
  if (m == "align_corners") return out_f == 1 ? 0.0 : x * double(in - 1) / (out_f - 1);
  if (m == "asymmetric") return x / scale;
  if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m == "pytorch_half_pixel") return out_f == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    double offset = double(in) / 2 * (1 - double(out) / out_f);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (m == "tf_crop_and_resize") {
    double span = (roi_end - roi_start) * double(in - 1);
    double at = out_f == 1 ? span / 2 : x * span / (out_f - 1);
    return at + roi_start * double(in - 1);
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

double cubic_kernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// The weights of the taps at offsets start, start + 1, ... from the input
// position below the coordinate, `ratio` in (0, 1] past it.
std::vector<double> coefficients(const ResizeRules& r, double ratio, double scale) {
  if (r.mode == "nearest") {
    if (ratio == 1) return {0, 1};
    const std::string& m = r.nearest_mode;
    if (m == "floor") return {1, 0};
    if (m == "ceil") return {0, 1};
    bool up = m == "round_prefer_ceil" ? ratio >= 0.5 : ratio > 0.5;
    return {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
  }
  bool cubic = r.mode == "cubic";
  double reach = cubic ? 2 : 1;
  double s = r.antialias ? std::min(scale, 1.0) : 1.0;
  int64_t start = int64_t(std::floor(-reach / s)) + 1, n = 2 - 2 * start;
  std::vector<double> w;
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    double at = s * (double(start + k) - ratio);
    w.push_back(cubic ? cubic_kernel(at, r.cubic_a) : std::max(0.0, 1 - std::fabs(at)));
    sum += w.back();
  }
  if (r.antialias)
    for (double& v : w) v /= sum;
  return w;
}

AxisTaps axis_taps(const ResizeRules& r, int64_t in, int64_t out, double scale, double roi_start,
                   double roi_end) {
  AxisTaps t;
  for (int64_t o = 0; o < out; ++o) {
    double x = source_coordinate(r, double(o), in, out, scale, roi_start, roi_end);
    bool outside = r.coordinates == "tf_crop_and_resize" && (x < 0 || x > double(in - 1));
    double below = std::floor(x);
    double ratio = x == below ? 1.0 : x - below;
    int64_t above = int64_t(x == below ? x : below + 1);  // the tap at offset 0 of the second half
    std::vector<double> w = coefficients(r, ratio, scale);
    int64_t n = int64_t(w.size()), first = above - n / 2;
    double kept = 0;
    for (int64_t k = 0; k < n; ++k) {
      bool off_axis = first + k < 0 || first + k >= in;
      if (r.exclude_outside && off_axis) w[size_t(k)] = 0;
      kept += w[size_t(k)];
    }
    if (r.exclude_outside && kept != 0)
      for (double& v : w) v /= kept;
    t.taps = n;
    for (int64_t k = 0; k < n; ++k) {
      t.index.push_back(std::clamp<int64_t>(first + k, 0, in - 1));
      t.weight.push_back(outside ? 0.0 : w[size_t(k)]);
    }
    t.outside.push_back(outside);
  }
  return t;
}

// Nearest taps collapse to the one of weight 1.
void keep_nearest(AxisTaps& t) {
  std::vector<int64_t> index;
  for (size_t o = 0; o * size_t(t.taps) < t.index.size(); ++o)
    for (int64_t k = 0; k < t.taps; ++k)
      if (t.weight[o * size_t(t.taps) + size_t(k)] != 0) {
        index.push_back(t.index[o * size_t(t.taps) + size_t(k)]);
        break;
      }
  t.index = index;
  t.weight.assign(index.size(), 1.0);
  t.taps = 1;
}

bool is_identity(const AxisTaps& t, int64_t in) {
  if (t.taps != 1 || int64_t(t.index.size()) != in) return false;
  for (int64_t o = 0; o < in; ++o)
    if (t.index[size_t(o)] != o || t.outside[size_t(o)]) return false;
  return true;
}

// x resized along `axis` by the taps: [.., in, ..] -> [.., out, ..].
graph::Value* resize_axis(AdaptContext& c, graph::Value* x, int64_t axis, const AxisTaps& t) {
  int64_t out = int64_t(t.outside.size()), rank = x->type.rank();
  graph::Attrs along = one_attr("axis", axis);
  Dims index_shape = t.taps == 1 ? Dims{out} : Dims{out, t.taps};
  graph::Value* rows = c.emit("Gather", {x, c.constant(Tensor::from_i64(t.index, index_shape))}, along)[0];
  if (t.taps == 1) return rows;
  Dims weight_shape = {out, t.taps};
  for (int64_t d = axis + 1; d < rank; ++d) weight_shape.push_back(1);
  Tensor w(x->type.dtype, weight_shape);
  for (size_t i = 0; i < t.weight.size(); ++i) w.set_f64(int64_t(i), t.weight[i]);
  graph::Value* weighted = c.emit("Mul", {rows, c.constant(std::move(w))})[0];
  return c.emit("ReduceSum", {weighted, c.i64_vector({axis + 1})}, one_attr("keepdims", int64_t(0)))[0];
}

// The rules of the node's attributes, each checked against ONNX's choices.
ResizeRules rules_of(const AdaptContext& c) {
  auto choice = [&c](const char* attr, const std::string& fallback,
                     std::initializer_list<const char*> allowed) {
    std::string v = c.string_attr(attr, fallback);
    for (const char* a : allowed)
      if (v == a) return v;
    TESSEL_USER_ERROR(c.span()) << "attribute '" << attr << "' has the unknown value \"" << v << "\"";
    return v;
  };
  ResizeRules r;
  r.mode = choice("mode", "nearest", {"nearest", "linear", "cubic"});
  r.coordinates = choice("coordinate_transformation_mode", "half_pixel",
                         {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                          "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"});
  r.nearest_mode = choice("nearest_mode", "round_prefer_floor",
                          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  r.aspect_policy = choice("keep_aspect_ratio_policy", "stretch", {"stretch", "not_larger", "not_smaller"});
  r.cubic_a = c.float_attr("cubic_coeff_a", -0.75);
  r.extrapolation = c.float_attr("extrapolation_value", 0.0);
  r.exclude_outside = c.int_attr("exclude_outside", 0) != 0;
  r.antialias = c.int_attr("antialias", 0) != 0;
  return r;
}

// Input i as a constant of at least one element, or null where it is omitted
// or empty (ONNX's way of leaving scales or sizes out).
const Tensor* parameter(AdaptContext& c, size_t i, const char* what) {
  if (c.input_or_null(i) == nullptr) return nullptr;
  const Tensor* t = c.constant_input(i);
  TESSEL_USER_CHECK(t != nullptr, c.span())
      << what << " (input " << i << ") must be a constant: the output's shape and the interpolation's taps "
      << "are worked out when compiling";
  return t->numel() == 0 ? nullptr : t;
}

// The resize of x whose axis d goes from in[d] to out[d] elements at scale[d].
graph::Value* resize(AdaptContext& c, graph::Value* x, const ResizeRules& r, const std::vector<double>& scale,
                     const Dims& out, const std::vector<double>& roi) {
  int64_t rank = x->type.rank();
  TESSEL_USER_CHECK(r.mode == "nearest" || is_float(x->type.dtype), c.span())
      << r.mode << " interpolation needs a floating-point input, got " << x->type.str();
  graph::Value* outside = nullptr;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = x->type.dims[size_t(d)].value;
    TESSEL_USER_CHECK(out[size_t(d)] > 0 && in > 0, c.span())
        << "axis " << d << " would resize " << in << " elements to " << out[size_t(d)];
    AxisTaps t = axis_taps(r, in, out[size_t(d)], scale[size_t(d)], roi[size_t(d)], roi[size_t(rank + d)]);
    if (r.mode == "nearest") keep_nearest(t);
    if (is_identity(t, in)) continue;
    x = resize_axis(c, x, d, t);
    bool any_outside = std::find(t.outside.begin(), t.outside.end(), true) != t.outside.end();
    if (!any_outside) continue;
    Dims mask_shape = {out[size_t(d)]};
    for (int64_t e = d + 1; e < rank; ++e) mask_shape.push_back(1);
    Tensor mask(DType::kBool, mask_shape);
    for (size_t o = 0; o < t.outside.size(); ++o) mask.set_i64(int64_t(o), t.outside[o]);
    graph::Value* m = c.constant(std::move(mask));
    outside = outside ? c.emit("Or", {outside, m})[0] : m;
  }
  if (!outside) return x;
  return c.emit("Where", {outside, c.scalar(x->type.dtype, r.extrapolation), x})[0];
}

// The axes the scales, sizes and roi speak of (attribute `axes`, opset 18).
std::vector<int64_t> resized_axes(const AdaptContext& c, int64_t rank) {
  std::vector<int64_t> axes;
  if (const graph::AttrValue* a = c.attrs.find("axes")) {
    const auto* list = std::get_if<std::vector<int64_t>>(a);
    TESSEL_USER_CHECK(list != nullptr, c.span()) << "attribute 'axes' must be a list of ints";
    for (int64_t v : *list) {
      TESSEL_USER_CHECK(v >= -rank && v < rank, c.span())
          << "axis " << v << " is out of range for rank " << rank;
      axes.push_back(v < 0 ? v + rank : v);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  return axes;
}

void adapt_resize(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "X");
  const graph::TensorType& t = x->type;
  TESSEL_USER_CHECK(t.rank_known && t.is_static(), c.span())
      << "Resize needs an input of static shape, got " << t.str();
  bool legacy = c.opset < 11 || c.op == "Upsample";  // scales only; asymmetric coordinates
  ResizeRules r = legacy ? ResizeRules{} : rules_of(c);
  if (legacy) {
    r.mode = c.string_attr("mode", "nearest");
    TESSEL_USER_CHECK(r.mode == "nearest" || r.mode == "linear", c.span())
        << "mode must be \"nearest\" or \"linear\", got \"" << r.mode << "\"";
    r.coordinates = "asymmetric";
    r.nearest_mode = "floor";
  }
  int64_t rank = t.rank();
  std::vector<int64_t> axes = resized_axes(c, rank);  // every axis in the legacy forms
  size_t scales_at = legacy ? 1 : 2;
  std::vector<double> scale(size_t(rank), 1.0), roi(size_t(2 * rank), 0.0);
  for (int64_t d = 0; d < rank; ++d) roi[size_t(rank + d)] = 1.0;
  Dims in = t.static_dims(), out = in;
  const Tensor* scales = nullptr;
  std::vector<double> scale_attr;
  if (const graph::AttrValue* a = c.attrs.find("scales"); a && legacy) {  // Upsample-7
    scale_attr = std::get<std::vector<double>>(*a);
  } else {
    scales = parameter(c, scales_at, "scales");
    if (scales)
      for (int64_t i = 0; i < scales->numel(); ++i) scale_attr.push_back(scales->get_f64(i));
  }
  const Tensor* sizes = legacy ? nullptr : parameter(c, 3, "sizes");
  TESSEL_USER_CHECK(scale_attr.empty() != (sizes == nullptr), c.span())
      << "exactly one of scales and sizes must be given";
  size_t n = axes.size();
  if (!scale_attr.empty()) {
    TESSEL_USER_CHECK(scale_attr.size() == n, c.span())
        << "scales has " << scale_attr.size() << " values for " << n << " axes";
    for (size_t i = 0; i < n; ++i) {
      double s = scale_attr[i];
      TESSEL_USER_CHECK(s > 0 && (!legacy || s >= 1), c.span())
          << "scale " << s << " of axis " << axes[i]
          << (legacy ? " must be at least 1" : " must be positive");
      scale[size_t(axes[i])] = s;
      out[size_t(axes[i])] = int64_t(std::floor(s * double(in[size_t(axes[i])])));
    }
  } else {
    TESSEL_USER_CHECK(sizes->numel() == int64_t(n), c.span())
        << "sizes has " << sizes->numel() << " values for " << n << " axes";
    double shared = r.aspect_policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
    for (size_t i = 0; i < n; ++i) {
      double ratio = double(sizes->get_i64(int64_t(i))) / double(in[size_t(axes[i])]);
      shared = r.aspect_policy == "not_larger" ? std::min(shared, ratio) : std::max(shared, ratio);
    }
    for (size_t i = 0; i < n; ++i) {
      size_t d = size_t(axes[i]);
      if (r.aspect_policy == "stretch") {
        out[d] = sizes->get_i64(int64_t(i));
        scale[d] = double(out[d]) / double(in[d]);
      } else {
        out[d] = int64_t(std::floor(shared * double(in[d]) + 0.5));
        scale[d] = shared;
      }
    }
  }
  if (r.coordinates == "tf_crop_and_resize") {
    const Tensor* roi_t = parameter(c, 1, "roi");
    TESSEL_USER_CHECK(roi_t && roi_t->numel() == int64_t(2 * n), c.span())
        << "tf_crop_and_resize needs a roi of " << 2 * n << " values";
    for (size_t i = 0; i < n; ++i) {
      roi[size_t(axes[i])] = roi_t->get_f64(int64_t(i));
      roi[size_t(rank + axes[i])] = roi_t->get_f64(int64_t(n + i));
    }
  }
  c.results = std::vector<graph::Value*>{resize(c, x, r, scale, out, roi)};
}

}  // namespace

void register_resize_adapters(AdapterTable& t) {
  t["Resize"] = adapt_resize;
  t["Upsample"] = adapt_resize;
}

}  // namespace tessel::onnx_frontend
