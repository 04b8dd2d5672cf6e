// The tensor IR executor: an environment of tensors per graph value, filled
// by the graph inputs, the constants and each group's interpreted PrimFunc.
#include "src/driver/tir_runner.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph/op_registry.h"
#include "ir/tensor/interpreter.h"
#include "src/driver/compile_model.h"
#include "src/frontend/onnx/adapters.h"
#include "src/reference/executor.h"
#include "src/reference/scan.h"

namespace tessel::driver {

TirExecutor::TirExecutor(const graph::Graph& g, passes::FusionPolicy fusion)
    : TirExecutor(g, fusion, layout_choices(CompileOptions{})) {}

TirExecutor::TirExecutor(const graph::Graph& g, passes::FusionPolicy fusion,
                         const lower::LayoutChoices& layouts)
    : graph_(g) {
  for (const passes::NodeGroup& group : passes::make_grouping_policy(fusion)->group(g)) {
    const graph::Node* scan = group.nodes.front();
    if (!scan->body) {
      groups_.push_back(lower::lower_group_with_bindings(g, group, layouts));
      continue;
    }
    groups_.push_back(lower::LoweredGroup{
        group, {}, {scan->inputs.begin(), scan->inputs.end()}, {scan->outputs.begin(), scan->outputs.end()}});
    bodies_[scan] = std::make_shared<TirExecutor>(*scan->body, fusion, layouts);
  }
}

// A lowered group's function interpreted, or a Scan's loop over its body's executor.
std::vector<Tensor> TirExecutor::run_group(const lower::LoweredGroup& group,
                                           const std::vector<Tensor>& args) const {
  if (!group.func) {
    const graph::Node* scan = group.group.nodes.front();
    std::vector<const Tensor*> arg_ptrs;
    for (const Tensor& t : args) arg_ptrs.push_back(&t);
    const TirExecutor& body = *bodies_.at(scan);
    return reference::run_scan(*scan, arg_ptrs, [&](const std::vector<Tensor>& in) { return body.run(in); });
  }
  try {
    return tir::interpret(group.func, args);
  } catch (const tir::InterpreterError& e) {
    throw tir::InterpreterError("group " + group.group.name + ": " + e.what());
  }
}

std::vector<Tensor> TirExecutor::run(const std::vector<Tensor>& inputs) const {
  const auto& graph_inputs = graph_.inputs();
  TESSEL_USER_CHECK(inputs.size() == graph_inputs.size(), Span{})
      << "the model takes " << graph_inputs.size() << " inputs, got " << inputs.size();
  std::unordered_map<const graph::Value*, Tensor> env;
  for (size_t i = 0; i < inputs.size(); ++i) {
    reference::check_input(*graph_inputs[i], inputs[i]);
    env[graph_inputs[i]] = inputs[i];
  }
  auto lookup = [&](const graph::Value* v) -> const Tensor& {
    auto it = env.find(v);
    if (it != env.end()) return it->second;
    TESSEL_ICHECK(v->is_constant()) << "%" << v->name << " has no value before it is read";
    return *v->constant;
  };
  for (const lower::LoweredGroup& group : groups_) {
    std::vector<Tensor> args;
    for (const graph::Value* v : group.inputs) args.push_back(lookup(v));
    std::vector<Tensor> results = run_group(group, args);
    TESSEL_ICHECK(results.size() == group.outputs.size())
        << "group " << group.group.name << " returned " << results.size() << " tensors";
    for (size_t i = 0; i < results.size(); ++i) env[group.outputs[i]] = std::move(results[i]);
  }
  std::vector<Tensor> outputs;
  for (const graph::Value* out : graph_.outputs()) outputs.push_back(lookup(out));
  return reference::user_outputs(graph_, std::move(outputs));
}

namespace {

// Whether a type that is not static lies downstream of the input.
bool decides_a_shape(const graph::Graph& g, const graph::Value* input) {
  if (!is_integer(input->type.dtype) || input->type.rank() > 1) return false;  // shape parameters are lists
  std::vector<const graph::Value*> worklist{input};
  std::unordered_set<const graph::Node*> seen;
  while (!worklist.empty()) {
    const graph::Value* v = worklist.back();
    worklist.pop_back();
    for (const graph::Node* n : graph::users_of(g, v)) {
      if (!seen.insert(n).second) continue;
      for (const graph::Value* out : n->outputs) {
        if (out && !(out->type.rank_known && out->type.is_static())) return true;
        if (out) worklist.push_back(out);
      }
    }
  }
  return false;
}

// Infers every type again and folds what became constant, except the graph's
// results: those the target computes, so that a case still tests its ops.
void refold(graph::Graph& g) {
  std::unordered_set<const graph::Value*> results(g.outputs().begin(), g.outputs().end());
  auto folded = [](const graph::Node& n) {
    for (const graph::Value* out : n.outputs)
      if (out && !out->is_constant()) return false;
    return true;
  };
  for (graph::Node* n : g.nodes()) {  // in graph order: producers first
    bool returns_a_result = std::any_of(n->outputs.begin(), n->outputs.end(),
                                        [&](const graph::Value* v) { return results.count(v) > 0; });
    onnx_frontend::infer_and_fold(*n, !returns_a_result);
    if (folded(*n))
      for (graph::Value* out : n->outputs) out->producer = nullptr;
  }
  g.remove_nodes_if(folded);
  g.remove_unused_values();
}

}  // namespace

int bind_shape_inputs(graph::Graph& g, const std::vector<Tensor>& inputs) {
  int bound = 0;
  const std::vector<graph::Value*> graph_inputs = g.inputs();
  for (size_t i = 0; i < graph_inputs.size() && i < inputs.size(); ++i) {
    graph::Value* v = graph_inputs[i];
    if (!decides_a_shape(g, v) || inputs[i].dtype() != v->type.dtype) continue;
    reference::check_input(*v, inputs[i]);
    g.replace_uses(v, g.add_constant(v->name, inputs[i]));
    ++bound;
  }
  if (bound > 0) refold(g);
  return bound;
}

std::vector<Tensor> run_reference(const graph::Graph& g, const std::vector<Tensor>& inputs) {
  return reference::Executor(g).run(inputs);
}

}  // namespace tessel::driver
