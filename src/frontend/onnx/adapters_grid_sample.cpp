// GridSample (2-D and 3-D; nearest, linear, cubic; zeros, border and
// reflection padding; align_corners) as elementwise arithmetic on the grid
// and one GatherElements per tap. Per spatial dimension the grid's
// coordinate is unnormalized, moved inside the borders as the padding mode
// says, and split into taps (an index and a weight: one for nearest, two for
// linear, four for cubic, Keys' kernel with a = -0.75); every combination of
// the dimensions' taps gathers X at its flat spatial index, zero where the
// zeros mode finds it outside, times the product of the weights. Indices are
// clamped before gathering, so no grid value reads outside X. The rules
// follow ONNX's cases: nearest rounds half to even (in 3-D too); a point
// outside is clamped (border) or reflected (reflection) before its taps,
// except a cubic one with border padding, as in ONNX Runtime.
#include <cmath>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct Tap {
  Value* index;   // int64, [N, outputs...]
  Value* weight;  // null: 1
  Value* valid;   // bool, null: always
};

struct Sampler {
  AdaptContext& c;
  DType t;  // the grid's float type
  Padding padding;
  bool align;

  Value* k(double v) { return c.scalar(t, v); }
  Value* op(const char* name, std::vector<Value*> in) { return c.emit(name, std::move(in))[0]; }
  Value* add(Value* a, Value* b) { return op("Add", {a, b}); }
  Value* sub(Value* a, Value* b) { return op("Sub", {a, b}); }
  Value* mul(Value* a, Value* b) { return op("Mul", {a, b}); }
  Value* clamp(Value* x, double lo, double hi) { return op("Clip", {x, k(lo), k(hi)}); }

  // Reflected into [lo, hi] (a triangle wave of period 2 (hi - lo)); the
  // identity inside.
  Value* reflect(Value* x, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0) return add(mul(x, k(0)), k(lo));  // a dimension of one position
    Value* shifted = sub(x, k(lo));
    Value* periods = op("Floor", {op("Div", {shifted, k(2 * range)})});
    Value* phase = sub(shifted, mul(periods, k(2 * range)));  // in [0, 2 range)
    Value* folded = op("Where", {op("LessOrEqual", {phase, k(range)}), phase, sub(k(2 * range), phase)});
    return add(folded, k(lo));
  }

  double border_min() const { return align ? 0.0 : -0.5; }
  double border_max(int64_t d) const { return align ? double(d - 1) : double(d) - 0.5; }

  // The grid value in [-1, 1] as a position along a dimension of d pixels.
  Value* coordinate(Value* g, int64_t d) {
    return align ? mul(mul(add(g, k(1)), k(0.5)), k(double(d - 1)))
                 : mul(sub(mul(add(g, k(1)), k(double(d))), k(1)), k(0.5));
  }
  // The position moved inside the borders as the padding mode says.
  Value* inside_borders(Value* x, int64_t d) {
    double lo = border_min(), hi = border_max(d);
    if (padding == Padding::kReflection) return reflect(x, lo, hi);
    if (padding == Padding::kBorder) {
      Value* outside = op("Or", {op("Less", {x, k(lo)}), op("Greater", {x, k(hi)})});
      return op("Where", {outside, clamp(x, 0, double(d - 1)), x});
    }
    return x;
  }

  // A tap at integer position i (float, integral) of a dimension of size d.
  Tap tap(Value* i, Value* weight, int64_t d) {
    Value* valid = nullptr;
    if (padding == Padding::kZeros)
      valid = op("And", {op("GreaterOrEqual", {i, k(0)}), op("LessOrEqual", {i, k(double(d - 1))})});
    if (padding == Padding::kReflection) i = reflect(i, border_min(), border_max(d));
    Value* index =
        c.cast(clamp(i, 0, double(d - 1)), DType::kI64);  // truncates the reflected -0.5 .. d - 0.5
    return {index, weight, valid};
  }
};

// Keys' cubic convolution weights of the four taps at floor(x) - 1 .. + 2, f = x - floor(x).
std::vector<Value*> cubic_weights(Sampler& s, Value* f) {
  const double a = -0.75;
  auto far = [&](Value* u) {  // 1 < u < 2
    return s.sub(s.mul(s.add(s.mul(s.sub(s.mul(s.k(a), u), s.k(5 * a)), u), s.k(8 * a)), u), s.k(4 * a));
  };
  auto near = [&](Value* u) {  // 0 <= u <= 1
    return s.add(s.mul(s.mul(s.sub(s.mul(s.k(a + 2), u), s.k(a + 3)), u), u), s.k(1));
  };
  Value* one_minus = s.sub(s.k(1), f);
  return {far(s.add(f, s.k(1))), near(f), near(one_minus), far(s.add(one_minus, s.k(1)))};
}

std::vector<Tap> taps_of(Sampler& s, Mode mode, Value* x, int64_t d) {
  if (mode == Mode::kNearest) return {s.tap(x, nullptr, d)};
  Value* x0 = s.op("Floor", {x});
  Value* f = s.sub(x, x0);
  if (mode == Mode::kLinear) return {s.tap(x0, s.sub(s.k(1), f), d), s.tap(s.add(x0, s.k(1)), f, d)};
  std::vector<Value*> w = cubic_weights(s, f);
  std::vector<Tap> taps;
  for (int j = 0; j < 4; ++j) taps.push_back(s.tap(s.add(x0, s.k(double(j - 1))), w[size_t(j)], d));
  return taps;
}

