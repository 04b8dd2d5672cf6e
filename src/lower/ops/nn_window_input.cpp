// The re-laid-out input of a windowed op (Conv, MaxPool): zero (or -inf)
// padding materialised and strided dimensions split into phases, so that the
// window's reduction reads without a guard and with unit stride.
#include <algorithm>

#include "ir/graph/ops/window_geometry.h"
#include "src/lower/ops/nn_lowerings.h"

namespace tessel::lower::nn {

using namespace tir;
using graph::ops::WindowGeometry;

namespace {

// One re-layout stage over x (spatial extents `extents`): position q of
// spatial dim u, in phase ph when phased, reads x at q * s + ph - pad[u],
// pad_value outside x.
TensorExpr relayout_stage(LowerContext& ctx, const std::string& name, const TensorExpr& x,
                          const WindowGeometry& g, const std::vector<int64_t>& positions,
                          const std::vector<bool>& phased, const std::vector<int64_t>& pad,
                          const std::vector<int64_t>& extents, const Expr& pad_value,
                          const std::vector<int64_t>& storage = {}) {
  size_t dims = positions.size();
  std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
  for (size_t u = 0; u < dims; ++u)
    if (phased[u]) shape.push_back(g.strides[u]);
  shape.insert(shape.end(), positions.begin(), positions.end());
  bool stored = !storage.empty() && shape.size() == storage.size();
  return ctx.compute_stored(
      ctx.unique_block_name(name), shape, x.dtype,
      [=](const std::vector<Expr>& p) {
        std::vector<Expr> xi = {p[0], p[1]};
        GuardedRead guard;
        size_t phase = 2, position = shape.size() - dims;
        for (size_t u = 0; u < dims; ++u) {
          Expr i = p[position + u];
          int64_t highest = positions[u] - 1;
          if (phased[u]) {
            i = i * g.strides[u] + p[phase++];
            highest = highest * g.strides[u] + g.strides[u] - 1;
          }
          if (pad[u] != 0) i = i - pad[u];
          guard.check(i, -pad[u], highest - pad[u], extents[u]);
          xi.push_back(i);
        }
        return guard.read(x, xi, pad_value);
      },
      stored ? storage : std::vector<int64_t>{});
}

}  // namespace

Expr WindowInput::at_flat(const Expr& n, const Expr& channel, const Expr& f, const std::vector<Expr>& r,
                          int64_t width, const WindowGeometry& g) const {
  std::vector<Expr> idx = {n, channel};
  for (size_t u = 0; u < 2; ++u)
    if (phased[u]) idx.push_back(tap_phase(r, u, g));
  Expr p = f + tap_position(r, 0, g) * width + tap_position(r, 1, g);
  idx.push_back(floordiv(p, width));
  idx.push_back(floormod(p, width));
  return tensor.at(idx);
}

Expr WindowInput::at(const std::vector<Expr>& s, const Expr& channel, const std::vector<Expr>& r,
                     const WindowGeometry& g) const {
  std::vector<Expr> idx = {s[0], channel}, positions;
  for (size_t u = 0; u < size_t(g.spatial()); ++u) {
    if (!phased[u]) {
      positions.push_back(window_index(s[2 + u], g.strides[u], pad[u], r[1 + u], g.dilations[u]));
      continue;
    }
    idx.push_back(tap_phase(r, u, g));
    positions.push_back(s[2 + u] + tap_position(r, u, g));
  }
  idx.insert(idx.end(), positions.begin(), positions.end());
  return tensor.at(idx);
}

std::vector<int64_t> relaid_positions(const WindowGeometry& g, const std::vector<int64_t>& out, bool phases) {
  std::vector<int64_t> positions;
  for (size_t u = 0; u < size_t(g.spatial()); ++u) {
    int64_t highest = (out[2 + u] - 1) * g.strides[u] - g.pad_begin[u] + g.extent(int(u)) - 1;
    int64_t padded = std::max(highest + 1, g.in[u]) + g.pad_begin[u];
    int64_t s = phases ? std::max<int64_t>(g.strides[u], 1) : 1;
    positions.push_back((padded + s - 1) / s);
  }
  return positions;
}

bool window_reads_in_place(const WindowGeometry& g, const std::vector<int64_t>& out, bool phases) {
  for (size_t u = 0; u < size_t(g.spatial()); ++u) {
    int64_t highest = (out[2 + u] - 1) * g.strides[u] - g.pad_begin[u] + g.extent(int(u)) - 1;
    if (g.pad_begin[u] > 0 || highest >= g.in[u] || (phases && g.strides[u] > 1)) return false;
  }
  return true;
}

// extra_rows: zero rows appended to the first spatial dim's positions (for
// the reads of a flat convolution past its last output row); forces the stage.
// With a storage order (and no phases), the re-laid-out input is stored in
// it, its block iterating in that order: a channels-last input copied in order.
// Without `phases`, a strided dim stays one dim of the padded input (for a
// reader that loads one element at a time, where a stride costs nothing).
// A strided input that also needs zeros is re-laid out in one stage where
// its output rows are longer than a vector (LayoutChoices::vector_lanes):
// partition_vector_loops splits each phase row's guarded edges off, and its
// middle reads every other element unguarded. Where a row's middle is
// shorter than a vector, it would run scalar: there the zeros come first, in
// a stage of their own, and the phases are read from it without a guard.
WindowInput window_input(LowerContext& ctx, const std::string& name, const TensorExpr& x,
                         const WindowGeometry& g, const std::vector<int64_t>& out, int64_t extra_rows,
                         const Expr& pad_value, bool phases, const std::vector<int64_t>& storage) {
  size_t dims = size_t(g.spatial());
  WindowInput in{x, std::vector<int64_t>(g.pad_begin.begin(), g.pad_begin.end()), std::vector<bool>(dims, false)};
  for (size_t u = 0; u < dims; ++u) in.phased[u] = phases && g.strides[u] > 1;
  if (window_reads_in_place(g, out, phases) && extra_rows == 0) return in;
  std::vector<int64_t> positions = relaid_positions(g, out, phases);
  positions[0] += extra_rows;
  std::vector<int64_t> source_extents(g.in.begin(), g.in.end()), pad = in.pad, padded = positions;
  bool any_phased = false, zeros = false;
  for (size_t u = 0; u < dims; ++u) {
    if (in.phased[u]) padded[u] = positions[u] * g.strides[u];
    any_phased = any_phased || in.phased[u];
    zeros = zeros || pad[u] > 0 || padded[u] - pad[u] > g.in[u];
  }
  TensorExpr source = x;
  int64_t lanes = ctx.layouts().vector_lanes;
  bool one_stage = lanes > 0 && out.back() > lanes;
  if (any_phased && zeros && !one_stage) {
    source = relayout_stage(ctx, name + "_pad", x, g, padded, std::vector<bool>(dims, false), pad, source_extents,
                            pad_value);
    source_extents = padded;
    pad.assign(dims, 0);
  }
  in.tensor = relayout_stage(ctx, name + (any_phased ? "_phases" : "_pad"), source, g, positions, in.phased,
                             pad, source_extents, pad_value, storage);
  in.pad.assign(dims, 0);
  return in;
}

}  // namespace tessel::lower::nn
