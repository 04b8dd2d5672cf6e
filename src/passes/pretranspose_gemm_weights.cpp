// pretranspose_gemm_weights: a byte-wise 2-D transpose of each constant B.
#include "src/passes/pretranspose_gemm_weights.h"

#include <cstring>
#include <map>

namespace tessel::passes {

namespace {

Tensor transposed(const Tensor& w) {
  int64_t rows = w.shape()[0], cols = w.shape()[1];
  Tensor t(w.dtype(), {cols, rows});
  size_t size = dtype_size(w.dtype());
  const auto* src = static_cast<const uint8_t*>(w.raw());
  auto* dst = static_cast<uint8_t*>(t.raw());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) std::memcpy(dst + size_t(c * rows + r) * size, src + size_t(r * cols + c) * size, size);
  return t;
}

}  // namespace

void pretranspose_gemm_weights(graph::Graph& g) {
  std::map<const graph::Value*, graph::Value*> done;  // a weight shared by several Gemms is transposed once
  for (graph::Node* n : g.nodes()) {
    if (n->op != "Gemm" || !n->has_input(1) || n->attrs.get_int("transB") == 0) continue;
    graph::Value* b = n->inputs[1];
    if (!b->is_constant() || b->constant->rank() != 2) continue;
    graph::Value*& t = done[b];
    if (!t) t = g.add_constant(g.unique_name(b->name + "_t"), transposed(*b->constant));
    n->inputs[1] = t;
    n->attrs.set("transB", int64_t(0));
  }
  g.remove_unused_values();
}

}  // namespace tessel::passes
