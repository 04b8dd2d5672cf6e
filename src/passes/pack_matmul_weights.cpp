// pack_matmul_weights: constant B re-laid out as column panels, read back
// through Transpose + Reshape (see the header).
#include "src/passes/pack_matmul_weights.h"

#include <cstring>
#include <map>
#include <utility>

#include "ir/graph/op_registry.h"

namespace tessel::passes {

namespace {

// W_p[p, k, j] = W[k, p * panel + j], byte-wise.
Tensor packed(const Tensor& w, int64_t panel) {
  int64_t rows = w.shape()[0], cols = w.shape()[1];
  Tensor p(w.dtype(), {cols / panel, rows, panel});
  size_t size = dtype_size(w.dtype()), run = size_t(panel) * size;
  const auto* src = static_cast<const uint8_t*>(w.raw());
  auto* dst = static_cast<uint8_t*>(p.raw());
  for (int64_t q = 0; q < cols / panel; ++q)
    for (int64_t k = 0; k < rows; ++k)
      std::memcpy(dst + size_t(q * rows + k) * run, src + size_t(k * cols + q * panel) * size, run);
  return p;
}

// The panel width for node n's B, or 0 when n is no product with a packable B.
int64_t panel_for(const graph::Node& n, const PanelWidth& panel_width) {
  if (n.op != "MatMul" && !(n.op == "Gemm" && n.attrs.get_int("transB") == 0 && n.attrs.get_int("transA") == 0))
    return 0;
  if (!n.has_input(0) || !n.has_input(1) || !n.inputs[0]->type.is_static()) return 0;
  const graph::Value* b = n.inputs[1];
  if (!b->is_constant() || b->constant->rank() != 2 || b->constant->dtype() != DType::kF32) return 0;
  // The tile's rows run along A's innermost dimension of more than one element
  // other than K: with B a matrix, A's batch dimensions are rows too.
  Dims a = n.inputs[0]->type.static_dims();
  int64_t rows = 1, cols = b->constant->shape()[1];
  for (size_t d = a.size() - 1; d-- > 0 && rows == 1;) rows = a[d];
  int64_t panel = panel_width(rows, cols);
  return panel > 0 && panel < cols && cols % panel == 0 ? panel : 0;
}

graph::Value* new_value_before(graph::Graph& g, const graph::Node* user, const std::string& op,
                               const std::string& name, std::vector<graph::Value*> inputs,
                               graph::Attrs attrs) {
  graph::Node* n = g.add_node_before(user, op, g.unique_name(name), std::move(inputs),
                                     {g.unique_name(name + "_out")}, std::move(attrs));
  graph::infer_node(*n);
  return n->outputs[0];
}

}  // namespace

void pack_matmul_weights(graph::Graph& g, const PanelWidth& panel_width) {
  // A weight shared by several products is packed once per panel width.
  std::map<std::pair<const graph::Value*, int64_t>, graph::Value*> done;
  for (graph::Node* n : g.nodes()) {
    int64_t panel = panel_for(*n, panel_width);
    if (panel == 0) continue;
    graph::Value* b = n->inputs[1];
    int64_t rows = b->constant->shape()[0], cols = b->constant->shape()[1];
    graph::Value*& p = done[{b, panel}];
    if (!p) p = g.add_constant(g.unique_name(b->name + "_panels"), packed(*b->constant, panel));
    graph::Attrs perm;
    perm.set("perm", std::vector<int64_t>{1, 0, 2});
    graph::Value* t = new_value_before(g, n, "Transpose", b->name + "_unpack", {p}, std::move(perm));
    Tensor dims(DType::kI64, {2});
    dims.data<int64_t>()[0] = rows;
    dims.data<int64_t>()[1] = cols;
    graph::Value* shape = g.add_constant(g.unique_name(b->name + "_shape"), std::move(dims));
    n->inputs[1] = new_value_before(g, n, "Reshape", b->name + "_rows", {t, shape}, {});
  }
  g.remove_unused_values();
}

}  // namespace tessel::passes
