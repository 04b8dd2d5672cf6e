// pack_conv_weights: constant conv weights re-laid out channels-last, read
// back through a Transpose (see the header).
#include "src/passes/pack_conv_weights.h"

#include <cstring>
#include <map>
#include <vector>

#include "ir/graph/op_registry.h"

namespace tessel::passes {

namespace {

// Wt[c, k, m] = W[m, c, k] (k: the flattened taps), element-wise by bytes.
Tensor channels_last(const Tensor& w) {
  const Dims& s = w.shape();
  int64_t m_count = s[0], c_count = s[1], taps = s[2] * s[3];
  Tensor t(w.dtype(), {s[1], s[2], s[3], s[0]});
  size_t size = dtype_size(w.dtype());
  const auto* src = static_cast<const uint8_t*>(w.raw());
  auto* dst = static_cast<uint8_t*>(t.raw());
  for (int64_t m = 0; m < m_count; ++m)
    for (int64_t c = 0; c < c_count; ++c)
      for (int64_t k = 0; k < taps; ++k)
        std::memcpy(dst + size_t((c * taps + k) * m_count + m) * size, src + size_t((m * c_count + c) * taps + k) * size,
                    size);
  return t;
}

bool packable(const graph::Node& n) {
  if (n.op != "Conv" || !n.has_input(0) || !n.has_input(1) || n.attrs.get_int("group") != 1) return false;
  if (!n.inputs[0]->type.is_static() || !n.outputs[0]->type.is_static()) return false;
  const graph::Value* w = n.inputs[1];
  return w->is_constant() && w->constant->rank() == 4 && w->constant->dtype() == DType::kF32;
}

}  // namespace

void pack_conv_weights(graph::Graph& g, const std::function<bool(const graph::Node& conv)>& wants) {
  std::map<const graph::Value*, graph::Value*> packed;  // W -> W_t
  for (graph::Node* n : g.nodes()) {
    if (!packable(*n) || !wants(*n)) continue;
    graph::Value* w = n->inputs[1];
    graph::Value*& t = packed[w];
    if (!t) t = g.add_constant(g.unique_name(w->name + "_channels_last"), channels_last(*w->constant));
    graph::Attrs perm;
    perm.set("perm", std::vector<int64_t>(kUnpackChannelsLast.begin(), kUnpackChannelsLast.end()));
    std::string name = g.unique_name(w->name + "_unpack");
    graph::Node* unpack = g.add_node_before(n, "Transpose", name, {t}, {g.unique_name(name + "_out")}, std::move(perm));
    graph::infer_node(*unpack);
    n->inputs[1] = unpack->outputs[0];
  }
  g.remove_unused_values();
}

}  // namespace tessel::passes
