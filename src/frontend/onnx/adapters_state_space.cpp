// The opset-27 operators of linear-attention and state-space LLM layers.
// CausalConvWithState: the past state (or zeros) prepended along the length,
// a depthwise Conv without padding, an optional SiLU; the new state is the
// padded input's last k - 1 positions. LinearAttention: a Scan over time of
// the recurrent state [B, H_kv, d_k, d_v] (rules linear, gated, delta,
// gated_delta), computed in float whatever the input type, as ONNX's function
// body does; query heads share a key/value head in groups (GQA, MQA).
#include <cmath>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/step_builder.h"
#include "src/passes/fold_constants.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

bool is_half(DType t) {
  return t == DType::kF16 || t == DType::kBF16;
}

// The value computed in float when it is a 16-bit float.
Value* widened(AdaptContext& c, Value* v) {
  return is_half(v->type.dtype) ? c.cast(v, DType::kF32) : v;
}

Value* silu(AdaptContext& c, Value* x) {
  return c.emit("Mul", {x, c.emit("Sigmoid", {x})[0]})[0];
}

void adapt_causal_conv(AdaptContext& c) {
  Value* x = c.required_input(0, "input");
  Value* w = c.required_input(1, "weight");
  Value *bias = c.input_or_null(2), *past = c.input_or_null(3);
  TESSEL_USER_CHECK(x->type.rank() == 3 && w->type.rank() == 3, c.span())
      << "input (batch, channels, length) and weight (channels, 1, k) must be rank 3";
  int64_t channels = c.static_dim(x, 1, "input"), k = c.static_dim(w, 2, "weight");
  TESSEL_USER_CHECK(c.static_dim(w, 0, "weight") == channels && c.static_dim(w, 1, "weight") == 1, c.span())
      << "weight must be (" << channels << ", 1, k) for " << channels << " channels";
  TESSEL_USER_CHECK(k >= 1, c.span()) << "the kernel size must be positive";
  std::string activation = c.string_attr("activation", "none");
  TESSEL_USER_CHECK(activation == "none" || activation == "silu" || activation == "swish", c.span())
      << "activation must be 'none', 'silu' or 'swish', got '" << activation << "'";
  DType t = x->type.dtype;
  TESSEL_USER_CHECK(!past || (past->type.rank() == 3 && c.static_dim(past, 2, "past_state") == k - 1),
                    c.span())
      << "past_state must be (batch, channels, " << k - 1 << "): the last k - 1 inputs";
  if (!past && k > 1) {
    Tensor zeros(t, {c.static_dim(x, 0, "input"), channels, k - 1});
    past = c.constant(std::move(zeros));
  }
  Value* padded = k > 1 ? c.emit("Concat", {past, x}, one_attr("axis", int64_t(2)))[0] : x;
  std::vector<Value*> conv_in{widened(c, padded), widened(c, w)};
  if (bias) conv_in.push_back(widened(c, bias));
  graph::Attrs conv_attrs;
  conv_attrs.set("group", channels);
  conv_attrs.set("kernel_shape", std::vector<int64_t>{k});
  Value* y = c.emit("Conv", conv_in, std::move(conv_attrs))[0];
  if (activation != "none") y = silu(c, y);
  int64_t length = c.static_dim(padded, 2, "input");
  Value* state = c.emit(
      "Slice", {padded, c.i64_vector({length - (k - 1)}), c.i64_vector({length}), c.i64_vector({2})})[0];
  c.results = std::vector<Value*>{c.cast(y, t), state};
}

enum class Rule { kLinear, kGated, kDelta, kGatedDelta };

Rule update_rule(const AdaptContext& c) {
  std::string rule = c.string_attr("update_rule", "gated_delta");
  if (rule == "linear") return Rule::kLinear;
  if (rule == "gated") return Rule::kGated;
  if (rule == "delta") return Rule::kDelta;
  TESSEL_USER_CHECK(rule == "gated_delta", c.span())
      << "update_rule must be linear, gated, delta or gated_delta, got '" << rule << "'";
  return Rule::kGatedDelta;
}

