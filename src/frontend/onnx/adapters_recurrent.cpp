// LSTM, GRU and RNN (every direction, sequence lengths, initial states,
// activations, clip, peepholes, layouts) as a Scan over time (ir/graph/scan.h):
// the input projection of every step is one MatMul before the loop, and the
// body holds the recurrent MatMul and the gate arithmetic, which fusion
// groups into a few kernels that the plan runs once per step.
#include <algorithm>
#include <cctype>

#include "ir/graph/scan.h"
#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/step_builder.h"
#include "src/passes/fold_constants.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

enum class Cell { kLstm, kGru, kRnn };

struct Activation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;
};

int gates_of(Cell cell) {
  return cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1;
}

// The activations of every direction, with the alphas and betas consumed in
// order by those that take them.
std::vector<Activation> activations(const AdaptContext& c, Cell cell, int directions) {
  std::vector<std::string> names;
  if (const auto* given = c.attrs.find("activations")) names = std::get<std::vector<std::string>>(*given);
  std::vector<std::string> defaults = cell == Cell::kLstm
                                          ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                      : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                           : std::vector<std::string>{"Tanh"};
  size_t per_direction = defaults.size();
  if (names.empty())
    for (int d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  TESSEL_USER_CHECK(names.size() == per_direction * size_t(directions), c.span())
      << "'activations' has " << names.size() << " entries, expected " << per_direction * size_t(directions);
  std::vector<double> alphas, betas;
  if (const auto* a = c.attrs.find("activation_alpha")) alphas = std::get<std::vector<double>>(*a);
  if (const auto* b = c.attrs.find("activation_beta")) betas = std::get<std::vector<double>>(*b);
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const std::string& given : names) {
    Activation a{given};
    std::transform(a.name.begin(), a.name.end(), a.name.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    struct Defaults {
      const char* name;
      bool alpha, beta;
      double alpha_value, beta_value;
    };
    static const Defaults table[] = {
        {"relu", false, false, 0, 0},        {"tanh", false, false, 0, 0},
        {"sigmoid", false, false, 0, 0},     {"affine", true, true, 1, 0},
        {"leakyrelu", true, false, 0.01, 0}, {"thresholdedrelu", true, false, 1, 0},
        {"scaledtanh", true, true, 1, 1},    {"hardsigmoid", true, true, 0.2, 0.5},
        {"elu", true, false, 1, 0},          {"softsign", false, false, 0, 0},
        {"softplus", false, false, 0, 0}};
    const Defaults* d =
        std::find_if(std::begin(table), std::end(table), [&](const Defaults& t) { return a.name == t.name; });
    TESSEL_USER_CHECK(d != std::end(table), c.span()) << "unsupported activation '" << given << "'";
    a.alpha = d->alpha && next_alpha < alphas.size() ? alphas[next_alpha++] : d->alpha_value;
    a.beta = d->beta && next_beta < betas.size() ? betas[next_beta++] : d->beta_value;
    out.push_back(a);
  }
  return out;
}

Value* activate(AdaptContext& b, const Activation& a, Value* x) {
  DType t = x->type.dtype;
  const std::string& n = a.name;
  if (n == "relu") return b.emit("Relu", {x})[0];
  if (n == "tanh") return b.emit("Tanh", {x})[0];
  if (n == "sigmoid") return b.emit("Sigmoid", {x})[0];
  if (n == "softsign") return b.emit("Softsign", {x})[0];
  if (n == "softplus") return b.emit("Softplus", {x})[0];
  if (n == "affine")
    return b.emit("Add", {b.emit("Mul", {x, b.scalar(t, a.alpha)})[0], b.scalar(t, a.beta)})[0];
  if (n == "scaledtanh")
    return b.emit("Mul",
                  {b.emit("Tanh", {b.emit("Mul", {x, b.scalar(t, a.beta)})[0]})[0], b.scalar(t, a.alpha)})[0];
  if (n == "leakyrelu") return b.emit("LeakyRelu", {x}, one_attr("alpha", a.alpha))[0];
  if (n == "thresholdedrelu") return b.emit("ThresholdedRelu", {x}, one_attr("alpha", a.alpha))[0];
  if (n == "elu") return b.emit("Elu", {x}, one_attr("alpha", a.alpha))[0];
  graph::Attrs hs = one_attr("alpha", a.alpha);
  hs.set("beta", a.beta);
  return b.emit("HardSigmoid", {x}, std::move(hs))[0];
}

// Row `index` of v's axis 0, the axis dropped.
Value* take(AdaptContext& c, Value* v, int64_t index) {
  return c.emit("Gather", {v, c.constant(Tensor::from_i64({index}, {}))}, one_attr("axis", int64_t(0)))[0];
}

// [start, end) of v's last axis.
Value* columns(AdaptContext& c, Value* v, int64_t start, int64_t end) {
  return c.emit("Slice", {v, c.i64_vector({start}), c.i64_vector({end}), c.i64_vector({-1})})[0];
}

struct CellOptions {
  Cell cell;
  int64_t hidden = 0;
  double clip = 0;  // 0: none
  bool input_forget = false, linear_before_reset = false;
};

// One direction's values in the outer graph. rb, peephole, mask: null when absent.
struct DirectionIn {
  Value *xw, *mask, *h0, *c0, *r, *rb, *peephole;
  bool reverse;
};

struct DirectionOut {
  Value *y, *h_last, *c_last;
};

// x clipped to [-limit, limit]; a limit of 0 is none.
Value* clip(StepBuilder& s, Value* x, double limit) {
  if (limit <= 0) return x;
  DType t = x->type.dtype;
  return s.b().emit("Clip", {x, s.b().scalar(t, -limit), s.b().scalar(t, limit)})[0];
}

// The next hidden state (and cell state) of one step, before masking.
std::pair<Value*, Value*> step(StepBuilder& s, const CellOptions& o, const std::vector<Activation>& act,
                               const DirectionIn& in, Value* xw, Value* h, Value* c) {
  AdaptContext& b = s.b();
  const int64_t H = o.hidden;
  Value* r = s.capture(in.r);  // [H, gates * H]: R transposed
  Value* rb = s.capture(in.rb);
  if (o.cell == Cell::kRnn)
    return {activate(b, act[0], clip(s, s.add(s.add(xw, b.emit("MatMul", {h, r})[0]), rb), o.clip)), nullptr};
  if (o.cell == Cell::kGru) {
    Value* hr =
        s.add(b.emit("MatMul", {h, columns(b, r, 0, 2 * H)})[0], rb ? columns(b, rb, 0, 2 * H) : nullptr);
    Value* zr = s.add(columns(b, xw, 0, 2 * H), hr);
    Value* z = activate(b, act[0], clip(s, columns(b, zr, 0, H), o.clip));
    Value* rt = activate(b, act[0], clip(s, columns(b, zr, H, 2 * H), o.clip));
    Value* r_h = columns(b, r, 2 * H, 3 * H);
    Value* rb_h = rb ? columns(b, rb, 2 * H, 3 * H) : nullptr;
    Value* recurrent = o.linear_before_reset ? s.mul(rt, s.add(b.emit("MatMul", {h, r_h})[0], rb_h))
                                             : s.add(b.emit("MatMul", {s.mul(rt, h), r_h})[0], rb_h);
    Value* candidate = activate(b, act[1], clip(s, s.add(columns(b, xw, 2 * H, 3 * H), recurrent), o.clip));
    Value* one = b.scalar(h->type.dtype, 1);
    Value* next = s.add(s.mul(b.emit("Sub", {one, z})[0], candidate), s.mul(z, h));
    return {next, nullptr};
  }
  Value* gates = s.add(s.add(xw, b.emit("MatMul", {h, r})[0]), rb);  // i, o, f, c
  Value* p = s.capture(in.peephole);
  auto peep = [&](Value* x, int k, Value* state) {
    return p ? s.add(x, s.mul(columns(b, p, k * H, (k + 1) * H), state)) : x;
  };
  Value* i = activate(b, act[0], clip(s, peep(columns(b, gates, 0, H), 0, c), o.clip));
  Value* f = o.input_forget
                 ? b.emit("Sub", {b.scalar(h->type.dtype, 1), i})[0]
                 : activate(b, act[0], clip(s, peep(columns(b, gates, 2 * H, 3 * H), 2, c), o.clip));
  Value* g = activate(b, act[1], clip(s, columns(b, gates, 3 * H, 4 * H), o.clip));
  Value* c_next = s.add(s.mul(f, c), s.mul(i, g));
  Value* out = activate(b, act[0], clip(s, peep(columns(b, gates, H, 2 * H), 1, c_next), o.clip));
  return {s.mul(out, activate(b, act[2], c_next)), c_next};
}

// One direction as a Scan over the time steps of xw ([T, B, gates * H]).
DirectionOut scan_direction(AdaptContext& c, const CellOptions& o, const std::vector<Activation>& act,
                            const DirectionIn& in, int direction) {
  auto body = std::make_shared<graph::Graph>();
  body->name = c.name + "/step" + std::to_string(direction);
  StepBuilder s(c, body);
  const bool lstm = o.cell == Cell::kLstm;
  Value* h = s.input("h", in.h0->type);
  Value* cell = lstm ? s.input("c", in.c0->type) : nullptr;
  graph::TensorType slice = in.xw->type;
  slice.dims.erase(slice.dims.begin());
  Value* xw = s.input("xw", slice);
  Value* mask = nullptr;
  if (in.mask) {
    graph::TensorType m = in.mask->type;
    m.dims.erase(m.dims.begin());
    mask = s.input("valid", m);
  }
  auto [h_next, c_next] = step(s, o, act, in, xw, h, cell);
  AdaptContext& b = s.b();
  Value* y = h_next;
  if (mask) {
    y = b.emit("Where", {mask, h_next, b.scalar(h->type.dtype, 0)})[0];
    h_next = b.emit("Where", {mask, h_next, h})[0];
    if (lstm) c_next = b.emit("Where", {mask, c_next, cell})[0];
  }
  std::vector<Value*> results{h_next};
  if (lstm) results.push_back(c_next);
  results.push_back(y);
  body->set_outputs(results);
  passes::remove_folded_nodes(*body);  // constants of the weights alone: no kernel computes them

  std::vector<Value*> inputs{in.h0};
  if (lstm) inputs.push_back(in.c0);
  inputs.push_back(in.xw);
  if (in.mask) inputs.push_back(in.mask);
  for (Value* v : s.captured()) inputs.push_back(v);
  graph::Attrs attrs;
  int64_t length = c.static_dim(in.xw, 0, "X");
  attrs.set("length", length);
  attrs.set("num_states", int64_t(lstm ? 2 : 1));
  attrs.set("num_scan_inputs", int64_t(in.mask ? 2 : 1));
  attrs.set("reverse_inputs", std::vector<int64_t>(in.mask ? 2 : 1, in.reverse ? 1 : 0));
  attrs.set("reverse_outputs", std::vector<int64_t>{in.reverse ? 1 : 0});
  std::vector<std::string> names;
  for (const char* n : {"h_last", "c_last", "y"})
    if (lstm || std::string(n) != "c_last") names.push_back(c.graph.unique_name(c.name + "/" + n));
  graph::Node* scan =
      c.graph.add_node("Scan", c.graph.unique_name(c.name + "/scan"), inputs, names, std::move(attrs));
  scan->body = body;
  infer_and_fold(*scan, c.fold_constants);
  return {scan->outputs.back(), scan->outputs[0], lstm ? scan->outputs[1] : nullptr};
}

// [T, B, 1] booleans: step t of batch b lies within sequence_lens[b]; a
// length outside 0..T is refused at run time.
Value* valid_steps(AdaptContext& c, Value* lens, int64_t steps) {
  const Tensor* known = c.constant_input(4);
  if (known) {
    bool all_full = true;
    for (int64_t i = 0; i < known->numel(); ++i) all_full = all_full && known->get_i64(i) == steps;
    if (all_full) return nullptr;
  }
  // Each length read through a Gather of 0..steps, whose run-time index check
  // refuses lengths above steps, and through one of steps - length, which
  // refuses negative ones: both give the length back when it is valid.
  std::vector<int64_t> numbers;
  for (int64_t i = 0; i <= steps; ++i) numbers.push_back(i);
  Value* table = c.i64_vector(numbers);
  Value* given = c.cast(lens, DType::kI64);
  Value* at_most = c.emit("Gather", {table, given})[0];
  Value* from_end =
      c.emit("Gather", {table, c.emit("Sub", {c.scalar(DType::kI64, double(steps)), given})[0]})[0];
  Value* checked =
      c.emit("Max", {at_most, c.emit("Sub", {c.scalar(DType::kI64, double(steps)), from_end})[0]})[0];
  numbers.pop_back();
  Value* positions = c.constant(Tensor::from_i64(numbers, {steps, 1}));
  Value* within = c.emit("Less", {positions, c.emit("Unsqueeze", {checked, c.i64_vector({0})})[0]})[0];
  return c.emit("Unsqueeze", {within, c.i64_vector({2})})[0];
}

void adapt_recurrent(AdaptContext& c, Cell cell) {
  const bool batch_first = c.int_attr("layout", 0) == 1;
  Value* x = c.required_input(0, "X");
  Value* w = c.required_input(1, "W");
  Value* r = c.required_input(2, "R");
  if (batch_first) x = c.transpose(x, {1, 0, 2});
  const int64_t steps = c.static_dim(x, 0, "X"), batch = c.static_dim(x, 1, "X");
  const int gates = gates_of(cell);
  CellOptions o{cell, c.int_attr("hidden_size", 0), c.float_attr("clip", 0),
                c.int_attr("input_forget", 0) != 0, c.int_attr("linear_before_reset", 0) != 0};
  if (o.hidden == 0) o.hidden = c.static_dim(r, 2, "R");
  TESSEL_USER_CHECK(
      c.static_dim(r, 1, "R") == gates * o.hidden && c.static_dim(w, 1, "W") == gates * o.hidden, c.span())
      << "W and R must have " << gates << " x hidden_size " << o.hidden << " rows, got " << w->type.str()
      << " and " << r->type.str();
  std::string direction = c.string_attr("direction", "forward");
  TESSEL_USER_CHECK(direction == "forward" || direction == "reverse" || direction == "bidirectional",
                    c.span())
      << "unknown direction '" << direction << "'";
  const int directions = direction == "bidirectional" ? 2 : 1;
  TESSEL_USER_CHECK(c.static_dim(w, 0, "W") == directions, c.span())
      << "W holds " << c.static_dim(w, 0, "W") << " directions, the direction '" << direction << "' needs "
      << directions;
  std::vector<Activation> act = activations(c, cell, directions);
  const size_t per_direction = act.size() / size_t(directions);
  Value* bias = c.input_or_null(3);
  Value* mask = c.input_or_null(4) ? valid_steps(c, c.inputs[4], steps) : nullptr;
  Value* initial_h = c.input_or_null(5);
  Value* initial_c = cell == Cell::kLstm ? c.input_or_null(6) : nullptr;
  Value* peephole = cell == Cell::kLstm ? c.input_or_null(7) : nullptr;
  if (batch_first && initial_h) initial_h = c.transpose(initial_h, {1, 0, 2});
  if (batch_first && initial_c) initial_c = c.transpose(initial_c, {1, 0, 2});
  DType t = x->type.dtype;
  Value* zeros = c.constant(Tensor::scalar_f64(t, 0));
  Value* zero_state = c.emit("Expand", {zeros, c.i64_vector({batch, o.hidden})})[0];

  std::vector<Value*> ys, hs, cs;
  for (int d = 0; d < directions; ++d) {
    Value* wb = bias ? take(c, bias, d) : nullptr;
    Value* xw = c.emit("MatMul", {x, c.transpose(take(c, w, d), {1, 0})})[0];
    if (wb) xw = c.emit("Add", {xw, columns(c, wb, 0, gates * o.hidden)})[0];
    DirectionIn in{xw,
                   mask,
                   initial_h ? take(c, initial_h, d) : zero_state,
                   initial_c ? take(c, initial_c, d) : zero_state,
                   c.transpose(take(c, r, d), {1, 0}),
                   wb ? columns(c, wb, gates * o.hidden, 2 * gates * o.hidden) : nullptr,
                   peephole ? take(c, peephole, d) : nullptr,
                   direction == "reverse" || d == 1};
    std::vector<Activation> mine(act.begin() + long(per_direction) * d,
                                 act.begin() + long(per_direction) * (d + 1));
    DirectionOut out = scan_direction(c, o, mine, in, d);
    ys.push_back(c.emit("Unsqueeze", {out.y, c.i64_vector({1})})[0]);
    hs.push_back(c.emit("Unsqueeze", {out.h_last, c.i64_vector({0})})[0]);
    if (out.c_last) cs.push_back(c.emit("Unsqueeze", {out.c_last, c.i64_vector({0})})[0]);
  }
  auto join = [&](std::vector<Value*>& parts, int64_t axis) {
    return parts.size() == 1 ? parts[0] : c.emit("Concat", parts, one_attr("axis", axis))[0];
  };
  Value* y = join(ys, 1);
  Value* y_h = join(hs, 0);
  Value* y_c = cs.empty() ? nullptr : join(cs, 0);
  if (batch_first) {
    y = c.transpose(y, {2, 0, 1, 3});
    y_h = c.transpose(y_h, {1, 0, 2});
    if (y_c) y_c = c.transpose(y_c, {1, 0, 2});
  }
  std::vector<Value*> results{y, y_h};
  if (cell == Cell::kLstm) results.push_back(y_c);
  results.resize(c.output_names.size(), nullptr);
  c.results = results;
}

}  // namespace

void register_recurrent_adapters(AdapterTable& t) {
  t["LSTM"] = [](AdaptContext& c) { adapt_recurrent(c, Cell::kLstm); };
  t["GRU"] = [](AdaptContext& c) { adapt_recurrent(c, Cell::kGru); };
  t["RNN"] = [](AdaptContext& c) { adapt_recurrent(c, Cell::kRnn); };
}

}  // namespace tessel::onnx_frontend
