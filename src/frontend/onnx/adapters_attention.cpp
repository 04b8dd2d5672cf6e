// Attention-23/24 as the graph ops of its ONNX function body:
// softmax(Q sqrt(s) (K sqrt(s))^T, softcapped, plus the bias) V, where the bias
// adds the mask (boolean ones as 0 / -inf, ones shorter than the keys padded
// with -inf), the causal triangle shifted by the cached length, and -inf past
// each batch's nonpad_kv_seqlen. K and V are appended to the cache (the
// present outputs) and, for grouped-query attention, each KV head is repeated
// for the query heads it serves.
#include <cmath>
#include <limits>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Q, K or V as [B, heads, S, head]; a 3-D [B, S, heads * head] one is split
// by the attribute `heads_attr` and transposed.
graph::Value* as_heads(AdaptContext& c, graph::Value* v, const char* heads_attr, const char* what) {
  const graph::TensorType& t = v->type;
  TESSEL_USER_CHECK(t.rank_known && (t.rank() == 3 || t.rank() == 4), c.span())
      << what << " must be 3-D or 4-D, got " << t.str();
  if (t.rank() == 4) return v;
  int64_t heads = c.int_attr(heads_attr, 0);
  TESSEL_USER_CHECK(heads > 0, c.span()) << "a 3-D " << what << " needs the attribute " << heads_attr;
  return c.transpose(c.emit("Reshape", {v, c.i64_vector({0, 0, heads, -1})})[0], {0, 2, 1, 3});
}

// kv [B, kv_heads, S, h] with each head repeated for the q_heads / kv_heads
// consecutive query heads it serves.
graph::Value* repeat_heads(AdaptContext& c, graph::Value* kv, int64_t q_heads) {
  int64_t kv_heads = c.static_dim(kv, 1, "K and V");
  if (kv_heads == q_heads) return kv;
  TESSEL_USER_CHECK(kv_heads > 0 && q_heads % kv_heads == 0, c.span())
      << "the " << q_heads << " query heads are not a multiple of the " << kv_heads << " key/value heads";
  int64_t group = q_heads / kv_heads, head = c.static_dim(kv, 3, "K and V");
  graph::Value* wide = c.emit("Unsqueeze", {kv, c.i64_vector({2})})[0];
  wide = c.emit("Expand", {wide, c.i64_vector({1, 1, group, 1, 1})})[0];
  return c.emit("Reshape", {wide, c.i64_vector({0, q_heads, -1, head})})[0];
}

graph::Value* add_bias(AdaptContext& c, graph::Value* bias, graph::Value* more) {
  return bias ? c.emit("Add", {bias, more})[0] : more;
}

// The mask as an additive bias of dtype t over `total` keys.
graph::Value* mask_bias(AdaptContext& c, graph::Value* mask, DType t, int64_t total) {
  graph::Value* m = mask->type.dtype == DType::kBool
                        ? c.emit("Where", {mask, c.scalar(t, 0.0), c.scalar(t, kNegInf)})[0]
                        : c.cast(mask, t);
  int64_t keys = c.static_dim(m, -1, "attn_mask");
  TESSEL_USER_CHECK(keys <= total, c.span())
      << "attn_mask covers " << keys << " keys, more than the " << total << " there are";
  if (keys == total) return m;
  std::vector<int64_t> pads(size_t(2 * m->type.rank()), 0);
  pads.back() = total - keys;
  return c.emit("Pad", {m, c.i64_vector(pads), c.scalar(t, kNegInf)})[0];
}

// -inf where key j comes after query i, the queries following `past` cached keys.
graph::Value* causal_bias(AdaptContext& c, DType t, int64_t queries, int64_t total, int64_t past) {
  Tensor tri(t, {queries, total});
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < total; ++j) tri.set_f64(i * total + j, i + past < j ? kNegInf : 0.0);
  return c.constant(std::move(tri));
}

