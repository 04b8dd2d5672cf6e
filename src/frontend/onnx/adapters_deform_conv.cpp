// DeformConv (2-D) as an im2col of bilinear samples and one batched MatMul.
// Kernel tap k of output position p reads X at its regular position plus the
// offset the offset input gives its offset group there; the sample is the
// bilinear mix of the four pixels around it, a pixel outside X counting as
// zero (a point at or past one pixel outside is zero), times the mask when
// given. Each corner is one GatherElements of X at clamped indices, so no
// offset reads outside X. The columns [N, C x kH x kW, positions] then meet
// the weight per group as a Conv's would.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

struct DeformShape {
  int64_t n, channels, height, width, out_channels, kh, kw, out_h, out_w, group, offset_group;
  std::vector<int64_t> strides, pads, dilations;
  int64_t taps() const { return kh * kw; }
  int64_t positions() const { return out_h * out_w; }
};

DeformShape deform_shape(const AdaptContext& c, const Value* x, const Value* w) {
  TESSEL_USER_CHECK(x->type.rank() == 4 && w->type.rank() == 4, c.span())
      << "DeformConv takes 2-D inputs: X (N, C, H, W) and W (M, C / group, kH, kW)";
  DeformShape s;
  s.n = c.static_dim(x, 0, "X"), s.channels = c.static_dim(x, 1, "X");
  s.height = c.static_dim(x, 2, "X"), s.width = c.static_dim(x, 3, "X");
  s.out_channels = c.static_dim(w, 0, "W"), s.kh = c.static_dim(w, 2, "W"), s.kw = c.static_dim(w, 3, "W");
  s.group = c.int_attr("group", 1), s.offset_group = c.int_attr("offset_group", 1);
  s.strides = c.ints_attr("strides", {1, 1}), s.pads = c.ints_attr("pads", {0, 0, 0, 0});
  s.dilations = c.ints_attr("dilations", {1, 1});
  TESSEL_USER_CHECK(s.strides.size() == 2 && s.pads.size() == 4 && s.dilations.size() == 2, c.span())
      << "strides, pads and dilations must describe 2 spatial dimensions";
  TESSEL_USER_CHECK(s.strides[0] >= 1 && s.strides[1] >= 1 && s.dilations[0] >= 1 && s.dilations[1] >= 1 &&
                        s.kh >= 1 && s.kw >= 1,
                    c.span())
      << "strides, dilations and the kernel size must be positive";
  TESSEL_USER_CHECK(s.group >= 1 && s.channels % s.group == 0 && s.out_channels % s.group == 0 &&
                        c.static_dim(w, 1, "W") == s.channels / s.group,
                    c.span())
      << "W must be (M, C / group, kH, kW) with C and M divisible by group";
  TESSEL_USER_CHECK(s.offset_group >= 1 && s.channels % s.offset_group == 0, c.span())
      << "offset_group must divide the channels";
  s.out_h = (s.height + s.pads[0] + s.pads[2] - s.dilations[0] * (s.kh - 1) - 1) / s.strides[0] + 1;
  s.out_w = (s.width + s.pads[1] + s.pads[3] - s.dilations[1] * (s.kw - 1) - 1) / s.strides[1] + 1;
  TESSEL_USER_CHECK(s.out_h >= 1 && s.out_w >= 1, c.span()) << "the kernel does not fit the padded input";
  return s;
}

// The regular position of tap k at output p along one axis: [kH x kW, 1] or [1, positions] shaped
// to broadcast against [N, G, taps, positions].
Value* regular_positions(AdaptContext& c, const DeformShape& s, bool rows) {
  Tensor t(DType::kF32, {1, 1, s.taps(), s.positions()});
  for (int64_t k = 0; k < s.taps(); ++k)
    for (int64_t p = 0; p < s.positions(); ++p) {
      int64_t tap = rows ? k / s.kw : k % s.kw, out = rows ? p / s.out_w : p % s.out_w;
      int axis = rows ? 0 : 1;
      t.set_f64(k * s.positions() + p, double(out * s.strides[size_t(axis)] - s.pads[size_t(axis)] +
                                              tap * s.dilations[size_t(axis)]));
    }
  return c.constant(std::move(t));
}

