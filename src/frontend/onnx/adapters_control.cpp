// ONNX's control flow onto the graph's Scan (ir/graph/scan.h): Scan-9 and
// later (scan axes and directions by transposes and reversed slices; Scan-8
// in adapters_scan8.cpp), Loop
// (counted: a trip count known while compiling and no early exit, the
// iteration number a scanned input; otherwise a while loop,
// adapters_while.cpp; unrolled when its shapes follow the iteration or it
// carries a sequence), and If whose condition is known while compiling (the
// chosen branch inlined) or only at run time (each branch a Scan that runs
// once or not at all). What would need shapes decided at run time is
// refused, naming the node.
#include "ir/graph/scan.h"
#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/control_flow.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// Attribute `attr`: `count` ints, zeros when absent.
std::vector<int64_t> ints_attr(const AdaptContext& c, const char* attr, size_t count) {
  std::vector<int64_t> out = c.ints_attr(attr, std::vector<int64_t>(count, 0));
  TESSEL_USER_CHECK(out.size() == count, c.span())
      << "'" << attr << "' has " << out.size() << " entries for " << count << " values";
  return out;
}

// The permutation that moves axis `from` of a rank-r value to position `to`.
std::vector<int64_t> move_axis(int64_t rank, int64_t from, int64_t to) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != from) perm.push_back(d);
  perm.insert(perm.begin() + to, from);
  return perm;
}

}  // namespace

// A Scan node over body with inputs (states, scans, captured) and the given attributes.
std::vector<Value*> add_scan(AdaptContext& c, std::shared_ptr<graph::Graph> body, std::vector<Value*> inputs,
                             graph::Attrs attrs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < body->outputs().size(); ++i) names.push_back(c.graph.unique_name(c.name + "/scan"));
  graph::Node* scan = c.graph.add_node("Scan", c.graph.unique_name(c.name + "/scan"), std::move(inputs),
                                       names, std::move(attrs));
  scan->body = std::move(body);
  infer_and_fold(*scan, c.fold_constants);
  return scan->outputs;
}

