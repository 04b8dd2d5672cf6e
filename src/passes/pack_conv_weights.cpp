// pack_conv_weights: constant conv weights re-laid out channels-last (whole
// or in panels), read back through Transpose (Reshape, Transpose) nodes that
// fusion joins to the conv (see the header).
#include "src/passes/pack_conv_weights.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph/op_registry.h"

namespace tessel::passes {

namespace {

// Wp[q, c, k, j] = W[q * panel + j, c, k] (k: the flattened taps),
// element-wise by bytes; one panel of all M channels is Wt[c, k, m].
Tensor panels(const Tensor& w, int64_t panel) {
  const Dims& s = w.shape();
  int64_t m_count = s[0], c_count = s[1], taps = s[2] * s[3];
  Tensor t(w.dtype(),
           panel == m_count ? Dims{s[1], s[2], s[3], s[0]} : Dims{s[0] / panel, s[1], s[2], s[3], panel});
  size_t size = dtype_size(w.dtype());
  const auto* src = static_cast<const uint8_t*>(w.raw());
  auto* dst = static_cast<uint8_t*>(t.raw());
  for (int64_t m = 0; m < m_count; ++m)
    for (int64_t c = 0; c < c_count; ++c)
      for (int64_t k = 0; k < taps; ++k) {
        int64_t q = m / panel, j = m % panel;
        std::memcpy(dst + size_t(((q * c_count + c) * taps + k) * panel + j) * size,
                    src + size_t((m * c_count + c) * taps + k) * size, size);
      }
  return t;
}

graph::Value* add_before(graph::Graph& g, const graph::Node* user, const std::string& op,
                         const std::string& name, std::vector<graph::Value*> inputs,
                         graph::Attrs attrs = {}) {
  std::string unique = g.unique_name(name);
  graph::Node* n = g.add_node_before(user, op, unique, std::move(inputs), {g.unique_name(unique + "_out")},
                                     std::move(attrs));
  graph::infer_node(*n);
  return n->outputs[0];
}

template <size_t N>
graph::Attrs perm_attr(const std::array<int64_t, N>& perm) {
  graph::Attrs attrs;
  attrs.set("perm", std::vector<int64_t>(perm.begin(), perm.end()));
  return attrs;
}

// The [C, kh, kw, M] view of packed weight p for conv n: p itself, or its panels unpacked.
graph::Value* channels_last_view(graph::Graph& g, const graph::Node* n, graph::Value* p, const Dims& w_shape,
                                 const std::string& name) {
  if (p->constant->rank() == 4) return p;
  graph::Value* t = add_before(g, n, "Transpose", name + "_panels", {p}, perm_attr(kPanelsToChannelsLast));
  Tensor dims(DType::kI64, {4});
  int64_t* d = dims.data<int64_t>();
  d[0] = w_shape[1], d[1] = w_shape[2], d[2] = w_shape[3], d[3] = w_shape[0];
  graph::Value* shape = g.add_constant(g.unique_name(name + "_shape"), std::move(dims));
  return add_before(g, n, "Reshape", name + "_channels", {t, shape});
}

bool packable(const graph::Node& n) {
  if (n.op != "Conv" || !n.has_input(0) || !n.has_input(1)) return false;
  if (!n.inputs[0]->type.is_static() || !n.outputs[0]->type.is_static()) return false;
  const graph::Value* w = n.inputs[1];
  return w->is_constant() && w->constant->rank() == 4 && w->constant->dtype() == DType::kF32;
}

}  // namespace

void pack_conv_weights(graph::Graph& g, const ConvPanelWidth& panel_width) {
  std::map<std::pair<const graph::Value*, int64_t>, graph::Value*> packed;  // (W, width) -> W_p
  for (graph::Node* n : g.nodes()) {
    if (!packable(*n)) continue;
    int64_t panel = panel_width(*n);
    if (panel <= 0) continue;
    graph::Value* w = n->inputs[1];
    Dims shape = w->constant->shape();
    int64_t per_group = shape[0] / std::max<int64_t>(1, n->attrs.get_int("group"));
    if (per_group % panel != 0) panel = shape[0];
    graph::Value*& p = packed[{w, panel}];
    if (!p)
      p = g.add_constant(g.unique_name(w->name + (panel == shape[0] ? "_channels_last" : "_panels")),
                         panels(*w->constant, panel));
    graph::Value* view = channels_last_view(g, n, p, shape, w->name);
    n->inputs[1] = add_before(g, n, "Transpose", w->name + "_unpack", {view}, perm_attr(kUnpackChannelsLast));
  }
  g.remove_unused_values();
}

}  // namespace tessel::passes