// The samples [N, C, taps, positions] of X at the offset positions.
Value* sample(AdaptContext& c, const DeformShape& s, Value* x, Value* offset) {
  auto k = [&](double v) { return c.scalar(DType::kF32, v); };
  auto op = [&](const char* name, std::vector<Value*> in) { return c.emit(name, std::move(in))[0]; };
  int64_t g = s.offset_group, per_group = s.channels / g;
  Value* off =
      c.emit("Reshape", {c.cast(offset, DType::kF32), c.i64_vector({s.n, g, s.taps(), 2, s.positions()})})[0];
  auto component = [&](int64_t i) {
    return c.emit("Squeeze", {c.emit("Gather", {off, c.i64_vector({i})}, one_attr("axis", int64_t(3)))[0],
                              c.i64_vector({3})})[0];  // [N, G, taps, positions]
  };
  Value* y = op("Add", {regular_positions(c, s, true), component(0)});
  Value* xs = op("Add", {regular_positions(c, s, false), component(1)});
  // A point at or past one pixel outside samples zero.
  Value* inside = op("And", {op("And", {op("Greater", {y, k(-1)}), op("Less", {y, k(double(s.height))})}),
                             op("And", {op("Greater", {xs, k(-1)}), op("Less", {xs, k(double(s.width))})})});
  Value* y0 = op("Floor", {y});
  Value* x0 = op("Floor", {xs});
  Value* fy = op("Sub", {y, y0});
  Value* fx = op("Sub", {xs, x0});
  Value* flat =
      c.emit("Reshape", {c.cast(x, DType::kF32), c.i64_vector({s.n, s.channels, s.height * s.width})})[0];
  Value* sum = nullptr;
  for (int dy = 0; dy < 2; ++dy) {
    for (int dx = 0; dx < 2; ++dx) {
      Value* cy = dy ? op("Add", {y0, k(1)}) : y0;
      Value* cx = dx ? op("Add", {x0, k(1)}) : x0;
      Value* weight = op("Mul", {dy ? fy : op("Sub", {k(1), fy}), dx ? fx : op("Sub", {k(1), fx})});
      Value* valid = op(
          "And",
          {op("And", {op("GreaterOrEqual", {cy, k(0)}), op("LessOrEqual", {cy, k(double(s.height - 1))})}),
           op("And", {op("GreaterOrEqual", {cx, k(0)}), op("LessOrEqual", {cx, k(double(s.width - 1))})})});
      weight = op("Mul", {weight, c.cast(op("And", {valid, inside}), DType::kF32)});
      Value* index =
          op("Add", {op("Mul", {op("Clip", {cy, k(0), k(double(s.height - 1))}), k(double(s.width))}),
                     op("Clip", {cx, k(0), k(double(s.width - 1))})});
      // [N, G, taps x positions] spread over the group's channels, then gathered.
      Value* spread =
          c.emit("Expand", {c.emit("Reshape", {c.cast(index, DType::kI64),
                                               c.i64_vector({s.n, g, 1, s.taps() * s.positions()})})[0],
                            c.i64_vector({s.n, g, per_group, s.taps() * s.positions()})})[0];
      spread = c.emit("Reshape", {spread, c.i64_vector({s.n, s.channels, s.taps() * s.positions()})})[0];
      Value* value = c.emit("GatherElements", {flat, spread}, one_attr("axis", int64_t(2)))[0];
      value = c.emit("Reshape", {value, c.i64_vector({s.n, g, per_group, s.taps(), s.positions()})})[0];
      value = op("Mul", {value, c.emit("Unsqueeze", {weight, c.i64_vector({2})})[0]});
      sum = sum ? op("Add", {sum, value}) : value;
    }
  }
  return sum;  // [N, G, C / G, taps, positions]
}

void adapt_deform_conv(AdaptContext& c) {
  Value* x = c.required_input(0, "X");
  Value* w = c.required_input(1, "W");
  Value* offset = c.required_input(2, "offset");
  Value *bias = c.input_or_null(3), *mask = c.input_or_null(4);
  DeformShape s = deform_shape(c, x, w);
  TESSEL_USER_CHECK(c.static_dim(offset, 1, "offset") == s.offset_group * 2 * s.taps(), c.span())
      << "offset must have offset_group x 2 x kH x kW = " << s.offset_group * 2 * s.taps() << " channels";
  Value* samples = sample(c, s, x, offset);
  if (mask) {
    TESSEL_USER_CHECK(c.static_dim(mask, 1, "mask") == s.offset_group * s.taps(), c.span())
        << "mask must have offset_group x kH x kW = " << s.offset_group * s.taps() << " channels";
    Value* m = c.emit("Reshape", {c.cast(mask, DType::kF32),
                                  c.i64_vector({s.n, s.offset_group, 1, s.taps(), s.positions()})})[0];
    samples = c.emit("Mul", {samples, m})[0];
  }
  int64_t depth = s.channels / s.group * s.taps();
  Value* columns = c.emit("Reshape", {samples, c.i64_vector({s.n, s.group, depth, s.positions()})})[0];
  Value* weights = c.emit(
      "Reshape", {c.cast(w, DType::kF32), c.i64_vector({1, s.group, s.out_channels / s.group, depth})})[0];
  Value* y = c.emit("MatMul", {weights, columns})[0];  // [N, group, M / group, positions]
  y = c.emit("Reshape", {y, c.i64_vector({s.n, s.out_channels, s.out_h, s.out_w})})[0];
  if (bias)
    y = c.emit("Add", {y, c.emit("Reshape", {c.cast(bias, DType::kF32), c.i64_vector({1, -1, 1, 1})})[0]})[0];
  c.results = std::vector<Value*>{c.cast(y, x->type.dtype)};
}

}  // namespace

void register_deform_conv_adapter(AdapterTable& t) {
  t["DeformConv"] = adapt_deform_conv;
}

}  // namespace tessel::onnx_frontend
