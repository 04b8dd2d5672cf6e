// Operators that move elements to places computed from their inputs, as
// compositions of the data-movement graph ops: CenterCropPad (a Slice and a
// Pad per axis), ReverseSequence (a GatherElements whose indices reverse each
// batch's first sequence_lens steps), MaxUnpool (each value scattered to its
// index into zeros), TensorScatter (a KV-cache update written at each
// batch's position, linear or circular) and Col2Im (columns added into the
// image with a scatter-add). Indices computed at run time go
// through the gather's and scatter's own bounds checks.
#include <algorithm>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// v [n] reshaped to lie along `axis` of a rank-`rank` tensor.
Value* along(AdaptContext& c, Value* v, int64_t axis, int rank) {
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[size_t(axis)] = -1;
  return c.emit("Reshape", {c.cast(v, DType::kI64), c.i64_vector(shape)})[0];
}

void adapt_center_crop_pad(AdaptContext& c) {
  Value* x = c.required_input(0, "input_data");
  c.required_input(1, "shape");
  const Tensor* shape = c.constant_input(1);
  TESSEL_USER_CHECK(shape, c.span()) << "shape must be known while compiling (it decides the output's shape)";
  int rank = x->type.rank();
  std::vector<int64_t> axes = c.ints_attr("axes", {});
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  TESSEL_USER_CHECK(int64_t(axes.size()) == shape->numel(), c.span())
      << "shape has " << shape->numel() << " sizes for " << axes.size() << " axes";
  std::vector<int64_t> starts, ends, slice_axes, pads(size_t(2 * rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = c.normalized_axis(axes[i], rank), want = shape->get_i64(int64_t(i));
    int64_t have = c.static_dim(x, axis, "input_data");
    TESSEL_USER_CHECK(want >= 0, c.span()) << "shape " << want << " is negative";
    if (want < have) {  // cropped: the extra split with the smaller part before
      starts.push_back((have - want) / 2);
      ends.push_back((have - want) / 2 + want);
      slice_axes.push_back(axis);
    } else if (want > have) {  // padded with zeros the same way
      pads[size_t(axis)] = (want - have) / 2;
      pads[size_t(axis + rank)] = want - have - (want - have) / 2;
    }
  }
  Value* y = x;
  if (!slice_axes.empty())
    y = c.emit("Slice", {y, c.i64_vector(starts), c.i64_vector(ends), c.i64_vector(slice_axes)})[0];
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }))
    y = c.emit("Pad", {y, c.i64_vector(pads)})[0];
  c.results = std::vector<Value*>{y == x ? c.emit("Identity", {x})[0] : y};
}

void adapt_reverse_sequence(AdaptContext& c) {
  Value* x = c.required_input(0, "input");
  Value* lens = c.required_input(1, "sequence_lens");
  int rank = x->type.rank();
  TESSEL_USER_CHECK(rank >= 2, c.span()) << "input must have rank 2 or more";
  int64_t time = c.normalized_axis(c.int_attr("time_axis", 0), rank);
  int64_t batch = c.normalized_axis(c.int_attr("batch_axis", 1), rank);
  TESSEL_USER_CHECK(time <= 1 && batch <= 1 && time != batch, c.span())
      << "time_axis and batch_axis must be 0 and 1, one each";
  // Step t of a batch of length n reads step n - 1 - t while t < n, else t.
  Value* t = c.positions_along(rank, time, c.static_dim(x, time, "input"));
  Value* n = along(c, lens, batch, rank);
  Value* reversed = c.emit("Sub", {c.emit("Sub", {n, c.scalar(DType::kI64, 1)})[0], t})[0];
  Value* index = c.emit("Where", {c.emit("Less", {t, n})[0], reversed, t})[0];
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) dims.push_back(c.static_dim(x, d, "input"));
  index = c.emit("Expand", {index, c.i64_vector(dims)})[0];
  c.results = c.emit("GatherElements", {x, index}, one_attr("axis", time));
}

