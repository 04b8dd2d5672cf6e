// Window geometry of Conv and the pooling ops (see window_geometry.h).
#include "ir/graph/ops/window_geometry.h"

#include <algorithm>
#include <string>

namespace tessel::graph::ops {

namespace {

// attr `name` as a list of `n` positive values, or all `fallback` when absent or empty.
std::vector<int64_t> per_dim_attr(const Attrs& attrs, const std::string& name, size_t n, int64_t fallback,
                                  const Span& span) {
  const AttrValue* v = attrs.find(name);
  if (v == nullptr) return std::vector<int64_t>(n, fallback);
  const auto& values = std::get<std::vector<int64_t>>(*v);
  if (values.empty()) return std::vector<int64_t>(n, fallback);
  TESSEL_USER_CHECK(values.size() == n, span) << "attribute '" << name << "' has " << values.size()
                                              << " values, expected " << n << " (one per spatial dimension)";
  for (int64_t x : values) TESSEL_USER_CHECK(x >= 1, span) << "attribute '" << name << "' must be positive";
  return values;
}

std::string auto_pad_of(const Attrs& attrs, const Span& span) {
  const AttrValue* v = attrs.find("auto_pad");
  std::string mode = v ? std::get<std::string>(*v) : "NOTSET";
  TESSEL_USER_CHECK(mode == "NOTSET" || mode == "SAME_UPPER" || mode == "SAME_LOWER" || mode == "VALID", span)
      << "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '" << mode << "'";
  return mode;
}

void explicit_pads(const Attrs& attrs, WindowGeometry& g, const Span& span) {
  size_t n = size_t(g.spatial());
  g.pad_begin.assign(n, 0);
  g.pad_end.assign(n, 0);
  const AttrValue* v = attrs.find("pads");
  if (v == nullptr || std::get<std::vector<int64_t>>(*v).empty()) return;
  const auto& pads = std::get<std::vector<int64_t>>(*v);
  TESSEL_USER_CHECK(pads.size() == 2 * n, span)
      << "attribute 'pads' has " << pads.size() << " values, expected " << 2 * n;
  for (size_t i = 0; i < n; ++i) {
    TESSEL_USER_CHECK(pads[i] >= 0 && pads[n + i] >= 0, span) << "attribute 'pads' must not be negative";
    g.pad_begin[i] = pads[i];
    g.pad_end[i] = pads[n + i];
  }
}

// Sizes, kernels, strides, dilations and pads below 2^30 keep every product
// and sum of the geometry (at most two factors, a few terms) inside int64.
constexpr int64_t kMaxWindowValue = int64_t{1} << 30;

void check_window_limits(const WindowGeometry& g, const Span& span) {
  auto check = [&](const std::vector<int64_t>& values, const char* what) {
    for (int64_t v : values)
      TESSEL_USER_CHECK(v < kMaxWindowValue, span)
          << what << " " << v << " is too large for a window (the limit is 2^30)";
  };
  check(g.in, "input size");
  check(g.kernel, "kernel size");
  check(g.strides, "stride");
  check(g.dilations, "dilation");
  check(g.pad_begin, "pad");
  check(g.pad_end, "pad");
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Output size along dimension i from explicit pads (NOTSET, or VALID with zero pads).
int64_t explicit_out(const WindowGeometry& g, int i, bool ceil_mode, const Span& span) {
  size_t d = size_t(i);
  int64_t span_in = g.in[d] + g.pad_begin[d] + g.pad_end[d] - g.extent(i);
  TESSEL_USER_CHECK(span_in >= 0, span)
      << "the window (extent " << g.extent(i) << ") is larger than the padded input (size "
      << g.in[d] + g.pad_begin[d] + g.pad_end[d] << ") in spatial dimension " << i;
  if (!ceil_mode) return span_in / g.strides[d] + 1;
  int64_t out = ceil_div(span_in, g.strides[d]) + 1;
  // The last window must start inside the input or its begin padding.
  if ((out - 1) * g.strides[d] >= g.in[d] + g.pad_begin[d]) --out;
  return out;
}

}  // namespace

WindowGeometry window_geometry(const Attrs& attrs, const std::vector<int64_t>& in_spatial,
                               const std::vector<int64_t>& kernel, bool ceil_mode, const Span& span) {
  WindowGeometry g;
  size_t n = in_spatial.size();
  TESSEL_USER_CHECK(kernel.size() == n, span)
      << "kernel has " << kernel.size() << " dimensions, but the input has " << n << " spatial dimensions";
  for (int64_t k : kernel) TESSEL_USER_CHECK(k >= 1, span) << "kernel sizes must be positive";
  g.in = in_spatial;
  g.kernel = kernel;
  g.strides = per_dim_attr(attrs, "strides", n, 1, span);
  g.dilations = per_dim_attr(attrs, "dilations", n, 1, span);
  std::string mode = auto_pad_of(attrs, span);
  explicit_pads(attrs, g, span);
  check_window_limits(g, span);
  g.out.assign(n, -1);
  for (int i = 0; i < int(n); ++i) {
    size_t d = size_t(i);
    if (mode == "VALID") g.pad_begin[d] = g.pad_end[d] = 0;
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      g.pad_begin[d] = g.pad_end[d] = -1;
      if (g.in[d] < 0) continue;
      g.out[d] = ceil_div(g.in[d], g.strides[d]);
      int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * g.strides[d] + g.extent(i) - g.in[d]);
      g.pad_begin[d] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[d] = total - g.pad_begin[d];
      continue;
    }
    if (g.in[d] >= 0) g.out[d] = explicit_out(g, i, ceil_mode, span);
  }
  return g;
}