struct Heads {
  int64_t batch, steps, q, kv, dk, dv;
};

// [B, T, H * D] float as [T, B, H, D], the time steps first for the Scan.
Value* steps_first(AdaptContext& c, Value* v, const Heads& h, int64_t heads) {
  Value* split = c.emit("Reshape", {c.cast(v, DType::kF32), c.i64_vector({h.batch, h.steps, heads, -1})})[0];
  return c.transpose(split, {1, 0, 2, 3});
}

graph::TensorType step_type(const Value* v) {
  graph::TensorType t = v->type;
  t.dims.erase(t.dims.begin());
  return t;
}

// One step: the state decayed (gated rules), the write (delta rules: beta
// times what the key retrieves subtracted from the value), the outer product
// of key and write added, and the query's read of the new state.
std::pair<Value*, Value*> attention_step(StepBuilder& s, const Heads& h, Value* state, Value* q, Value* k,
                                         Value* v, Value* decay, Value* beta, double scale) {
  AdaptContext& b = s.b();
  auto unsqueeze = [&](Value* x, int64_t axis) { return b.emit("Unsqueeze", {x, b.i64_vector({axis})})[0]; };
  auto squeeze = [&](Value* x, int64_t axis) { return b.emit("Squeeze", {x, b.i64_vector({axis})})[0]; };
  if (decay) state = s.mul(state, unsqueeze(b.emit("Exp", {decay})[0], -1));
  Value* k_column = unsqueeze(k, -1);  // [B, H, dk, 1]
  Value* write = v;
  if (beta) {
    Value* retrieved = squeeze(b.emit("MatMul", {b.transpose(state, {0, 1, 3, 2}), k_column})[0], -1);
    write = s.mul(beta, b.emit("Sub", {v, retrieved})[0]);
  }
  Value* next = s.add(state, b.emit("MatMul", {k_column, unsqueeze(write, -2)})[0]);
  Value* read = next;
  if (h.q != h.kv) {  // each group of q / kv query heads reads its key/value head's state
    Value* grouped =
        b.emit("Expand", {unsqueeze(next, 2), b.i64_vector({h.batch, h.kv, h.q / h.kv, h.dk, h.dv})})[0];
    read = b.emit("Reshape", {grouped, b.i64_vector({h.batch, h.q, h.dk, h.dv})})[0];
  }
  Value* out = squeeze(b.emit("MatMul", {unsqueeze(q, -2), read})[0], -2);
  return {next, s.mul(b.scalar(DType::kF32, scale), out)};
}