// The unpooled shape: (in - 1) x stride - pads + kernel per spatial dimension.
std::vector<int64_t> unpooled_shape(const AdaptContext& c, const Value* x) {
  int spatial = x->type.rank() - 2;
  TESSEL_USER_CHECK(c.attrs.has("kernel_shape"), c.span()) << "MaxUnpool needs the 'kernel_shape' attribute";
  std::vector<int64_t> kernel = c.ints_attr("kernel_shape", {});
  std::vector<int64_t> strides = c.ints_attr("strides", std::vector<int64_t>(size_t(spatial), 1));
  std::vector<int64_t> pads = c.ints_attr("pads", std::vector<int64_t>(size_t(2 * spatial), 0));
  TESSEL_USER_CHECK(
      int(kernel.size()) == spatial && int(strides.size()) == spatial && int(pads.size()) == 2 * spatial,
      c.span())
      << "kernel_shape, strides and pads must give " << spatial << " spatial dimensions";
  std::vector<int64_t> shape{c.static_dim(x, 0, "X"), c.static_dim(x, 1, "X")};
  for (int d = 0; d < spatial; ++d) {
    shape.push_back((c.static_dim(x, d + 2, "X") - 1) * strides[size_t(d)] - pads[size_t(d)] -
                    pads[size_t(d + spatial)] + kernel[size_t(d)]);
    TESSEL_USER_CHECK(shape.back() >= 1, c.span())
        << "kernel_shape, strides and pads give an unpooled size of " << shape.back() << " at dimension "
        << d + 2;
  }
  return shape;
}

// Each value scattered into zeros of the unpooled shape at its flat index (as
// MaxPool's Indices give it); an output_shape larger than that pads zeros at
// the end of each dimension, as ONNX's cases expect.
void adapt_max_unpool(AdaptContext& c) {
  Value* x = c.required_input(0, "X");
  Value* indices = c.required_input(1, "I");
  int rank = x->type.rank();
  TESSEL_USER_CHECK(rank >= 3, c.span()) << "X must be (N, C, spatial...)";
  std::vector<int64_t> shape = unpooled_shape(c, x);
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  Value* zeros = c.constant(Tensor(x->type.dtype, {total}));
  Value* flat_values = c.emit("Reshape", {x, c.i64_vector({-1})})[0];
  Value* flat_indices = c.emit("Reshape", {c.cast(indices, DType::kI64), c.i64_vector({-1})})[0];
  Value* scattered =
      c.emit("ScatterElements", {zeros, flat_indices, flat_values}, one_attr("axis", int64_t(0)))[0];
  Value* y = c.emit("Reshape", {scattered, c.i64_vector(shape)})[0];
  if (c.input_or_null(2)) {
    const Tensor* given = c.constant_input(2);
    TESSEL_USER_CHECK(given && given->numel() == rank, c.span())
        << "output_shape must be known while compiling, one size per dimension of X";
    std::vector<int64_t> pads(size_t(2 * rank), 0);
    for (int d = 0; d < rank; ++d) {
      int64_t extra = given->get_i64(d) - shape[size_t(d)];
      TESSEL_USER_CHECK(extra >= 0 && (extra == 0 || d >= 2), c.span())
          << "output_shape " << given->get_i64(d) << " at dimension " << d << " is smaller than the unpooled "
          << shape[size_t(d)] << " (or changes N or C)";
      pads[size_t(rank + d)] = extra;
    }
    if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }))
      y = c.emit("Pad", {y, c.i64_vector(pads)})[0];
  }
  c.results = std::vector<Value*>{y};
}

void adapt_tensor_scatter(AdaptContext& c) {
  Value* cache = c.required_input(0, "past_cache");
  Value* update = c.required_input(1, "update");
  Value* positions = c.input_or_null(2);
  int rank = cache->type.rank();
  TESSEL_USER_CHECK(rank >= 2 && update->type.rank() == rank, c.span())
      << "past_cache and update must have one rank, 2 or more";
  int64_t axis = c.normalized_axis(c.int_attr("axis", -2), rank);
  TESSEL_USER_CHECK(axis != 0, c.span()) << "axis must not be the batch axis 0";
  std::string mode = c.string_attr("mode", "linear");
  TESSEL_USER_CHECK(mode == "linear" || mode == "circular", c.span())
      << "mode must be 'linear' or 'circular', got '" << mode << "'";
  // Element l of the update goes to position write_indices[b] + l of the cache
  // (modulo its length when circular); past the end is an index out of range.
  Value* index = c.positions_along(rank, axis, c.static_dim(update, axis, "update"));
  if (positions) index = c.emit("Add", {index, along(c, positions, 0, rank)})[0];
  if (mode == "circular")
    index = c.emit("Mod", {index, c.scalar(DType::kI64, double(c.static_dim(cache, axis, "past_cache")))})[0];
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) dims.push_back(c.static_dim(update, d, "update"));
  index = c.emit("Expand", {index, c.i64_vector(dims)})[0];
  c.results = c.emit("ScatterElements", {cache, index, update}, one_attr("axis", axis));
}

