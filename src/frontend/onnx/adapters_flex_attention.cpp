// FlexAttention (ai.onnx.preview, opset 1) as a composition, following its
// ONNX function: Q and K each scaled by the square root of `scale` (worked
// out in float, as the function does), key and value heads repeated for
// grouped queries, scores = Q K^T in the softmax precision (float for 16-bit
// inputs), the score_mod subgraph inlined on the scores, Softmax along the
// keys, the prob_mod subgraph inlined on the probabilities, then times V.
#include <algorithm>
#include <cmath>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// Heads [B, Hkv, S, E] repeated to [B, Hq, S, E]: query head h reads head h / (Hq / Hkv).
Value* repeat_heads(AdaptContext& c, Value* x, int64_t query_heads) {
  int64_t batch = c.static_dim(x, 0, "K/V"), heads = c.static_dim(x, 1, "K/V");
  int64_t seq = c.static_dim(x, 2, "K/V"), size = c.static_dim(x, 3, "K/V");
  if (heads == query_heads) return x;
  Value* spread = c.emit("Unsqueeze", {x, c.i64_vector({2})})[0];
  Value* copies = c.emit("Expand", {spread, c.i64_vector({batch, heads, query_heads / heads, seq, size})})[0];
  return c.emit("Reshape", {copies, c.i64_vector({batch, query_heads, seq, size})})[0];
}

// The subgraph attribute `attr` applied to v, when the node has it.
Value* modified(AdaptContext& c, const char* attr, Value* v) {
  if (std::find(c.subgraphs.begin(), c.subgraphs.end(), attr) == c.subgraphs.end()) return v;
  std::vector<Value*> out = c.inline_subgraph(attr, {v});
  TESSEL_USER_CHECK(out.size() == 1 && out[0]->type.dtype == v->type.dtype && out[0]->type == v->type,
                    c.span())
      << attr << " must return one tensor of its input's type " << v->type.str();
  return out[0];
}

void adapt_flex_attention(AdaptContext& c) {
  Value *q = c.required_input(0, "Q"), *k = c.required_input(1, "K"), *v = c.required_input(2, "V");
  for (Value* x : {q, k, v})
    TESSEL_USER_CHECK(x->type.rank_known && x->type.rank() == 4, c.span())
        << "Q, K and V must be [batch, heads, sequence, head size], got " << x->type.str();
  int64_t query_heads = c.static_dim(q, 1, "Q"), kv_heads = c.static_dim(k, 1, "K");
  int64_t head_size = c.static_dim(q, 3, "Q");
  TESSEL_USER_CHECK(kv_heads > 0 && query_heads % kv_heads == 0 && c.static_dim(v, 1, "V") == kv_heads,
                    c.span())
      << "Q's " << query_heads << " heads must be a multiple of K's and V's " << kv_heads;
  TESSEL_USER_CHECK(c.static_dim(k, 3, "K") == head_size, c.span())
      << "K's head size must be Q's, " << head_size;
  DType t = q->type.dtype;
  DType precision = t == DType::kF16 || t == DType::kBF16 ? DType::kF32 : t;
  float scale = c.attrs.has("scale") ? float(c.float_attr("scale", 1)) : 1.0f / std::sqrt(float(head_size));
  Value* root = c.scalar(t, double(std::sqrt(scale)));
  Value* keys = c.transpose(c.emit("Mul", {repeat_heads(c, k, query_heads), root})[0], {0, 1, 3, 2});
  Value* scores = c.cast(c.emit("MatMul", {c.emit("Mul", {q, root})[0], keys})[0], precision);
  scores = modified(c, "score_mod", scores);
  Value* probs = modified(c, "prob_mod", c.emit("Softmax", {scores}, one_attr("axis", int64_t(3)))[0]);
  Value* values = c.cast(repeat_heads(c, v, query_heads), precision);
  c.results = std::vector<Value*>{c.cast(c.emit("MatMul", {probs, values})[0], t)};
}

}  // namespace

const AdapterTable& preview_adapters() {
  static const AdapterTable table = {{"FlexAttention", adapt_flex_attention}};
  return table;
}

}  // namespace tessel::onnx_frontend
