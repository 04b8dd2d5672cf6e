// The graph verifier. Nodes are kept in topological order, so "defined
// before use" in that order also proves there is no cycle.
#include "ir/graph/verifier.h"

#include <optional>
#include <unordered_set>

#include "ir/graph/op_registry.h"

namespace tessel::graph {

namespace {

void check_types_agree(const Node& n) {
  TESSEL_ICHECK(OpRegistry::global().find(n.op) != nullptr) << "node '" << n.name << "' has unregistered op " << n.op;
  std::optional<InferContext> ctx;
  try {
    ctx.emplace(run_shape_function(n));
  } catch (const UserError& e) {
    // The graph was accepted once; a pass that breaks it is our bug.
    TESSEL_ICHECK(false) << "node '" << n.name << "' no longer type-checks: " << e.what();
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const TensorType& have = n.outputs[i]->type;
    const TensorType& want = ctx->output_types[i];
    TESSEL_ICHECK(have.dtype == want.dtype && have.rank_known == want.rank_known &&
                  (!have.rank_known || have.rank() == want.rank()))
        << "node '" << n.name << "' output " << i << " has type " << have.str()
        << " but its op infers " << want.str();
  }
}

// A storage order is a permutation of a static value's dimensions, on a
// value kernels make and read (the model's interface keeps its layout).
void check_storage(const Value& v, bool interface) {
  TESSEL_ICHECK(!interface && !v.is_constant() && v.producer)
      << "%" << v.name << " has a storage order but is a graph input, output or constant";
  TESSEL_ICHECK(v.type.rank_known && v.type.is_static() && v.storage.size() == size_t(v.type.rank()))
      << "%" << v.name << " of type " << v.type.str() << " has a storage order of " << v.storage.size()
      << " dimensions";
  std::vector<bool> seen(v.storage.size());
  for (int64_t d : v.storage) {
    TESSEL_ICHECK(d >= 0 && size_t(d) < seen.size() && !seen[size_t(d)])
        << "%" << v.name << ": its storage order is not a permutation of its dimensions";
    seen[size_t(d)] = true;
  }
}

// Each entry names a user output (at most once) and one of its axes; its size
// is a trailing scalar int64 output.
void verify_data_dependent_dims(const Graph& g) {
  TESSEL_ICHECK(g.data_dependent_dims.size() <= g.outputs().size())
      << g.data_dependent_dims.size() << " data-dependent extents but " << g.outputs().size() << " outputs";
  std::unordered_set<size_t> seen;
  for (size_t k = 0; k < g.data_dependent_dims.size(); ++k) {
    const DataDependentDim& d = g.data_dependent_dims[k];
    TESSEL_ICHECK(d.output < g.num_user_outputs() && seen.insert(d.output).second)
        << "data-dependent extent " << k << " names output " << d.output << " (of " << g.num_user_outputs()
        << " user outputs, each once)";
    const TensorType& t = g.outputs()[d.output]->type;
    TESSEL_ICHECK(t.rank_known && d.axis >= 0 && d.axis < t.rank())
        << "data-dependent axis " << d.axis << " of output %" << g.outputs()[d.output]->name << ": "
        << t.str();
    const TensorType& size = g.outputs()[g.num_user_outputs() + k]->type;
    TESSEL_ICHECK(size.dtype == DType::kI64 && size.rank_known && size.rank() == 0)
        << "the size of data-dependent output %" << g.outputs()[d.output]->name << " is typed " << size.str();
  }
}

}  // namespace

void verify_graph(const Graph& g) {
  std::unordered_set<const Value*> defined(g.inputs().begin(), g.inputs().end());
  std::unordered_set<const Value*> interface(g.inputs().begin(), g.inputs().end());
  interface.insert(g.outputs().begin(), g.outputs().end());
  for (const Value* v : g.values()) {
    if (!v->storage.empty()) check_storage(*v, interface.count(v) > 0);
    if (v->producer == nullptr && v->is_constant()) defined.insert(v);
    if (!v->is_constant()) continue;
    TESSEL_ICHECK(v->constant->dtype() == v->type.dtype && v->type.is_static() &&
                  v->constant->shape() == v->type.static_dims())
        << "constant %" << v->name << " holds " << v->constant->type_str() << " but is typed "
        << v->type.str();
  }
  for (const Node* n : g.nodes()) {
    for (const Value* in : n->inputs)
      TESSEL_ICHECK(in == nullptr || defined.count(in))
          << "node '" << n->name << "' uses %" << in->name << " before it is defined";
    for (size_t i = 0; i < n->outputs.size(); ++i) {
      const Value* out = n->outputs[i];
      TESSEL_ICHECK(out->producer == n && out->producer_output == int(i))
          << "output %" << out->name << " of node '" << n->name << "' has a wrong producer";
      TESSEL_ICHECK(defined.insert(out).second) << "%" << out->name << " is defined twice";
    }
    if (n->body) verify_graph(*n->body);
    check_types_agree(*n);
  }
  for (const Value* out : g.outputs())
    TESSEL_ICHECK(defined.count(out)) << "graph output %" << out->name << " is not defined";
  verify_data_dependent_dims(g);
}

}  // namespace tessel::graph
