// MaxRoiPool (Fast R-CNN's pooling) as a masked maximum, as ONNX's reference
// computes it: each box's corners scaled and rounded (half to even), its
// extent at least one pixel, split into pooled bins whose edges are floored
// and ceiled and clamped to the image; each bin the maximum of the pixels
// inside it, 0 for a bin with none. The bins' edges depend on the boxes'
// values, so every bin masks the whole plane of its box's image (a Where
// before a ReduceMax over height and width); the box's batch index reaches X
// through a Gather and its run-time index check.
#include <limits>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// The most entries the masked plane of every bin of every box may have
// ([R, C, PH, PW, H, W]): a few hundred bytes of model cannot ask for more.
constexpr int64_t kMaxMaskedEntries = int64_t(1) << 31;

struct BinEdges {
  Value *inside;    // bool [R, bins, size]: the pixels each bin holds
  Value *nonempty;  // bool [R, bins]
};

// Along one axis of extent `size`: the bins of every box from its first and
// last pixel ([R, 1] each, rounded coordinates).
BinEdges bin_edges(AdaptContext& c, Value* first, Value* last, int64_t bins, int64_t size, DType t) {
  auto k = [&](double v) { return c.scalar(t, v); };
  auto op = [&](const char* name, std::vector<Value*> in) { return c.emit(name, std::move(in))[0]; };
  Value* extent = op("Max", {op("Add", {op("Sub", {last, first}), k(1)}), k(1)});
  Value* bin = op("Div", {extent, k(double(bins))});  // [R, 1]
  Tensor index(t, {1, bins});
  for (int64_t b = 0; b < bins; ++b) index.set_f64(b, double(b));
  Value* b = c.constant(std::move(index));
  auto clamp = [&](Value* v) { return op("Min", {op("Max", {op("Add", {v, first}), k(0)}), k(double(size))}); };
  Value* start = clamp(op("Floor", {op("Mul", {b, bin})}));                // [R, bins]
  Value* end = clamp(op("Ceil", {op("Mul", {op("Add", {b, k(1)}), bin})}));  // [R, bins]
  Tensor pixels(t, {1, 1, size});
  for (int64_t p = 0; p < size; ++p) pixels.set_f64(p, double(p));
  Value* p = c.constant(std::move(pixels));
  Value* axis = c.i64_vector({2});
  Value* inside = op("And", {op("GreaterOrEqual", {p, c.emit("Unsqueeze", {start, axis})[0]}),
                             op("Less", {p, c.emit("Unsqueeze", {end, axis})[0]})});
  return {inside, op("Greater", {end, start})};
}

void adapt_max_roi_pool(AdaptContext& c) {
  Value* x = c.required_input(0, "X");
  Value* rois = c.required_input(1, "rois");
  TESSEL_USER_CHECK(x->type.rank() == 4 && rois->type.rank() == 2 && c.static_dim(rois, 1, "rois") == 5, c.span())
      << "X must be (N, C, H, W) and rois (num_rois, 5): batch index, x1, y1, x2, y2";
  std::vector<int64_t> pooled = c.ints_attr("pooled_shape", {});
  TESSEL_USER_CHECK(pooled.size() == 2 && pooled[0] >= 1 && pooled[1] >= 1, c.span())
      << "pooled_shape must be two positive extents";
  double scale = c.float_attr("spatial_scale", 1.0);
  int64_t height = c.static_dim(x, 2, "X"), width = c.static_dim(x, 3, "X");
  int64_t entries = 1;
  for (int64_t extent :
       {c.static_dim(rois, 0, "rois"), c.static_dim(x, 1, "X"), pooled[0], pooled[1], height, width})
    entries = extent != 0 && entries > kMaxMaskedEntries / extent ? kMaxMaskedEntries + 1 : entries * extent;
  TESSEL_USER_CHECK(entries <= kMaxMaskedEntries, c.span())
      << "masks every pixel of every bin of every box: more than " << kMaxMaskedEntries << " entries";
  DType t = rois->type.dtype == DType::kF64 ? DType::kF64 : DType::kF32;
  auto op = [&](const char* name, std::vector<Value*> in) { return c.emit(name, std::move(in))[0]; };
  auto column = [&](Value* from, int64_t i) {  // [R, 1]
    return c.emit("Gather", {from, c.i64_vector({i})}, one_attr("axis", int64_t(1)))[0];
  };
  Value* r = c.cast(rois, t);
  Value* corners = op("Round", {op("Mul", {r, c.scalar(t, scale)})});
  BinEdges rows = bin_edges(c, column(corners, 2), column(corners, 4), pooled[0], height, t);
  BinEdges cols = bin_edges(c, column(corners, 1), column(corners, 3), pooled[1], width, t);
  // [R, 1, PH, PW, H, W]: whether pixel (h, w) is in bin (ph, pw) of box r.
  Value* inside = op("And", {c.emit("Unsqueeze", {rows.inside, c.i64_vector({1, 3, 5})})[0],
                             c.emit("Unsqueeze", {cols.inside, c.i64_vector({1, 2, 4})})[0]});
  Value* batch = c.cast(c.emit("Reshape", {column(r, 0), c.i64_vector({-1})})[0], DType::kI64);
  Value* images = c.emit("Gather", {x, batch}, one_attr("axis", int64_t(0)))[0];  // [R, C, H, W]
  Value* pixels = c.emit("Unsqueeze", {images, c.i64_vector({2, 3})})[0];        // [R, C, 1, 1, H, W]
  Value* lowest = c.scalar(x->type.dtype, -std::numeric_limits<double>::infinity());
  Value* masked = op("Where", {inside, pixels, lowest});
  graph::Attrs reduce;
  reduce.set("keepdims", int64_t(0));
  Value* maxima = c.emit("ReduceMax", {masked, c.i64_vector({4, 5})}, reduce)[0];  // [R, C, PH, PW]
  Value* nonempty = op("And", {c.emit("Unsqueeze", {rows.nonempty, c.i64_vector({1, 3})})[0],
                               c.emit("Unsqueeze", {cols.nonempty, c.i64_vector({1, 2})})[0]});
  c.results = {op("Where", {nonempty, maxima, c.scalar(x->type.dtype, 0)})};
}

}  // namespace

void register_max_roi_pool_adapter(AdapterTable& t) { t["MaxRoiPool"] = adapt_max_roi_pool; }

}  // namespace tessel::onnx_frontend
