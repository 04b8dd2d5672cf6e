// Compute definitions of the pooling ops: MaxPool (and its Indices output)
// and AveragePool as one reduction block over the kernel taps; MaxPool
// without Indices reads its input re-laid out like a conv (-inf padding,
// stride phases), the others with padding as an in-bounds Select; the global
// pools as reductions over the spatial axes.
#include <algorithm>
#include <limits>

#include "ir/graph/ops/window_geometry.h"
#include "src/lower/ops/nn_lowerings.h"

namespace tessel::lower::nn {

using namespace tir;

namespace {

using graph::ops::WindowGeometry;

WindowGeometry pool_geometry(const graph::Node& node, const TensorExpr& x) {
  bool ceil_mode = node.attrs.get_int("ceil_mode") != 0;
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  return graph::ops::window_geometry(node.attrs, in, node.attrs.get_ints("kernel_shape"), ceil_mode,
                                     node.span());
}

// The guarded input read of window tap r of output s, `otherwise` outside the input.
struct WindowRead {
  std::vector<Expr> indices;  // into x
  GuardedRead guard;
};

WindowRead window_read(const WindowGeometry& g, const std::vector<int64_t>& out, const std::vector<Expr>& s,
                       const std::vector<Expr>& r) {
  WindowRead w;
  w.indices = {s[0], s[1]};
  for (int d = 0; d < g.spatial(); ++d) {
    size_t u = size_t(d);
    Expr i = window_index(s[2 + u], g.strides[u], g.pad_begin[u], r[u], g.dilations[u]);
    w.guard.check(i, -g.pad_begin[u], (out[2 + u] - 1) * g.strides[u] - g.pad_begin[u] + g.extent(d) - 1,
                  g.in[u]);
    w.indices.push_back(i);
  }
  return w;
}

// The flat position of input element `indices` in the whole input, as MaxPool's
// Indices count it: row-major, or with storage_order 1 the spatial axes column-major.
Expr flat_position(const std::vector<int64_t>& shape, const std::vector<Expr>& indices, bool column_major) {
  int64_t plane = 1;
  Expr spatial;
  for (size_t k = 2; k < shape.size(); ++k) {  // fastest-varying spatial axis first
    size_t d = column_major ? k : shape.size() + 1 - k;
    Expr term = plane == 1 ? indices[d] : indices[d] * plane;
    spatial = spatial.defined() ? spatial + term : term;
    plane *= shape[d];
  }
  Expr channel_plane = indices[0] * shape[1] + indices[1];
  return spatial.defined() ? channel_plane * plane + spatial : channel_plane;
}

// A window's maximum is the maximum along its last axis of the maxima along
// the others, so the pool is two stages: `rows` takes the maximum over the
// leading axes' taps for every position of the padded last axis (unit-stride
// reads of x, -inf outside it), then the pool folds the last axis' taps from
// those rows. Each input element is read once per output row instead of once
// per tap, and no padded or phase-split copy of the input is made. `rows` is
// elementwise, its taps written out, so that it is computed per channel
// beside the pool like a conv's re-layout stages.
constexpr int64_t kMostRowTaps = 16;

int64_t leading_taps(const WindowGeometry& g) {
  int64_t taps = 1;
  for (size_t u = 0; u + 1 < size_t(g.spatial()); ++u) taps *= g.kernel[u];
  return taps;
}

TensorExpr separable_max_pool(LowerContext& ctx, const graph::Node& node, const TensorExpr& x,
                              const WindowGeometry& g, const std::vector<int64_t>& out, const Expr& lowest) {
  size_t last = size_t(g.spatial()) - 1;
  std::vector<int64_t> rows_shape(out.begin(), out.end() - 1);
  rows_shape.push_back((out.back() - 1) * g.strides[last] + g.extent(int(last)));
  int64_t taps = leading_taps(g);
  TensorExpr rows =
      ctx.compute(stage_name(node, "rows"), rows_shape, x.dtype, [=](const std::vector<Expr>& s) {
        Expr column = g.pad_begin[last] != 0 ? s[2 + last] - g.pad_begin[last] : s[2 + last];
        Expr folded;
        for (int64_t tap = 0; tap < taps; ++tap) {
          std::vector<Expr> xi = {s[0], s[1]};
          GuardedRead guard;
          for (size_t u = 0, rest = size_t(tap); u < last; ++u) {
            int64_t k = int64_t(rest) % g.kernel[u];  // the last leading axis varies fastest
            rest /= size_t(g.kernel[u]);
            int64_t lo = k * g.dilations[u] - g.pad_begin[u];
            Expr i = g.strides[u] == 1 ? s[2 + u] : s[2 + u] * g.strides[u];
            if (lo != 0) i = lo > 0 ? i + lo : i - (-lo);
            guard.check(i, lo, (out[2 + u] - 1) * g.strides[u] + lo, g.in[u]);
            xi.push_back(i);
          }
          guard.check(column, -g.pad_begin[last], rows_shape.back() - 1 - g.pad_begin[last], g.in[last]);
          xi.push_back(column);
          Expr v = guard.read(x, xi, lowest);
          folded = folded.defined() ? max(folded, v) : v;
        }
        return folded;
      });
  return ctx.reduce(stage_name(node), out, x.dtype, {g.kernel[last]}, Combiner::kMax,
                    [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                      std::vector<Expr> ri(s.begin(), s.end() - 1);
                      ri.push_back(window_index(s.back(), g.strides[last], 0, r[0], g.dilations[last]));
                      return rows.at(ri);
                    });
}

std::vector<TensorExpr> lower_max_pool(LowerContext& ctx, const graph::Node& node,
                                       const std::vector<TensorExpr>& in) {
  const TensorExpr& x = in[0];
  WindowGeometry g = pool_geometry(node, x);
  std::vector<int64_t> out = output_shape(node);
  Expr lowest = combiner_identity(Combiner::kMax, x.dtype);
  if (node.outputs.size() < 2) {
    if (g.spatial() >= 2 && leading_taps(g) <= kMostRowTaps)
      return {separable_max_pool(ctx, node, x, g, out, lowest)};
    // As a convolution reads its input: padded with -inf and split into
    // stride phases by re-layout stages, the window read unguarded and with
    // unit stride (guarded strided reads were gathers).
    WindowInput xin = window_input(ctx, stage_name(node), x, g, out, 0, lowest);
    return {ctx.reduce(stage_name(node), out, x.dtype, g.kernel, Combiner::kMax,
                       [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                         std::vector<Expr> taps = {int_imm(0)};  // WindowInput's r[0] is a channel
                         taps.insert(taps.end(), r.begin(), r.end());
                         return xin.at(s, s[1], taps, g);
                       })};
  }
  TensorExpr y = ctx.reduce(stage_name(node), out, x.dtype, g.kernel, Combiner::kMax,
                            [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                              WindowRead w = window_read(g, out, s, r);
                              return w.guard.read(x, w.indices, lowest);
                            });
  // Indices: the first tap (in window order, which is input order) holding the maximum.
  bool column_major = node.attrs.get_int("storage_order") == 1;
  Expr none = int_imm(std::numeric_limits<int64_t>::max());
  auto first_max = [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
    WindowRead w = window_read(g, out, s, r);
    // A NaN is the maximum (max propagates it), though it equals nothing.
    Expr v = x.at(w.indices), hit = eq(v, y.at(s));
    if (is_float(x.dtype)) hit = logical_or(hit, call(Intrinsic::k_isnan, {v}));
    Expr at = select(hit, flat_position(x.shape, w.indices, column_major), none);
    return w.guard.guard(at, none);
  };
  TensorExpr indices =
      ctx.reduce(stage_name(node, "indices"), out, DType::kI64, g.kernel, Combiner::kMin, first_max);
  return {y, indices};
}

// Taps of the window of output o inside [lo, hi) along one dimension: the k in
// [0, K) with lo <= o * s - pad + k * d < hi.
int64_t taps_inside(const WindowGeometry& g, size_t u, int64_t o, int64_t lo, int64_t hi) {
  int64_t n = 0;
  for (int64_t k = 0; k < g.kernel[u]; ++k) {
    int64_t i = o * g.strides[u] - g.pad_begin[u] + k * g.dilations[u];
    n += i >= lo && i < hi;
  }
  return n;
}

// The same count as an index expression of o (closed form: the k range
// [max(0, ceil((lo - base) / d)), min(K, floor((hi - 1 - base) / d) + 1)), base = o * s - pad).
Expr taps_inside_expr(const WindowGeometry& g, size_t u, const Expr& o, int64_t lo, int64_t hi) {
  int64_t d = g.dilations[u];
  Expr base = g.strides[u] == 1 ? o : o * g.strides[u];
  if (g.pad_begin[u] != 0) base = base - g.pad_begin[u];
  Expr k_lo = d == 1 ? int_imm(lo) - base : floordiv(int_imm(lo + d - 1) - base, d);
  Expr k_hi = d == 1 ? int_imm(hi) - base : floordiv(int_imm(hi - 1) - base, d) + 1;
  k_lo = max(int_imm(0), k_lo);
  k_hi = min(int_imm(g.kernel[u]), k_hi);
  return max(int_imm(0), k_hi - k_lo);
}

// The divisor of output s: the taps inside the input (or inside the padded
// input with count_include_pad); a constant where it is one for every output.
Expr average_divisor(const WindowGeometry& g, const std::vector<int64_t>& out, const std::vector<Expr>& s,
                     bool count_pad) {
  Expr divisor;
  for (size_t u = 0; u < size_t(g.spatial()); ++u) {
    int64_t lo = count_pad ? -g.pad_begin[u] : 0, hi = g.in[u] + (count_pad ? g.pad_end[u] : 0);
    int64_t first = taps_inside(g, u, 0, lo, hi);
    bool constant = true;
    for (int64_t o = 1; o < out[2 + u]; ++o) constant = constant && taps_inside(g, u, o, lo, hi) == first;
    Expr count = constant ? int_imm(first) : taps_inside_expr(g, u, s[2 + u], lo, hi);
    divisor = divisor.defined() ? divisor * count : count;
  }
  return divisor;
}

std::vector<TensorExpr> lower_average_pool(LowerContext& ctx, const graph::Node& node,
                                           const std::vector<TensorExpr>& in) {
  const TensorExpr& x = in[0];
  WindowGeometry g = pool_geometry(node, x);
  std::vector<int64_t> out = output_shape(node);
  DType t = accum_dtype(x.dtype);
  Expr zero = const_of(t, 0);
  TensorExpr sum = ctx.reduce(stage_name(node), out, t, g.kernel, Combiner::kSum,
                              [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                                WindowRead w = window_read(g, out, s, r);
                                return w.guard.guard(cast(t, x.at(w.indices)), zero);
                              });
  bool count_pad = node.attrs.get_int("count_include_pad") != 0;
  TensorExpr y = sum;
  y.buffer = {};
  y.dtype = x.dtype;
  y.at = [=](const std::vector<Expr>& idx) {
    Expr divisor = average_divisor(g, out, idx, count_pad);
    const int64_t* c = as_const_int(divisor);
    return cast(x.dtype, div(sum.at(idx), c ? const_of(t, double(*c)) : cast(t, divisor)));
  };
  return {y};
}

// Y[n, c, 0...] = fold over the spatial axes of X[n, c, ...]; the average divides after.
std::vector<TensorExpr> lower_global_pool(LowerContext& ctx, const graph::Node& node,
                                          const std::vector<TensorExpr>& in) {
  const TensorExpr& x = in[0];
  bool is_max = node.op == "GlobalMaxPool";
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  int64_t size = 1;
  for (int64_t e : spatial) size *= e;
  DType t = is_max ? x.dtype : accum_dtype(x.dtype);
  TensorExpr y =
      ctx.reduce(stage_name(node), output_shape(node), t, spatial, is_max ? Combiner::kMax : Combiner::kSum,
                 [=](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                   std::vector<Expr> xi = {s[0], s[1]};
                   xi.insert(xi.end(), r.begin(), r.end());
                   return cast(t, x.at(xi));
                 });
  if (is_max) return {y};
  TensorExpr mean = y;
  mean.buffer = {};
  mean.dtype = x.dtype;
  mean.at = [y, size, dtype = x.dtype](const std::vector<Expr>& idx) {
    return cast(dtype, div(y.at(idx), const_of(y.dtype, double(size))));
  };
  return {mean};
}

}  // namespace

void register_pool_lowerings(LoweringRegistry& r) {
  r.add("MaxPool", lower_max_pool);
  r.add("AveragePool", lower_average_pool);
  r.add("GlobalAveragePool", lower_global_pool);
  r.add("GlobalMaxPool", lower_global_pool);
}

}  // namespace tessel::lower::nn
