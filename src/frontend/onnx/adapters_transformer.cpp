// The language-model ops of opset 23 become the graph ops of their ONNX
// function bodies: RMSNormalization, RotaryEmbedding and Attention (3-D or
// 4-D inputs, grouped-query heads, a KV cache, boolean or additive masks
// shorter than the keys, causal masking after a cache, padded keys, softcap,
// the four qk_matmul_output modes). The fusion pass then groups the pieces;
// the shapes these need (heads, head sizes, sequence lengths) must be static.
#include <cmath>
#include <limits>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/tensor_proto.h"

namespace tessel::onnx_frontend {

namespace {

// Static extent of dimension d (negative counts from the back).
// x / sqrt(mean(x^2 over axis..last) + epsilon) * scale, in the stash type.
void adapt_rms_normalization(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "X");
  graph::Value* scale = c.required_input(1, "scale");
  TESSEL_USER_CHECK(x->type.rank_known, c.span()) << "X needs a known rank, got " << x->type.str();
  int64_t rank = x->type.rank(), axis = c.int_attr("axis", -1);
  TESSEL_USER_CHECK(axis >= -rank && axis < rank, c.span())
      << "axis " << axis << " is out of range for rank " << rank;
  if (axis < 0) axis += rank;
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
  DType stash = c.float_type_attr("stash_type", DType::kF32);
  graph::Value* xs = c.cast(x, stash);
  graph::Value* mean = c.emit("ReduceMean", {c.emit("Mul", {xs, xs})[0], c.i64_vector(axes)},
                              one_attr("keepdims", int64_t(1)))[0];
  graph::Value* rms =
      c.emit("Sqrt", {c.emit("Add", {mean, c.scalar(stash, c.float_attr("epsilon", 1e-5))})[0]})[0];
  graph::Value* normalized = c.cast(c.emit("Div", {xs, rms})[0], x->type.dtype);
  c.results = c.emit("Mul", {normalized, scale});
}

// Slice of v along its last axis: [start, end) by step.
graph::Value* last_axis_slice(AdaptContext& c, graph::Value* v, int64_t start, int64_t end, int64_t step) {
  return c.emit("Slice",
                {v, c.i64_vector({start}), c.i64_vector({end}), c.i64_vector({-1}), c.i64_vector({step})})[0];
}

// RotaryEmbedding-23 on X as [B, S, heads, head]: the first rotary_dim of each
// head rotated by the cached angles (halves, or even/odd pairs when
// interleaved), the rest passed through.
void adapt_rotary_embedding(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "X");
  graph::Value* cos = c.required_input(1, "cos_cache");
  graph::Value* sin = c.required_input(2, "sin_cache");
  graph::Value* positions = c.input_or_null(3);
  TESSEL_USER_CHECK(x->type.rank_known && (x->type.rank() == 3 || x->type.rank() == 4), c.span())
      << "X must be [batch, seq, hidden] or [batch, heads, seq, head], got " << x->type.str();
  bool four_d = x->type.rank() == 4;
  graph::Value* xin;
  if (four_d) {
    xin = c.transpose(x, {0, 2, 1, 3});
  } else {
    int64_t heads = c.int_attr("num_heads", 0);
    TESSEL_USER_CHECK(heads > 0, c.span()) << "a 3-D X needs the attribute num_heads";
    xin = c.emit("Reshape", {x, c.i64_vector({0, 0, heads, -1})})[0];
  }
  int64_t head = c.static_dim(xin, 3, "X"), rotary = c.int_attr("rotary_embedding_dim", 0);
  if (rotary == 0) rotary = head;
  TESSEL_USER_CHECK(rotary > 0 && rotary <= head && rotary % 2 == 0, c.span())
      << "rotary_embedding_dim " << rotary << " must be even and at most the head size " << head;
  if (positions) {
    cos = c.emit("Gather", {cos, positions})[0];
    sin = c.emit("Gather", {sin, positions})[0];
  }
  int64_t half = rotary / 2;
  cos = c.emit("Unsqueeze", {last_axis_slice(c, cos, 0, half, 1), c.i64_vector({2})})[0];
  sin = c.emit("Unsqueeze", {last_axis_slice(c, sin, 0, half, 1), c.i64_vector({2})})[0];
  graph::Value* rotate = last_axis_slice(c, xin, 0, rotary, 1);
  bool interleaved = c.int_attr("interleaved", 0) != 0;
  graph::Value* x1 =
      interleaved ? last_axis_slice(c, rotate, 0, rotary, 2) : last_axis_slice(c, rotate, 0, half, 1);
  graph::Value* x2 = interleaved ? last_axis_slice(c, rotate, 1, rotary + 1, 2)
                                 : last_axis_slice(c, rotate, half, rotary, 1);
  graph::Value* real = c.emit("Sub", {c.emit("Mul", {cos, x1})[0], c.emit("Mul", {sin, x2})[0]})[0];
  graph::Value* imaginary = c.emit("Add", {c.emit("Mul", {sin, x1})[0], c.emit("Mul", {cos, x2})[0]})[0];
  graph::Value* rotated;
  graph::Attrs last = one_attr("axis", int64_t(-1));
  if (interleaved) {
    graph::Value* pairs = c.emit("Concat",
                                 {c.emit("Unsqueeze", {real, c.i64_vector({-1})})[0],
                                  c.emit("Unsqueeze", {imaginary, c.i64_vector({-1})})[0]},
                                 last)[0];
    rotated = c.emit("Reshape", {pairs, c.emit("Shape", {rotate})[0]})[0];
  } else {
    rotated = c.emit("Concat", {real, imaginary}, last)[0];
  }
  graph::Value* y = rotary == head
                        ? rotated
                        : c.emit("Concat", {rotated, last_axis_slice(c, xin, rotary, head, 1)}, last)[0];
  if (four_d) y = c.transpose(y, {0, 2, 1, 3});
  c.results = c.emit("Reshape", {y, c.emit("Shape", {x})[0]});
}

}  // namespace

void register_transformer_adapters(AdapterTable& t) {
  t["RMSNormalization"] = adapt_rms_normalization;
  t["RotaryEmbedding"] = adapt_rotary_embedding;
  register_attention_adapter(t);
}

}  // namespace tessel::onnx_frontend