namespace {

void adapt_scan(AdaptContext& c) {
  if (c.opset < 9) return adapt_scan8(c);
  const int64_t scans = c.int_attr("num_scan_inputs", 0);
  TESSEL_USER_CHECK(scans >= 1 && size_t(scans) <= c.inputs.size(), c.span())
      << "needs at least one scan input to know its length, got num_scan_inputs " << scans;
  const size_t states = c.inputs.size() - size_t(scans);
  std::vector<int64_t> in_axes = ints_attr(c, "scan_input_axes", size_t(scans));
  std::vector<int64_t> in_dirs = ints_attr(c, "scan_input_directions", size_t(scans));
  std::vector<Value*> inputs(c.inputs.begin(), c.inputs.begin() + long(states));
  std::vector<graph::TensorType> types;
  for (Value* s : inputs) types.push_back(s->type);
  int64_t length = -1;
  for (int64_t k = 0; k < scans; ++k) {
    Value* x = c.required_input(states + size_t(k), "scan input");
    TESSEL_USER_CHECK(x->type.rank_known, c.span()) << "scan input " << k << " needs a known rank";
    int64_t rank = x->type.rank();
    int64_t axis = c.normalized_axis(in_axes[size_t(k)], rank, "scan_input_axes entry");
    if (axis != 0) x = c.transpose(x, move_axis(rank, axis, 0));
    int64_t n = c.static_dim(x, 0, "a scan input");
    TESSEL_USER_CHECK(length < 0 || n == length, c.span())
        << "scan inputs of " << length << " and " << n << " slices along their scan axes";
    length = n;
    graph::TensorType slice = x->type;
    slice.dims.erase(slice.dims.begin());
    types.push_back(slice);
    inputs.push_back(x);
  }
  TESSEL_USER_CHECK(length >= 1, c.span()) << "scans 0 slices: its outputs would be empty";
  std::vector<Value*> captured;
  std::shared_ptr<graph::Graph> body = c.import_subgraph("body", types, captured);
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  TESSEL_USER_CHECK(body->outputs().size() >= states && body->outputs().size() == c.output_names.size(),
                    c.span())
      << "its body returns " << body->outputs().size() << " values for " << states << " states and "
      << c.output_names.size() << " outputs";
  const size_t scan_outputs = body->outputs().size() - states;
  std::vector<int64_t> out_axes = ints_attr(c, "scan_output_axes", scan_outputs);
  std::vector<int64_t> out_dirs = ints_attr(c, "scan_output_directions", scan_outputs);
  graph::Attrs attrs;
  attrs.set("length", length);
  attrs.set("num_states", int64_t(states));
  attrs.set("num_scan_inputs", scans);
  attrs.set("reverse_inputs", in_dirs);
  attrs.set("reverse_outputs", out_dirs);
  std::vector<Value*> results = add_scan(c, body, inputs, std::move(attrs));
  for (size_t k = 0; k < scan_outputs; ++k) {
    Value*& y = results[states + k];
    int64_t axis = c.normalized_axis(out_axes[k], y->type.rank(), "scan_output_axes entry");
    if (axis != 0) y = c.transpose(y, move_axis(y->type.rank(), 0, axis));
  }
  c.results = results;
}

// Whether the body's condition output is true at every iteration: a true
// constant, or the condition it was given (which starts true).
bool never_exits_early(const graph::Graph& body) {
  const Value* next = body.outputs()[0];
  while (next->producer && next->producer->op == "Identity") next = next->producer->inputs[0];
  if (next == body.inputs()[1]) return true;
  return next->is_constant() && next->constant->numel() == 1 && next->constant->get_f64(0) != 0;
}

// A loop whose body's shapes depend on the iteration number (a slice at the
// iteration) is unrolled when it is short: each copy sees its iteration as a
// constant, so its shapes become static.
constexpr int64_t kMaxUnrolledTrips = 64;
// A counted loop's iteration numbers are a constant of this many entries at
// most; a longer loop counts them as a while loop does.
constexpr uint64_t kMaxCountedTrips = uint64_t(1) << 20;

// Whether every loop-carried value keeps its type and the scan outputs are static.
bool keeps_its_types(const graph::Graph& body, size_t carried) {
  for (size_t j = 0; j < carried; ++j)
    if (!(body.outputs()[1 + j]->type == body.inputs()[2 + j]->type)) return false;
  for (size_t k = 1 + carried; k < body.outputs().size(); ++k)
    if (!body.outputs()[k]->type.is_static()) return false;
  return true;
}

std::string describe_types(const graph::Graph& body, size_t carried) {
  std::string out;
  for (size_t k = 1; k < body.outputs().size(); ++k)
    out += (out.empty() ? "" : ", ") + body.outputs()[k]->name + ": " + body.outputs()[k]->type.str() +
           (k <= carried ? " from " + body.inputs()[1 + k]->type.str() : "");
  return out;
}

// Whether an unrolled copy's condition output is true for sure: the
// condition it was given (`yes`), or a true constant.
bool stays_true(const OnnxValue& cond, const Value* yes) {
  const Value* v = cond.is_tensor() ? cond.tensor : nullptr;
  while (v && v->producer && v->producer->op == "Identity") v = v->producer->inputs[0];
  return v && (v == yes || (v->is_constant() && v->constant->numel() == 1 && v->constant->get_f64(0) != 0));
}

// The loop's body inlined once per iteration. Its loop-carried values may be
// sequences or optionals, which change structure from one iteration to the
// next (a sequence growing by an element each time).
void unroll_loop(AdaptContext& c, int64_t trips, std::vector<OnnxValue> carried, size_t scan_outputs) {
  std::vector<std::vector<Value*>> slices(scan_outputs);
  Value* yes = c.constant(Tensor::scalar_f64(DType::kBool, 1));
  for (int64_t i = 0; i < trips; ++i) {
    std::vector<OnnxValue> inputs{OnnxValue::of(c.constant(Tensor::from_i64({i}, {}))), OnnxValue::of(yes)};
    inputs.insert(inputs.end(), carried.begin(), carried.end());
    std::vector<OnnxValue> outs = c.inline_subgraph_values("body", inputs);
    TESSEL_USER_CHECK(outs.size() == 1 + carried.size() + scan_outputs, c.span())
        << "its body returns " << outs.size() << " values for a condition, " << carried.size()
        << " loop-carried ones and " << scan_outputs << " scan outputs";
    TESSEL_USER_CHECK(stays_true(outs[0], yes), c.span())
        << "its body computes the condition that ends it (a while loop): the sizes of its outputs would "
           "depend on the data, which is not supported";
    for (size_t j = 0; j < carried.size(); ++j) carried[j] = outs[1 + j];
    for (size_t k = 0; k < scan_outputs; ++k) {
      const OnnxValue& out = outs[1 + carried.size() + k];
      TESSEL_USER_CHECK(out.is_tensor(), c.span()) << "its scan output " << k << " is " << out.describe();
      slices[k].push_back(c.emit("Unsqueeze", {out.tensor, c.i64_vector({0})})[0]);
    }
  }
  std::vector<OnnxValue> results = carried;
  for (size_t k = 0; k < scan_outputs; ++k) {
    TESSEL_USER_CHECK(trips > 0, c.span()) << "runs 0 times: the shape of scan output " << k << " is unknown";
    results.push_back(OnnxValue::of(
        slices[k].size() == 1 ? slices[k][0] : c.emit("Concat", slices[k], one_attr("axis", int64_t(0)))[0]));
  }
  c.structured_results = results;
}

// Loop's trip count M when known while compiling; nullopt when omitted or
// known only at run time.
std::optional<int64_t> known_trip_count(AdaptContext& c) {
  if (!c.input_or_null(0)) return std::nullopt;
  const Tensor* trips = c.constant_input(0);
  if (!trips) return std::nullopt;
  TESSEL_USER_CHECK(trips->numel() == 1, c.span()) << "the trip count must hold one element";
  TESSEL_USER_CHECK(trips->get_i64(0) >= 0, c.span()) << "a trip count of " << trips->get_i64(0);
  return trips->get_i64(0);
}

// Loop's first condition when known while compiling (true when omitted).
std::optional<bool> known_first_condition(AdaptContext& c) {
  if (!c.input_or_null(1)) return true;
  const Tensor* start = c.constant_input(1);
  if (!start) return std::nullopt;
  TESSEL_USER_CHECK(start->numel() == 1, c.span()) << "the condition must hold one element";
  return start->get_f64(0) != 0;
}

// A Loop that runs no iteration: its carried values, and empty scan outputs.
void no_iterations(AdaptContext& c, const graph::Graph& body, const std::vector<Value*>& carried) {
  std::vector<Value*> results = carried;
  for (size_t k = 1 + carried.size(); k < body.outputs().size(); ++k) {
    const graph::TensorType& t = body.outputs()[k]->type;
    TESSEL_USER_CHECK(t.is_static(), c.span())
        << "scan output " << k - 1 - carried.size() << " needs a static shape, got " << t.str();
    Dims shape = t.static_dims();
    shape.insert(shape.begin(), 0);
    results.push_back(c.constant(Tensor(t.dtype, shape)));
  }
  c.results = results;
}

// Loop-11/13/16. With its trip count and first condition known while
// compiling and a body that never ends it early: a Scan of that many
// iterations, the iteration number a scanned input. Otherwise a while loop
// (control_flow.h). A body whose shapes follow the iteration, or a loop
// carrying a sequence, is unrolled.
void adapt_loop(AdaptContext& c) {
  TESSEL_USER_CHECK(c.inputs.size() >= 2 && c.output_names.size() + 2 >= c.inputs.size(), c.span())
      << "takes M, cond (either may be empty) and the loop-carried values, and gives an output per carried "
         "value: got "
      << c.inputs.size() << " inputs and " << c.output_names.size() << " outputs";
  for (size_t k = 2; k < c.onnx_inputs.size(); ++k)
    TESSEL_USER_CHECK(c.onnx_inputs[k].given(), c.span()) << "loop-carried value " << k - 2 << " is omitted";
  std::optional<int64_t> trip_count = known_trip_count(c);
  std::optional<bool> first = known_first_condition(c);
  if (trip_count && first == false) trip_count = 0;
  if (c.any_structured_input()) {
    TESSEL_USER_CHECK(trip_count && first, c.span())
        << "needs a trip count M and a first condition known while compiling: it carries a sequence or an "
           "optional, so it is unrolled while compiling";
    TESSEL_USER_CHECK(*trip_count <= kMaxUnrolledTrips, c.span())
        << "carries a sequence or an optional, so it is unrolled while compiling, and " << *trip_count
        << " iterations are too many to unroll (at most " << kMaxUnrolledTrips << ")";
    std::vector<OnnxValue> carried(c.onnx_inputs.begin() + 2, c.onnx_inputs.end());
    return unroll_loop(c, *trip_count, carried, c.output_names.size() - carried.size());
  }
  std::vector<Value*> carried(c.inputs.begin() + 2, c.inputs.end());
  std::vector<graph::TensorType> types{graph::TensorType(DType::kI64, {}),
                                       graph::TensorType(DType::kBool, {})};
  for (Value* v : carried) types.push_back(v->type);
  std::vector<Value*> captured;
  std::shared_ptr<graph::Graph> body = c.import_subgraph("body", types, captured);
  TESSEL_USER_CHECK(
      body->outputs().size() >= 1 + carried.size() && body->outputs().size() - 1 == c.output_names.size(),
      c.span())
      << "its body returns " << body->outputs().size() << " values for a condition, " << carried.size()
      << " loop-carried ones and " << c.output_names.size() << " outputs in all";
  const size_t scan_outputs = body->outputs().size() - 1 - carried.size();
  if (trip_count == 0) return no_iterations(c, *body, carried);
  bool counted = trip_count && first && never_exits_early(*body) && uint64_t(*trip_count) <= kMaxCountedTrips;
  if (!keeps_its_types(*body, carried.size())) {
    TESSEL_USER_CHECK(counted && *trip_count <= kMaxUnrolledTrips, c.span())
        << "the shapes in its body depend on the iteration (" << describe_types(*body, carried.size())
        << "), so it is unrolled, which needs a trip count known while compiling, no early exit and at most "
        << kMaxUnrolledTrips << " iterations";
    std::vector<OnnxValue> carried_values;
    for (Value* v : carried) carried_values.push_back(OnnxValue::of(v));
    return unroll_loop(c, *trip_count, carried_values, scan_outputs);
  }
  if (!counted) {
    c.results = while_loop(c, std::move(body), captured, carried, scan_outputs, trip_count);
    return;
  }
  std::vector<Value*> order(body->inputs().begin() + 1, body->inputs().end());  // condition, carried, ...
  order.insert(order.begin() + long(1 + carried.size()),
               body->inputs()[0]);  // ... the iteration number, captured
  body->set_inputs(order);
  std::vector<int64_t> iterations;
  for (int64_t i = 0; i < *trip_count; ++i) iterations.push_back(i);
  std::vector<Value*> inputs{c.constant(Tensor::scalar_f64(DType::kBool, 1))};
  inputs.insert(inputs.end(), carried.begin(), carried.end());
  inputs.push_back(c.i64_vector(iterations));
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  graph::Attrs attrs;
  attrs.set("length", *trip_count);
  attrs.set("num_states", int64_t(1 + carried.size()));
  attrs.set("num_scan_inputs", int64_t(1));
  std::vector<Value*> results = add_scan(c, body, inputs, std::move(attrs));
  c.results = std::vector<Value*>(results.begin() + 1, results.end());
}

// One branch of an If as a Scan that runs once when `cond` is (run_when 1) or
// is not (-1) true; its states are the If's outputs, `initial` when it does
// not run. The branch comes from import_subgraph: its state inputs (unread)
// and the condition are added around what it captures.
std::vector<Value*> conditional_branch(AdaptContext& c, std::shared_ptr<graph::Graph> branch,
                                       const std::vector<Value*>& captured, Value* cond, int64_t run_when,
                                       const std::vector<Value*>& initial) {
  std::vector<Value*> order;
  for (size_t j = 0; j < initial.size(); ++j)
    order.push_back(branch->add_input("state" + std::to_string(j), initial[j]->type));
  order.insert(order.end(), branch->inputs().begin(), branch->inputs().end() - long(initial.size()));
  order.push_back(branch->add_input("condition", cond->type));
  branch->set_inputs(order);
  std::vector<Value*> inputs = initial;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  inputs.push_back(cond);
  graph::Attrs attrs;
  attrs.set("length", int64_t(1));
  attrs.set("num_states", int64_t(initial.size()));
  attrs.set("num_scan_inputs", int64_t(0));
  attrs.set("run_when", run_when);
  return add_scan(c, std::move(branch), inputs, std::move(attrs));
}

// If with a condition known only at run time: the then branch runs when it
// holds, over zeros, and the else branch when it does not, over the then
// branch's results. Both must give outputs of the same static types.
std::vector<Value*> run_time_if(AdaptContext& c, Value* cond) {
  TESSEL_USER_CHECK(cond->type.dtype == DType::kBool && cond->type.numel() == std::optional<int64_t>(1),
                    c.span())
      << "the condition must be one bool, got " << cond->type.str();
  if (cond->type.rank() != 0) cond = c.emit("Reshape", {cond, c.i64_vector({})})[0];
  std::vector<Value*> then_captured, else_captured;
  std::shared_ptr<graph::Graph> then_branch = c.import_subgraph("then_branch", {}, then_captured);
  std::shared_ptr<graph::Graph> else_branch = c.import_subgraph("else_branch", {}, else_captured);
  TESSEL_USER_CHECK(then_branch->outputs().size() == c.output_names.size() &&
                        else_branch->outputs().size() == c.output_names.size(),
                    c.span())
      << "its branches return " << then_branch->outputs().size() << " and " << else_branch->outputs().size()
      << " values for " << c.output_names.size() << " outputs";
  std::vector<Value*> zeros;
  for (size_t j = 0; j < c.output_names.size(); ++j) {
    const graph::TensorType& t = then_branch->outputs()[j]->type;
    const graph::TensorType& e = else_branch->outputs()[j]->type;
    TESSEL_USER_CHECK(t.is_static() && t == e, c.span())
        << "output " << j << " is " << t.str() << " in the then branch and " << e.str()
        << " in the else branch: choosing at run time needs one static type";
    zeros.push_back(c.constant(Tensor(t.dtype, t.static_dims())));
  }
  std::vector<Value*> then_results = conditional_branch(c, then_branch, then_captured, cond, 1, zeros);
  return conditional_branch(c, else_branch, else_captured, cond, -1, then_results);
}

// If: with a condition known while compiling, the chosen branch's nodes
// inlined; otherwise both branches as conditional Scans.
void adapt_if(AdaptContext& c) {
  Value* cond_value = c.required_input(0, "cond");
  const Tensor* cond = c.constant_input(0);
  if (cond == nullptr) {
    c.results = run_time_if(c, cond_value);
    return;
  }
  TESSEL_USER_CHECK(cond->numel() == 1, c.span())
      << "the condition must hold one element, got " << cond->type_str();
  std::vector<OnnxValue> results =
      c.inline_subgraph_values(cond->get_f64(0) != 0 ? "then_branch" : "else_branch", {});
  TESSEL_USER_CHECK(results.size() == c.output_names.size(), c.span())
      << "its branch returns " << results.size() << " values for " << c.output_names.size() << " outputs";
  c.structured_results = results;
}

}  // namespace

void register_control_adapters(AdapterTable& t) {
  t["Scan"] = adapt_scan;
  t["Loop"] = adapt_loop;
  t["If"] = adapt_if;
}

}  // namespace tessel::onnx_frontend