// Col2Im: every column entry added into the image at the position its block
// and kernel offset give; entries that land in the padding go to one extra
// slot that is sliced off. The positions are constants, the sum one
// ScatterElements with reduction add.
void adapt_col2im(AdaptContext& c) {
  Value* x = c.required_input(0, "input");
  const Tensor* image = c.constant_input(1);
  const Tensor* block = c.constant_input(2);
  TESSEL_USER_CHECK(image && block && image->numel() == block->numel() && image->numel() >= 1, c.span())
      << "image_shape and block_shape must be known while compiling, one size per spatial dimension each";
  auto spatial = size_t(image->numel());
  std::vector<int64_t> size = image->to_i64_vector(), kernel = block->to_i64_vector();
  std::vector<int64_t> strides = c.ints_attr("strides", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> dilations = c.ints_attr("dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = c.ints_attr("pads", std::vector<int64_t>(2 * spatial, 0));
  TESSEL_USER_CHECK(strides.size() == spatial && dilations.size() == spatial && pads.size() == 2 * spatial,
                    c.span())
      << "strides, dilations and pads must describe " << spatial << " spatial dimensions";
  int64_t taps = 1, blocks = 1, pixels = 1;
  std::vector<int64_t> counts(spatial);
  for (size_t d = 0; d < spatial; ++d) {
    TESSEL_USER_CHECK(size[d] >= 1 && kernel[d] >= 1 && strides[d] >= 1 && dilations[d] >= 1, c.span())
        << "image and block sizes, strides and dilations must be positive";
    counts[d] = (size[d] + pads[d] + pads[d + spatial] - dilations[d] * (kernel[d] - 1) - 1) / strides[d] + 1;
    TESSEL_USER_CHECK(counts[d] >= 1, c.span()) << "the block does not fit the padded image";
    taps *= kernel[d], blocks *= counts[d], pixels *= size[d];
  }
  TESSEL_USER_CHECK(
      x->type.rank() == 3 && c.static_dim(x, 1, "input") % taps == 0 && c.static_dim(x, 2, "input") == blocks,
      c.span())
      << "input must be (N, C x " << taps << ", " << blocks << ") for these blocks";
  int64_t n = c.static_dim(x, 0, "input"), channels = c.static_dim(x, 1, "input") / taps;
  std::vector<int64_t> target;
  for (int64_t k = 0; k < taps; ++k) {
    for (int64_t l = 0; l < blocks; ++l) {
      int64_t flat = 0, rest_k = k, rest_l = l, at = 0;
      bool inside = true;
      for (size_t d = spatial; d-- > 0;) {  // innermost dimension first
        int64_t offset = rest_k % kernel[d], position = rest_l % counts[d];
        rest_k /= kernel[d], rest_l /= counts[d];
        at = position * strides[d] - pads[d] + offset * dilations[d];
        inside = inside && at >= 0 && at < size[d];
        int64_t stride = 1;
        for (size_t e = d + 1; e < spatial; ++e) stride *= size[e];
        flat += at * stride;
      }
      target.push_back(inside ? flat : pixels);
    }
  }
  Value* index = c.emit("Expand", {c.constant(Tensor::from_i64(target, {1, 1, taps * blocks})),
                                   c.i64_vector({n, channels, taps * blocks})})[0];
  Value* updates = c.emit("Reshape", {x, c.i64_vector({n, channels, taps * blocks})})[0];
  graph::Attrs scatter = one_attr("axis", int64_t(2));
  scatter.set("reduction", std::string("add"));
  Value* sums = c.emit("ScatterElements",
                       {c.constant(Tensor(x->type.dtype, {n, channels, pixels + 1})), index, updates},
                       std::move(scatter))[0];
  Value* kept = c.emit("Slice", {sums, c.i64_vector({0}), c.i64_vector({pixels}), c.i64_vector({2})})[0];
  std::vector<int64_t> shape{n, channels};
  shape.insert(shape.end(), size.begin(), size.end());
  c.results = c.emit("Reshape", {kept, c.i64_vector(shape)});
}

}  // namespace

void register_reorder_adapters(AdapterTable& t) {
  t["Col2Im"] = adapt_col2im;
  t["CenterCropPad"] = adapt_center_crop_pad;
  t["ReverseSequence"] = adapt_reverse_sequence;
  t["MaxUnpool"] = adapt_max_unpool;
  t["TensorScatter"] = adapt_tensor_scatter;
}

}  // namespace tessel::onnx_frontend