namespace {

int64_t floor_div2(int64_t a) {
  return a >= 0 ? a / 2 : -((-a + 1) / 2);
}

// Splits a total padding between begin and end the way ONNX's ConvTranspose
// does: SAME_UPPER puts the smaller half first, otherwise the larger.
void split_transpose_pad(int64_t total, bool same_upper, int64_t& begin, int64_t& end) {
  begin = same_upper ? floor_div2(total) : total - floor_div2(total);
  end = total - begin;
}

// The ints attribute `name` with n entries (absent or empty: zeros), optionally
// also accepting n + 2 entries (then only the last n count).
std::vector<int64_t> optional_ints(const Attrs& attrs, const std::string& name, size_t n, const Span& span) {
  const AttrValue* v = attrs.find(name);
  if (v == nullptr || std::get<std::vector<int64_t>>(*v).empty()) return {};
  auto values = std::get<std::vector<int64_t>>(*v);
  if (name == "output_shape" && values.size() == n + 2) values.erase(values.begin(), values.begin() + 2);
  TESSEL_USER_CHECK(values.size() == n, span)
      << "attribute '" << name << "' has " << values.size() << " values, expected " << n;
  for (int64_t x : values)
    TESSEL_USER_CHECK(x >= 0, span) << "attribute '" << name << "' must not be negative";
  return values;
}

}  // namespace

WindowGeometry conv_transpose_geometry(const Attrs& attrs, const std::vector<int64_t>& in_spatial,
                                       const std::vector<int64_t>& kernel, const Span& span) {
  size_t n = in_spatial.size();
  WindowGeometry g = window_geometry(attrs, std::vector<int64_t>(n, -1), kernel, false, span);
  g.in = in_spatial;
  std::string mode = auto_pad_of(attrs, span);
  std::vector<int64_t> out_pad = optional_ints(attrs, "output_padding", n, span);
  std::vector<int64_t> out_shape = optional_ints(attrs, "output_shape", n, span);
  check_window_limits(g, span);
  for (int64_t v : out_shape)
    TESSEL_USER_CHECK(v < kMaxWindowValue, span)
        << "output_shape " << v << " is too large (the limit is 2^30)";
  if (mode != "NOTSET") explicit_pads(Attrs{}, g, span);  // VALID: zero; SAME: computed below
  for (int i = 0; i < int(n); ++i) {
    size_t d = size_t(i);
    int64_t op = out_pad.empty() ? 0 : out_pad[d];
    TESSEL_USER_CHECK(op < std::max(g.strides[d], g.dilations[d]), span)
        << "output_padding " << op << " must be smaller than the stride or the dilation";
    if (g.in[d] < 0) {
      g.out[d] = out_shape.empty() ? -1 : out_shape[d];
      if (!out_shape.empty() || mode == "SAME_UPPER" || mode == "SAME_LOWER")
        g.pad_begin[d] = g.pad_end[d] = -1;
      continue;
    }
    int64_t full = g.strides[d] * (g.in[d] - 1) + op + g.extent(i);
    if (!out_shape.empty() || mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      g.out[d] = !out_shape.empty() ? out_shape[d] : g.in[d] * g.strides[d];
      split_transpose_pad(full - g.out[d], mode == "SAME_UPPER", g.pad_begin[d], g.pad_end[d]);
      continue;
    }
    g.out[d] = full - g.pad_begin[d] - g.pad_end[d];
    TESSEL_USER_CHECK(g.out[d] >= 1, span) << "the pads leave no output in spatial dimension " << i;
  }
  return g;
}

std::vector<int64_t> conv_kernel_shape(const Attrs& attrs, const std::vector<int64_t>& weight_kernel,
                                       const Span& span) {
  const AttrValue* v = attrs.find("kernel_shape");
  if (v == nullptr || std::get<std::vector<int64_t>>(*v).empty()) return weight_kernel;
  const auto& given = std::get<std::vector<int64_t>>(*v);
  TESSEL_USER_CHECK(given.size() == weight_kernel.size(), span)
      << "attribute 'kernel_shape' has " << given.size() << " values, but the weight has "
      << weight_kernel.size() << " spatial dimensions";
  for (size_t i = 0; i < given.size(); ++i)
    TESSEL_USER_CHECK(weight_kernel[i] < 0 || given[i] == weight_kernel[i], span)
        << "attribute 'kernel_shape' " << given[i] << " does not match the weight's kernel size "
        << weight_kernel[i] << " in spatial dimension " << i;
  return given;
}

}  // namespace tessel::graph::ops