Mode mode_of(const AdaptContext& c) {
  std::string m = c.string_attr("mode", c.opset >= 20 ? "linear" : "bilinear");
  if (m == "nearest") return Mode::kNearest;
  if (m == "linear" || m == "bilinear") return Mode::kLinear;
  TESSEL_USER_CHECK(m == "cubic" || m == "bicubic", c.span())
      << "mode must be nearest, linear or cubic (bilinear, bicubic before opset 20), got '" << m << "'";
  return Mode::kCubic;
}

Padding padding_of(const AdaptContext& c) {
  std::string p = c.string_attr("padding_mode", "zeros");
  if (p == "zeros") return Padding::kZeros;
  if (p == "border") return Padding::kBorder;
  TESSEL_USER_CHECK(p == "reflection", c.span())
      << "padding_mode must be zeros, border or reflection, got '" << p << "'";
  return Padding::kReflection;
}

void adapt_grid_sample(AdaptContext& c) {
  Value* x = c.required_input(0, "X");
  Value* grid = c.required_input(1, "grid");
  int rank = x->type.rank(), spatial = rank - 2;
  TESSEL_USER_CHECK(spatial == 2 || spatial == 3, c.span()) << "X must be (N, C, H, W) or (N, C, D, H, W)";
  TESSEL_USER_CHECK(grid->type.rank() == rank && c.static_dim(grid, -1, "grid") == spatial, c.span())
      << "grid must be (N, outputs..., " << spatial << ") for a " << spatial << "-D X";
  TESSEL_USER_CHECK(is_float(grid->type.dtype), c.span()) << "grid must be a float tensor";
  Mode mode = mode_of(c);
  TESSEL_USER_CHECK(!(mode == Mode::kCubic && spatial == 3), c.span()) << "cubic mode samples 2-D X only";
  Sampler s{c, grid->type.dtype, padding_of(c), c.int_attr("align_corners", 0) != 0};

  int64_t n = c.static_dim(x, 0, "X"), channels = c.static_dim(x, 1, "X"), points = 1, pixels = 1;
  std::vector<int64_t> sizes, out_shape{n, channels};
  for (int a = 2; a < rank; ++a) sizes.push_back(c.static_dim(x, a, "X"));
  for (int a = 1; a < rank - 1; ++a) {
    out_shape.push_back(c.static_dim(grid, a, "grid"));
    points *= out_shape.back();
  }
  for (int64_t d : sizes) pixels *= d;
  // Per dimension (outermost first) its taps; grid[..., 0] is the innermost (x).
  std::vector<std::vector<Tap>> per_dim;
  for (int a = 0; a < spatial; ++a) {
    int64_t component = spatial - 1 - a;
    Value* g = c.emit("Gather", {grid, c.i64_vector({component})}, one_attr("axis", int64_t(rank - 1)))[0];
    g = c.emit("Reshape", {g, c.i64_vector({n, points})})[0];
    Value* coord = s.coordinate(g, sizes[size_t(a)]);
    if (mode == Mode::kNearest) coord = s.op("Round", {coord});  // before the borders apply
    // Cubic taps are clamped one by one: ONNX Runtime and PyTorch do not
    // clamp the point first, which ONNX's reference does and its cases leave
    // untested.
    if (!(mode == Mode::kCubic && s.padding == Padding::kBorder))
      coord = s.inside_borders(coord, sizes[size_t(a)]);
    per_dim.push_back(taps_of(s, mode, coord, sizes[size_t(a)]));
  }
  Value* flat = c.emit("Reshape", {x, c.i64_vector({n, channels, pixels})})[0];
  Value* sum = nullptr;
  std::vector<size_t> pick(size_t(spatial), 0);
  for (bool more = true; more;) {
    Value *index = nullptr, *weight = nullptr, *valid = nullptr;
    int64_t stride = pixels;
    for (int a = 0; a < spatial; ++a) {
      const Tap& t = per_dim[size_t(a)][pick[size_t(a)]];
      stride /= sizes[size_t(a)];
      Value* part =
          stride == 1 ? t.index : c.emit("Mul", {t.index, c.scalar(DType::kI64, double(stride))})[0];
      index = index ? c.emit("Add", {index, part})[0] : part;
      if (t.weight) weight = weight ? s.mul(weight, t.weight) : t.weight;
      if (t.valid) valid = valid ? s.op("And", {valid, t.valid}) : t.valid;
    }
    Value* spread = c.emit("Expand", {c.emit("Unsqueeze", {index, c.i64_vector({1})})[0],
                                      c.i64_vector({n, channels, points})})[0];
    Value* value = c.emit("GatherElements", {flat, spread}, one_attr("axis", int64_t(2)))[0];
    if (valid) weight = weight ? s.mul(weight, c.cast(valid, s.t)) : c.cast(valid, s.t);
    if (weight)
      value = c.emit("Mul",
                     {value, c.emit("Unsqueeze", {c.cast(weight, x->type.dtype), c.i64_vector({1})})[0]})[0];
    sum = sum ? c.emit("Add", {sum, value})[0] : value;
    more = false;
    for (int a = spatial - 1; a >= 0; --a) {  // the next combination of taps
      if (++pick[size_t(a)] < per_dim[size_t(a)].size()) {
        more = true;
        break;
      }
      pick[size_t(a)] = 0;
    }
  }
  c.results = c.emit("Reshape", {sum, c.i64_vector(out_shape)});
}

}  // namespace

void register_grid_sample_adapter(AdapterTable& t) {
  t["GridSample"] = adapt_grid_sample;
}

}  // namespace tessel::onnx_frontend