// [B, 1, 1, total]: -inf at and after each batch's nonpad_kv_seqlen.
graph::Value* padding_bias(AdaptContext& c, graph::Value* lengths, DType t, int64_t total) {
  std::vector<int64_t> positions(static_cast<size_t>(total));
  for (int64_t j = 0; j < total; ++j) positions[size_t(j)] = j;
  graph::Value* limit = c.emit("Unsqueeze", {c.cast(lengths, DType::kI64), c.i64_vector({1})})[0];
  graph::Value* kept = c.emit("Less", {c.i64_vector(positions), limit})[0];
  graph::Value* bias = c.emit("Where", {kept, c.scalar(t, 0.0), c.scalar(t, kNegInf)})[0];
  return c.emit("Unsqueeze", {bias, c.i64_vector({1, 2})})[0];
}

void adapt_attention(AdaptContext& c) {
  graph::Value* q_in = c.required_input(0, "Q");
  graph::Value* q = as_heads(c, q_in, "q_num_heads", "Q");
  graph::Value* k = as_heads(c, c.required_input(1, "K"), "kv_num_heads", "K");
  graph::Value* v = as_heads(c, c.required_input(2, "V"), "kv_num_heads", "V");
  graph::Value *past_key = c.input_or_null(4), *past_value = c.input_or_null(5);
  TESSEL_USER_CHECK(!past_key == !past_value, c.span()) << "past_key and past_value come together";
  graph::Attrs seq_axis = one_attr("axis", int64_t(2));
  graph::Value* present_key = past_key ? c.emit("Concat", {past_key, k}, seq_axis)[0] : k;
  graph::Value* present_value = past_value ? c.emit("Concat", {past_value, v}, seq_axis)[0] : v;
  DType t = q_in->type.dtype;
  int64_t q_heads = c.static_dim(q, 1, "Q"), queries = c.static_dim(q, 2, "Q"),
          head = c.static_dim(q, 3, "Q");
  int64_t total = c.static_dim(present_key, 2, "K"),
          past = past_key ? c.static_dim(past_key, 2, "past_key") : 0;
  graph::Value* root_scale = c.scalar(t, std::sqrt(c.float_attr("scale", 1.0 / std::sqrt(double(head)))));
  graph::Value* keys = c.transpose(repeat_heads(c, present_key, q_heads), {0, 1, 3, 2});
  graph::Value* qk =
      c.emit("MatMul", {c.emit("Mul", {q, root_scale})[0], c.emit("Mul", {keys, root_scale})[0]})[0];
  double softcap = c.float_attr("softcap", 0.0);
  graph::Value* capped = qk;
  if (softcap > 0) {
    graph::Value* cap = c.scalar(t, softcap);
    capped = c.emit("Mul", {c.emit("Tanh", {c.emit("Div", {qk, cap})[0]})[0], cap})[0];
  }
  graph::Value* bias = nullptr;
  if (graph::Value* mask = c.input_or_null(3)) bias = mask_bias(c, mask, t, total);
  if (c.int_attr("is_causal", 0) != 0) bias = add_bias(c, bias, causal_bias(c, t, queries, total, past));
  if (graph::Value* lengths = c.input_or_null(6))
    bias = add_bias(c, bias, padding_bias(c, lengths, t, total));
  graph::Value* weights = bias ? c.emit("Add", {capped, bias})[0] : capped;
  DType precision = c.float_type_attr("softmax_precision", t);
  graph::Value* probs =
      c.cast(c.emit("Softmax", {c.cast(weights, precision)}, one_attr("axis", int64_t(-1)))[0], t);
  graph::Value* y = c.emit("MatMul", {probs, repeat_heads(c, present_value, q_heads)})[0];
  if (q_in->type.rank() == 3)
    y = c.emit("Reshape", {c.transpose(y, {0, 2, 1, 3}), c.i64_vector({0, 0, -1})})[0];
  int64_t mode = c.int_attr("qk_matmul_output_mode", 0);
  TESSEL_USER_CHECK(mode >= 0 && mode <= 3, c.span()) << "qk_matmul_output_mode must be 0 to 3, got " << mode;
  graph::Value* qk_output[] = {qk, capped, weights, probs};  // as ONNX's function body and cases number them
  std::vector<graph::Value*> outs = {y, present_key, present_value, qk_output[mode]};
  outs.resize(c.output_names.size());
  c.results = outs;
}

}  // namespace

void register_attention_adapter(AdapterTable& t) {
  t["Attention"] = adapt_attention;
}

}  // namespace tessel::onnx_frontend
