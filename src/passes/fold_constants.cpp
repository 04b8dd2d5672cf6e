// fold_node and remove_folded_nodes, through the reference executor.
#include "src/passes/fold_constants.h"

#include <optional>

#include "ir/graph/op_registry.h"
#include "src/reference/executor.h"

namespace tessel::passes {

namespace {

constexpr int64_t kMaxFoldBytesPerNode = int64_t(1) << 26;  // 64 MiB
constexpr int64_t kMaxFoldFlopsPerNode = int64_t(1) << 30;

// Bytes of a value of type t, or nullopt when it is not static or too large.
std::optional<int64_t> static_bytes(const graph::TensorType& t) {
  if (!t.is_static()) return std::nullopt;
  int64_t n = int64_t(dtype_size(t.dtype));
  for (const graph::Dim& d : t.dims)
    if (__builtin_mul_overflow(n, d.value, &n)) return std::nullopt;
  return n;
}

}  // namespace

bool should_fold(const graph::Node& n) {
  for (const graph::Value* in : n.inputs)
    if (in && !in->is_constant()) return false;
  for (const graph::Value* out : n.outputs) {
    std::optional<int64_t> bytes = static_bytes(out->type);
    if (!bytes || *bytes > kMaxFoldBytesPerNode) return false;
  }
  return graph::node_flops(n) <= kMaxFoldFlopsPerNode;
}

bool fold_node(graph::Node& n) {
  if (!should_fold(n)) return false;
  std::vector<const Tensor*> args;
  for (graph::Value* in : n.inputs) args.push_back(in ? &*in->constant : nullptr);
  std::vector<Tensor> folded = reference::evaluate_node(n, args);
  for (size_t i = 0; i < folded.size(); ++i) n.outputs[i]->constant = std::move(folded[i]);
  return true;
}

void remove_folded_nodes(graph::Graph& g) {
  auto folded = [](const graph::Node& n) {
    for (const graph::Value* out : n.outputs)
      if (!out->is_constant()) return false;
    return true;
  };
  for (graph::Node* n : g.nodes())
    if (folded(*n))
      for (graph::Value* out : n->outputs) out->producer = nullptr;
  g.remove_nodes_if(folded);
  g.remove_unused_values();
}

}  // namespace tessel::passes
