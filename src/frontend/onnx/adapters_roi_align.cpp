// RoiAlign with a fixed sampling ratio as arithmetic on the boxes and four
// GatherElements (one per bilinear corner) of each box's image, as ONNX's
// reference computes it: sampling_ratio^2 points per output bin, each the
// bilinear mix of its four pixels (a point more than one pixel outside is
// zero, one inside the last pixel row or column stays on it), averaged or
// maxed over the bin (max takes the largest weighted corner, as the reference
// does). batch_indices reach X through a Gather and its run-time index check.
// An adaptive sampling ratio (0) would make the number of points depend on
// the boxes' values, so it is refused.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

struct Corner {
  Value *index, *weight;  // int64 and float, each [R, bins, ratio] along its axis
};

struct AxisSamples {
  std::vector<Corner> corners;  // low, high
};

// The sample positions along one axis of every box: [R, bins, ratio], and
// their two bilinear corners with weights (zero where the point lies outside).
AxisSamples axis_samples(AdaptContext& c, Value* start, Value* extent, int64_t bins, int64_t ratio,
                         int64_t size) {
  auto k = [&](double v) { return c.scalar(DType::kF32, v); };
  auto op = [&](const char* name, std::vector<Value*> in) { return c.emit(name, std::move(in))[0]; };
  Tensor steps(DType::kF32, {1, bins, ratio});  // (bin + (i + 0.5) / ratio) per box size unit
  for (int64_t b = 0; b < bins; ++b)
    for (int64_t i = 0; i < ratio; ++i)
      steps.set_f64(b * ratio + i, double(b) + (double(i) + 0.5) / double(ratio));
  Value* bin = op("Div", {extent, k(double(bins))});  // [R, 1, 1]
  Value* p = op("Add", {start, op("Mul", {bin, c.constant(std::move(steps))})});
  Value* outside = op("Or", {op("Less", {p, k(-1)}), op("Greater", {p, k(double(size))})});
  p = op("Max", {p, k(0)});
  Value* low = op("Floor", {p});
  Value* last = op("GreaterOrEqual", {low, k(double(size - 1))});
  low = op("Where", {last, k(double(size - 1)), low});
  p = op("Where", {last, low, p});
  Value* high = op("Where", {last, low, op("Add", {low, k(1)})});
  Value* frac = op("Sub", {p, low});
  Value* keep = c.cast(op("Not", {outside}), DType::kF32);
  return {{{c.cast(low, DType::kI64), op("Mul", {op("Sub", {k(1), frac}), keep})},
           {c.cast(high, DType::kI64), op("Mul", {frac, keep})}}};
}

