// While loops: ONNX's Loop when a run decides how many iterations it makes.
// The graph's Scan checks its while_state before each iteration; the
// iteration number becomes a state the body advances, and a trip count M
// known only at run time joins the condition (i + 1 < M). What the loop
// stacks per iteration is allocated at its bound and handed out cut to the
// iterations that ran (runtime_extents.h), as NonZero's outputs are.
#include <limits>

#include "ir/graph/op_registry.h"
#include "src/frontend/onnx/control_flow.h"

namespace tessel::onnx_frontend {

using graph::Value;

namespace {

// The most bytes a while loop's stacked scan outputs may take at their bound.
constexpr int64_t kMaxStackedBytes = int64_t(1) << 30;

Value* add_body_node(graph::Graph& body, const std::string& op, std::vector<Value*> inputs,
                     graph::Attrs attrs = {}) {
  std::string name = body.unique_name("while/" + op);
  graph::Node* n = body.add_node(op, name, std::move(inputs), {name}, std::move(attrs));
  graph::infer_node(*n);
  return n->outputs[0];
}

// v as a scalar (ONNX allows a trip count or a condition of shape [1]).
Value* scalar(AdaptContext& c, Value* v) {
  TESSEL_USER_CHECK(v->type.numel() == std::optional<int64_t>(1), c.span())
      << "a trip count and a condition hold one element, got " << v->type.str();
  return v->type.rank() == 0 ? v : c.emit("Reshape", {v, c.i64_vector({})})[0];
}

void check_scan_outputs(AdaptContext& c, const graph::Graph& body, size_t first, size_t count,
                        std::optional<int64_t> bound) {
  for (size_t k = 0; k < count; ++k) {
    const graph::TensorType& t = body.outputs()[first + k]->type;
    std::optional<int64_t> bytes = t.numel();
    TESSEL_USER_CHECK(bound.has_value(), c.span())
        << "stacks scan output " << k
        << " in a loop whose number of iterations nothing bounds (no trip count "
        << "known while compiling): its size would have no bound";
    TESSEL_USER_CHECK(
        bytes && *bytes * int64_t(dtype_size(t.dtype)) <= kMaxStackedBytes / std::max<int64_t>(*bound, 1),
        c.span())
        << "stacks scan output " << k << " (" << t.str() << ") over up to " << *bound
        << " iterations, more than " << kMaxStackedBytes << " bytes at that bound";
  }
}

}  // namespace

std::vector<Value*> while_loop(AdaptContext& c, std::shared_ptr<graph::Graph> body,
                               const std::vector<Value*>& captured, const std::vector<Value*>& carried,
                               size_t scan_outputs, std::optional<int64_t> trip_count) {
  const size_t n_carried = carried.size();
  check_scan_outputs(c, *body, 1 + n_carried, scan_outputs, trip_count);
  Value* run_time_trips = trip_count || !c.input_or_null(0) ? nullptr : scalar(c, c.inputs[0]);
  std::vector<Value*> declared(body->inputs().begin(), body->inputs().begin() + long(2 + n_carried));
  std::vector<Value*> body_captures(body->inputs().begin() + long(2 + n_carried), body->inputs().end());
  Value* iteration = declared[0];
  Value* next_iteration = add_body_node(
      *body, "Add", {iteration, body->add_constant(body->unique_name("one"), Tensor::from_i64({1}, {}))});
  Value* next_condition = body->outputs()[0];
  if (next_condition->type.rank() != 0)
    next_condition = add_body_node(
        *body, "Reshape",
        {next_condition, body->add_constant(body->unique_name("scalar"), Tensor::from_i64({}, {0}))});
  Value* first_condition = c.input_or_null(1) ? scalar(c, c.inputs[1]) : c.scalar(DType::kBool, 1);
  if (run_time_trips) {
    Value* m = run_time_trips;
    Value* m_inside = body->add_input(body->unique_name("trip_count"), m->type);
    body_captures.push_back(m_inside);
    next_condition = add_body_node(
        *body, "And", {next_condition, add_body_node(*body, "Less", {next_iteration, m_inside})});
    first_condition = c.emit("And", {first_condition, c.emit("Less", {c.scalar(DType::kI64, 0), m})[0]})[0];
  }
  // States: the condition, the iteration number, the carried values.
  std::vector<Value*> order{declared[1], iteration};
  order.insert(order.end(), declared.begin() + 2, declared.end());
  order.insert(order.end(), body_captures.begin(), body_captures.end());
  body->set_inputs(order);
  std::vector<Value*> outputs{next_condition, next_iteration};
  outputs.insert(outputs.end(), body->outputs().begin() + 1, body->outputs().end());
  body->set_outputs(outputs);

  std::vector<Value*> inputs{first_condition, c.scalar(DType::kI64, 0)};
  inputs.insert(inputs.end(), carried.begin(), carried.end());
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  if (run_time_trips) inputs.push_back(run_time_trips);
  graph::Attrs attrs;
  attrs.set("length", trip_count ? *trip_count : std::numeric_limits<int64_t>::max());
  attrs.set("num_states", int64_t(2 + n_carried));
  attrs.set("num_scan_inputs", int64_t(0));
  attrs.set("while_state", int64_t(0));
  std::vector<Value*> results = add_scan(c, std::move(body), inputs, std::move(attrs));
  Value* iterations = results[1];
  std::vector<Value*> loop_outputs(results.begin() + 2, results.end());
  for (size_t k = n_carried; k < loop_outputs.size(); ++k)
    loop_outputs[k] = c.data_dependent(loop_outputs[k], 0, iterations);
  return loop_outputs;
}

}  // namespace tessel::onnx_frontend
