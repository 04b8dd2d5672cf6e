// The Scan op's schema and shape function (ir/graph/scan.h): the body's
// interface must agree with the node's inputs, and the outputs are the
// body's, the scan outputs stacked along a new axis of `length`.
#include <algorithm>

#include "ir/graph/op_registry.h"
#include "ir/graph/ops/register.h"
#include "ir/graph/scan.h"

namespace tessel::graph {

namespace {

std::vector<bool> directions(const Node& n, const char* attr, size_t count) {
  const std::vector<int64_t>& given = n.attrs.get_ints(attr);
  TESSEL_USER_CHECK(given.empty() || given.size() == count, n.span())
      << "'" << attr << "' has " << given.size() << " entries for " << count << " values";
  std::vector<bool> out(count, false);
  for (size_t i = 0; i < given.size(); ++i) {
    TESSEL_USER_CHECK(given[i] == 0 || given[i] == 1, n.span()) << "'" << attr << "' entries must be 0 or 1";
    out[i] = given[i] == 1;
  }
  return out;
}

}  // namespace

ScanLayout scan_layout(const Node& n) {
  TESSEL_USER_CHECK(n.body != nullptr, n.span()) << "Scan has no body";
  const Graph& body = *n.body;
  ScanLayout l;
  l.length = n.attrs.get_int("length");
  int64_t states = n.attrs.get_int("num_states"), scans = n.attrs.get_int("num_scan_inputs");
  TESSEL_USER_CHECK(l.length >= 1, n.span()) << "a Scan must run at least once, got length " << l.length;
  TESSEL_USER_CHECK(states >= 0 && scans >= 0 && size_t(states + scans) <= n.inputs.size(), n.span())
      << "num_states " << states << " and num_scan_inputs " << scans << " do not fit " << n.inputs.size()
      << " inputs";
  l.num_states = size_t(states);
  l.num_scan_inputs = size_t(scans);
  l.num_captures = n.inputs.size() - l.num_states - l.num_scan_inputs;
  TESSEL_USER_CHECK(body.inputs().size() == n.inputs.size(), n.span())
      << "the body takes " << body.inputs().size() << " inputs, the node gives " << n.inputs.size();
  TESSEL_USER_CHECK(body.outputs().size() >= l.num_states && body.outputs().size() == n.outputs.size(),
                    n.span())
      << "the body returns " << body.outputs().size() << " values for " << n.outputs.size() << " outputs";
  l.num_scan_outputs = body.outputs().size() - l.num_states;
  l.reverse_inputs = directions(n, "reverse_inputs", l.num_scan_inputs);
  l.reverse_outputs = directions(n, "reverse_outputs", l.num_scan_outputs);
  int64_t run_when = n.attrs.get_int("run_when");
  TESSEL_USER_CHECK(run_when >= -1 && run_when <= 1, n.span())
      << "run_when must be -1, 0 or 1, got " << run_when;
  l.run_when = int(run_when);
  if (l.run_when != 0) {
    TESSEL_USER_CHECK(l.length == 1 && l.num_scan_outputs == 0 && l.num_captures >= 1, n.span())
        << "a conditional Scan runs once, has no scan outputs and captures its condition";
    const graph::Value* cond = n.inputs.back();
    TESSEL_USER_CHECK(
        cond && cond->type.dtype == DType::kBool && cond->type.rank_known && cond->type.rank() == 0, n.span())
        << "the condition of a conditional Scan must be a bool scalar, got "
        << (cond ? cond->type.str() : "none");
  }
  l.while_state = n.attrs.get_int("while_state");
  if (l.while_state != -1) {
    TESSEL_USER_CHECK(l.while_state >= 0 && size_t(l.while_state) < l.num_states && l.run_when == 0, n.span())
        << "while_state " << l.while_state << " must name one of the " << l.num_states
        << " states of an unconditional Scan";
    const TensorType& t = body.inputs()[size_t(l.while_state)]->type;
    TESSEL_USER_CHECK(t.dtype == DType::kBool && t.rank_known && t.rank() == 0, n.span())
        << "the state that ends a while loop must be a bool scalar, got " << t.str();
  }
  return l;
}

void for_each_graph(Graph& g, const std::function<void(Graph&)>& fn) {
  fn(g);
  for (Node* n : g.nodes())
    if (n->body) for_each_graph(*n->body, fn);
}

bool has_scan(const Graph& g) {
  for (const Node* n : g.nodes())
    if (n->body) return true;
  return false;
}

void separate_swapped_states(Graph& g) {
  for (Node* n : g.nodes()) {
    if (!n->body) continue;
    Graph& body = *n->body;
    ScanLayout l = scan_layout(*n);
    std::vector<Value*> outputs = body.outputs();
    bool changed = false;
    for (size_t j = 0; j < l.num_states; ++j) {
      auto state = std::find(body.inputs().begin(), body.inputs().begin() + long(l.num_states), outputs[j]);
      if (state == body.inputs().begin() + long(l.num_states) || state == body.inputs().begin() + long(j))
        continue;
      Node* copy =
          body.add_node("Identity", body.unique_name("carry"), {outputs[j]}, {body.unique_name("carried")});
      infer_node(*copy);
      outputs[j] = copy->outputs[0];
      changed = true;
    }
    if (changed) body.set_outputs(outputs);
  }
}

namespace {

void expect_type(const InferContext& ctx, const TensorType& have, const TensorType& want,
                 const std::string& what) {
  TESSEL_USER_CHECK(have == want, ctx.span())
      << what << " has type " << have.str() << ", the body expects " << want.str();
}

void infer_scan(InferContext& ctx) {
  const Node& n = ctx.node();
  ScanLayout l = scan_layout(n);
  const Graph& body = *n.body;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    TESSEL_USER_CHECK(ctx.has_input(i), ctx.span()) << "Scan input " << i << " is missing";
    TensorType given = ctx.input(i);
    bool scanned = i >= l.num_states && i < l.num_states + l.num_scan_inputs;
    if (scanned) {
      TESSEL_USER_CHECK(given.rank_known && given.rank() >= 1 && given.dims[0] == Dim::known(l.length),
                        ctx.span())
          << "scan input " << i - l.num_states << " has type " << given.str() << ", not " << l.length
          << " slices along axis 0";
      given.dims.erase(given.dims.begin());
    }
    expect_type(ctx, given, body.inputs()[i]->type, "input " + std::to_string(i));
  }
  for (size_t j = 0; j < l.num_states; ++j)
    expect_type(ctx, body.outputs()[j]->type, body.inputs()[j]->type,
                "the body's next state " + std::to_string(j));
  for (size_t j = 0; j < n.outputs.size(); ++j) {
    TensorType t = body.outputs()[j]->type;
    if (j >= l.num_states) t.dims.insert(t.dims.begin(), Dim::known(l.length));
    ctx.set_output(j, t);
  }
}

}  // namespace

namespace ops {

void register_control_ops(OpRegistry& r) {
  r.def("Scan", OpPattern::kOpaque)
      .inputs(0, 1 << 16)
      .outputs(1, 1 << 16)
      .attr("length", AttrType::kInt)
      .attr("num_states", AttrType::kInt)
      .attr("num_scan_inputs", AttrType::kInt)
      .attr("reverse_inputs", AttrType::kInts, std::vector<int64_t>{})
      .attr("reverse_outputs", AttrType::kInts, std::vector<int64_t>{})
      .attr("run_when", AttrType::kInt, int64_t(0))
      .attr("while_state", AttrType::kInt, int64_t(-1))
      .infer(infer_scan)
      // The body's, every iteration (an If's branch counted as if it ran; a
      // while loop, whose iterations only a run decides, once).
      .flops([](const Node& n) {
        int64_t per_iteration = 0;
        for (const Node* b : n.body->nodes()) per_iteration += node_flops(*b);
        return n.attrs.get_int("while_state") >= 0 ? per_iteration
                                                   : per_iteration * n.attrs.get_int("length");
      });
}

}  // namespace ops

}  // namespace tessel::graph