void adapt_roi_align(AdaptContext& c) {
  Value* x = c.required_input(0, "X");
  Value* rois = c.required_input(1, "rois");
  Value* batch = c.required_input(2, "batch_indices");
  TESSEL_USER_CHECK(x->type.rank() == 4 && rois->type.rank() == 2 && c.static_dim(rois, 1, "rois") == 4,
                    c.span())
      << "X must be (N, C, H, W) and rois (num_rois, 4)";
  int64_t ratio = c.int_attr("sampling_ratio", 0);
  TESSEL_USER_CHECK(ratio > 0, c.span()) << "sampling_ratio 0 (adaptive: points per bin from each box's "
                                            "size) is not supported; give a positive ratio";
  int64_t out_h = c.int_attr("output_height", 1), out_w = c.int_attr("output_width", 1);
  TESSEL_USER_CHECK(out_h >= 1 && out_w >= 1, c.span()) << "output_height and output_width must be positive";
  std::string mode = c.string_attr("mode", "avg");
  TESSEL_USER_CHECK(mode == "avg" || mode == "max", c.span())
      << "mode must be 'avg' or 'max', got '" << mode << "'";
  std::string transform =
      c.string_attr("coordinate_transformation_mode", c.opset >= 16 ? "half_pixel" : "output_half_pixel");
  TESSEL_USER_CHECK(transform == "half_pixel" || transform == "output_half_pixel", c.span())
      << "coordinate_transformation_mode must be half_pixel or output_half_pixel, got '" << transform << "'";
  bool half_pixel = transform == "half_pixel";
  double scale = c.float_attr("spatial_scale", 1.0);
  int64_t channels = c.static_dim(x, 1, "X"), height = c.static_dim(x, 2, "X"),
          width = c.static_dim(x, 3, "X");
  int64_t boxes = c.static_dim(rois, 0, "rois");

  auto k = [&](double v) { return c.scalar(DType::kF32, v); };
  auto op = [&](const char* name, std::vector<Value*> in) { return c.emit(name, std::move(in))[0]; };
  Value* r = op("Sub", {op("Mul", {c.cast(rois, DType::kF32), k(scale)}), k(half_pixel ? 0.5 : 0.0)});
  auto column = [&](int64_t i) {  // [R, 1, 1]
    return c.emit("Reshape", {c.emit("Gather", {r, c.i64_vector({i})}, one_attr("axis", int64_t(1)))[0],
                              c.i64_vector({boxes, 1, 1})})[0];
  };
  Value *x0 = column(0), *y0 = column(1);
  Value* roi_w = op("Sub", {column(2), x0});
  Value* roi_h = op("Sub", {column(3), y0});
  if (!half_pixel) {  // malformed boxes are made 1 x 1
    roi_w = op("Max", {roi_w, k(1)});
    roi_h = op("Max", {roi_h, k(1)});
  }
  AxisSamples ys = axis_samples(c, y0, roi_h, out_h, ratio, height);
  AxisSamples xs = axis_samples(c, x0, roi_w, out_w, ratio, width);

  int64_t points = out_h * ratio * out_w * ratio;
  Value* images = c.emit("Reshape", {c.emit("Gather", {c.cast(x, DType::kF32), c.cast(batch, DType::kI64)},
                                            one_attr("axis", int64_t(0)))[0],
                                     c.i64_vector({boxes, channels, height * width})})[0];
  Value* result = nullptr;
  for (const Corner& cy : ys.corners) {
    for (const Corner& cx : xs.corners) {
      auto grid = [&](Value* along_y, Value* along_x) {  // [R, out_h, ratio, 1, 1] op [R, 1, 1, out_w, ratio]
        Value* gy = c.emit("Reshape", {along_y, c.i64_vector({boxes, out_h, ratio, 1, 1})})[0];
        Value* gx = c.emit("Reshape", {along_x, c.i64_vector({boxes, 1, 1, out_w, ratio})})[0];
        return std::pair<Value*, Value*>{gy, gx};
      };
      auto [iy, ix] = grid(cy.index, cx.index);
      Value* index = op("Add", {op("Mul", {iy, c.scalar(DType::kI64, double(width))}), ix});
      index = c.emit("Expand", {c.emit("Reshape", {index, c.i64_vector({boxes, 1, points})})[0],
                                c.i64_vector({boxes, channels, points})})[0];
      auto [wy, wx] = grid(cy.weight, cx.weight);
      Value* weight = c.emit("Reshape", {op("Mul", {wy, wx}), c.i64_vector({boxes, 1, points})})[0];
      Value* value =
          op("Mul", {c.emit("GatherElements", {images, index}, one_attr("axis", int64_t(2)))[0], weight});
      result = !result ? value : op(mode == "avg" ? "Add" : "Max", {result, value});
    }
  }
  Value* binned = c.emit("Reshape", {result, c.i64_vector({boxes, channels, out_h, ratio, out_w, ratio})})[0];
  Value* pooled = c.emit(mode == "avg" ? "ReduceMean" : "ReduceMax", {binned, c.i64_vector({3, 5})},
                         one_attr("keepdims", int64_t(0)))[0];
  c.results = std::vector<Value*>{c.cast(pooled, x->type.dtype)};
}

}  // namespace

void register_roi_align_adapter(AdapterTable& t) {
  t["RoiAlign"] = adapt_roi_align;
}

}  // namespace tessel::onnx_frontend