void adapt_linear_attention(AdaptContext& c) {
  Value* query = c.required_input(0, "query");
  Value* key = c.required_input(1, "key");
  Value* value = c.required_input(2, "value");
  Value *past = c.input_or_null(3), *decay = c.input_or_null(4), *beta = c.input_or_null(5);
  Rule rule = update_rule(c);
  bool gated = rule == Rule::kGated || rule == Rule::kGatedDelta;
  bool delta = rule == Rule::kDelta || rule == Rule::kGatedDelta;
  TESSEL_USER_CHECK(!gated || decay, c.span()) << "the gated update rules need the decay input";
  TESSEL_USER_CHECK(!delta || beta, c.span()) << "the delta update rules need the beta input";
  for (Value* v : {query, key, value})
    TESSEL_USER_CHECK(v->type.rank() == 3, c.span())
        << "query, key and value must be packed [batch, time, heads * size], got rank " << v->type.rank();
  Heads h{c.static_dim(query, 0, "query"),
          c.static_dim(query, 1, "query"),
          c.int_attr("q_num_heads", 0),
          c.int_attr("kv_num_heads", 0),
          0,
          0};
  TESSEL_USER_CHECK(h.q > 0 && h.kv > 0 && h.q % h.kv == 0, c.span())
      << "q_num_heads (" << h.q << ") must be a positive multiple of kv_num_heads (" << h.kv << ")";
  int64_t q_width = c.static_dim(query, 2, "query"), v_width = c.static_dim(value, 2, "value");
  TESSEL_USER_CHECK(q_width % h.q == 0 && v_width % h.kv == 0, c.span())
      << "query's last dimension must divide into q_num_heads and value's into kv_num_heads";
  h.dk = q_width / h.q;
  h.dv = v_width / h.kv;
  TESSEL_USER_CHECK(c.static_dim(key, 2, "key") == h.kv * h.dk, c.span())
      << "key's last dimension must be kv_num_heads x " << h.dk << " (query's head size)";
  double scale = c.float_attr("scale", 1.0 / std::sqrt(double(h.dk)));
  if (gated) {
    int64_t d = c.static_dim(decay, -1, "decay");
    TESSEL_USER_CHECK(decay->type.rank() == 3 && (d == h.kv * h.dk || d == h.kv), c.span())
        << "decay must be [batch, time, kv_num_heads x " << h.dk
        << "] (per key) or [batch, time, kv_num_heads]";
  }
  if (delta) {
    int64_t d = c.static_dim(beta, -1, "beta");
    TESSEL_USER_CHECK(beta->type.rank() == 3 && (d == h.kv || d == 1), c.span())
        << "beta must be [batch, time, kv_num_heads] or [batch, time, 1]";
  }

  std::vector<Value*> scanned{steps_first(c, query, h, h.q), steps_first(c, key, h, h.kv),
                              steps_first(c, value, h, h.kv)};
  if (gated) scanned.push_back(steps_first(c, decay, h, h.kv));  // [.., dk] per key, or [.., 1] per head
  if (delta) {
    Value* b = c.emit("Reshape", {c.cast(beta, DType::kF32), c.i64_vector({h.batch, h.steps, -1, 1})})[0];
    scanned.push_back(c.transpose(b, {1, 0, 2, 3}));
  }
  Value* state0 =
      past ? c.cast(past, DType::kF32) : c.constant(Tensor(DType::kF32, {h.batch, h.kv, h.dk, h.dv}));

  auto body = std::make_shared<graph::Graph>();
  body->name = c.name + "/step";
  StepBuilder s(c, body);
  Value* state = s.input("state", state0->type);
  std::vector<Value*> at;
  for (size_t i = 0; i < scanned.size(); ++i)
    at.push_back(s.input("x" + std::to_string(i), step_type(scanned[i])));
  Value* decay_t = gated ? at[3] : nullptr;
  Value* beta_t = delta ? at.back() : nullptr;
  auto [next, out] = attention_step(s, h, state, at[0], at[1], at[2], decay_t, beta_t, scale);
  body->set_outputs({next, out});
  passes::remove_folded_nodes(*body);

  std::vector<Value*> inputs{state0};
  inputs.insert(inputs.end(), scanned.begin(), scanned.end());
  for (Value* v : s.captured()) inputs.push_back(v);
  graph::Attrs attrs;
  attrs.set("length", h.steps);
  attrs.set("num_states", int64_t(1));
  attrs.set("num_scan_inputs", int64_t(scanned.size()));
  graph::Node* scan = c.graph.add_node(
      "Scan", c.graph.unique_name(c.name + "/scan"), inputs,
      {c.graph.unique_name(c.name + "/state"), c.graph.unique_name(c.name + "/out")}, std::move(attrs));
  scan->body = body;
  infer_and_fold(*scan, c.fold_constants);
  Value* outputs = c.transpose(scan->outputs[1], {1, 0, 2, 3});  // [B, T, Hq, dv]
  Value* packed = c.emit("Reshape", {outputs, c.i64_vector({h.batch, h.steps, h.q * h.dv})})[0];
  DType t = query->type.dtype;
  c.results = std::vector<Value*>{c.cast(packed, t), c.cast(scan->outputs[0], t)};
}

}  // namespace

void register_state_space_adapters(AdapterTable& t) {
  t["CausalConvWithState"] = adapt_causal_conv;
  t["LinearAttention"] = adapt_linear_attention;
}

}  // namespace tessel::onnx_frontend
