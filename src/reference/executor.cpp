// Node-by-node interpretation of a graph with the reference kernels.
#include "src/reference/executor.h"

#include <cstring>
#include <unordered_map>

#include "ir/graph/op_registry.h"
#include "src/reference/kernel_registry.h"
#include "src/runtime/data_dependent.h"

namespace tessel::reference {

std::vector<Tensor> evaluate_node(const graph::Node& node, const std::vector<const Tensor*>& inputs) {
  const graph::OpSchema* schema = graph::OpRegistry::global().find(node.op);
  TESSEL_USER_CHECK(schema != nullptr, node.span()) << "unsupported op '" << node.op << "'";
  std::vector<graph::TensorType> types;
  types.reserve(inputs.size());
  for (const Tensor* t : inputs)
    types.push_back(t ? graph::TensorType(t->dtype(), t->shape()) : graph::TensorType());
  std::vector<const graph::TensorType*> type_ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) type_ptrs.push_back(inputs[i] ? &types[i] : nullptr);
  graph::InferContext ctx(node, type_ptrs, inputs);
  schema->infer(ctx);

  std::vector<Tensor> outputs;
  for (size_t i = 0; i < ctx.output_types.size(); ++i) {
    const graph::TensorType& t = ctx.output_types[i];
    TESSEL_ICHECK(t.is_static()) << "shape function of " << node.op << " left output " << i
                                 << " unknown on concrete inputs: " << t.str();
    outputs.emplace_back(t.dtype, t.static_dims());
  }
  const Kernel* kernel = KernelRegistry::global().find(node.op);
  TESSEL_USER_CHECK(kernel != nullptr, node.span())
      << "op '" << node.op << "' has no reference kernel";
  (*kernel)(node, inputs, outputs);
  return outputs;
}

void check_input(const graph::Value& declared, const Tensor& given) {
  const graph::TensorType& want = declared.type;
  TESSEL_USER_CHECK(given.dtype() == want.dtype, Span{})
      << "input '" << declared.name << "' must be " << dtype_name(want.dtype) << ", got "
      << dtype_name(given.dtype());
  if (!want.rank_known) return;
  bool ok = given.rank() == want.rank();
  for (int i = 0; ok && i < want.rank(); ++i) {
    const graph::Dim& d = want.dims[size_t(i)];
    ok = !d.is_known() || d.value == given.shape()[size_t(i)];
  }
  TESSEL_USER_CHECK(ok, Span{}) << "input '" << declared.name << "' must have shape "
                                << want.str() << ", got " << dims_str(given.shape());
}

Executor::Executor(const graph::Graph& g) : graph_(g) {}

std::vector<Tensor> Executor::run(const std::vector<Tensor>& inputs, const NodeObserver& observe) const {
  const auto& graph_inputs = graph_.inputs();
  TESSEL_USER_CHECK(inputs.size() == graph_inputs.size(), Span{})
      << "the model takes " << graph_inputs.size() << " inputs, got " << inputs.size();
  std::unordered_map<const graph::Value*, Tensor> env;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_input(*graph_inputs[i], inputs[i]);
    env[graph_inputs[i]] = inputs[i];
  }
  // Remaining reads of each value, so intermediates are freed after their last use.
  std::unordered_map<const graph::Value*, int> reads;
  for (const graph::Node* n : graph_.nodes())
    for (const graph::Value* in : n->inputs)
      if (in) ++reads[in];
  for (const graph::Value* out : graph_.outputs()) ++reads[out];

  auto lookup = [&](const graph::Value* v) -> const Tensor* {
    auto it = env.find(v);
    if (it != env.end()) return &it->second;
    TESSEL_ICHECK(v->is_constant()) << "%" << v->name << " has no value";
    return &*v->constant;
  };
  for (const graph::Node* n : graph_.nodes()) {
    std::vector<const Tensor*> args;
    for (const graph::Value* in : n->inputs) args.push_back(in ? lookup(in) : nullptr);
    std::vector<Tensor> results = evaluate_node(*n, args);
    if (observe) observe(*n, results);
    for (const graph::Value* in : n->inputs)
      if (in && --reads[in] == 0) env.erase(in);
    for (size_t i = 0; i < results.size(); ++i)
      if (reads[n->outputs[i]] > 0) env[n->outputs[i]] = std::move(results[i]);
  }
  std::vector<Tensor> outputs;
  for (const graph::Value* out : graph_.outputs()) outputs.push_back(*lookup(out));
  return user_outputs(graph_, std::move(outputs));
}

std::vector<Tensor> user_outputs(const graph::Graph& g, std::vector<Tensor> all) {
  TESSEL_ICHECK(all.size() == g.outputs().size())
      << all.size() << " outputs for a graph of " << g.outputs().size();
  size_t users = g.num_user_outputs();
  for (size_t k = 0; k < g.data_dependent_dims.size(); ++k) {
    const graph::DataDependentDim& d = g.data_dependent_dims[k];
    Tensor& t = all[d.output];
    int64_t size = all[users + k].get_i64(0);
    TESSEL_ICHECK(size >= 0 && size <= t.shape().at(size_t(d.axis)))
        << "output " << d.output << " has " << size << " entries along axis " << d.axis << " of "
        << t.type_str();
    Dims cut = t.shape();
    cut[size_t(d.axis)] = size;
    Tensor dense = t.clone();
    rt::compact_along_axis(dense.raw(), dense.shape(), dtype_size(dense.dtype()), size_t(d.axis), size);
    Tensor result(t.dtype(), cut);
    if (result.nbytes()) std::memcpy(result.raw(), dense.raw(), result.nbytes());
    t = std::move(result);
  }
  all.resize(users);
  return all;
}

}  // namespace tessel::reference
