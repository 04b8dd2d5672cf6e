// store_channels_last: the regions of activations kept channels-last
// between kernels (see the header).
#include "src/passes/channels_last.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_set>

#include "ir/graph/op_registry.h"

namespace tessel::passes {

namespace {

using graph::Node;
using graph::Value;

bool is_f32(DType t) {
  return t == DType::kF32;
}

// A 4-D activation a kernel makes and kernels read, of a plane larger than
// one position. Of any dtype: the quantized convs' requantization runs in
// f64 and int8 between them.
bool activation(const Value& v, const std::unordered_set<const Value*>& interface) {
  if (v.is_constant() || !v.producer || interface.count(&v) || !v.type.rank_known || v.type.rank() != 4 ||
      !v.type.is_static() || is_small(v.type.dtype))
    return false;
  std::vector<int64_t> d = v.type.static_dims();
  return d[2] * d[3] > 1;
}

// A 2-D Conv the channels-last form computes: a constant weight, one group,
// groups of several channels in and out, or one channel per group; and
// whole vectors of output channels (per group where a group has several),
// so that the tile's vector is never cut short.
bool channels_last_conv(const Node& n, int64_t lanes) {
  if (n.op != "Conv" || !n.has_input(1) || !n.inputs[1]->is_constant()) return false;
  if (!is_f32(n.inputs[0]->type.dtype) || !is_f32(n.outputs[0]->type.dtype)) return false;
  const Value& w = *n.inputs[1];
  if (w.type.rank() != 4 || !n.inputs[0]->type.is_static() || !n.outputs[0]->type.is_static()) return false;
  int64_t group = n.attrs.get_int("group"), m = w.type.static_dims()[0], cg = w.type.static_dims()[1];
  int64_t mg = m / group;
  if (group == 1 || (cg == 1 && mg == 1)) return m % lanes == 0;
  return cg > 1 && mg > 1 && mg % lanes == 0;
}

bool depthwise(const Node& n) {
  if (n.op != "Conv" || !n.has_input(1) || n.attrs.get_int("group") <= 1) return false;
  const graph::TensorType& w = n.inputs[1]->type;
  return w.rank_known && w.rank() == 4 && w.dims[1].is_known() && w.dims[1].value == 1;
}

bool elementwise(const Node& n) {
  return graph::pattern_of(n) <= graph::OpPattern::kBroadcast && n.outputs.size() == 1;
}

// The values of n that must share a storage order: an elementwise op's
// output and its operands of the same shape, whatever their dtypes (it reads
// them at its own indices; a Cast too); a depthwise conv's input and output
// (computed channels-last only from a channels-last input, per channel it
// would write a channels-last output a plane apart per channel).
std::vector<const Value*> tied(const Node& n) {
  if (depthwise(n)) return {n.inputs[0], n.outputs[0]};
  std::vector<const Value*> out;
  if (!elementwise(n)) return out;
  out.push_back(n.outputs[0]);
  const graph::TensorType& type = n.outputs[0]->type;
  for (const Value* in : n.inputs)
    if (in && in->type.rank_known == type.rank_known && in->type.dims == type.dims) out.push_back(in);
  return out;
}

bool reads_in_order(const Node& n, const Value& v, int64_t lanes) {
  if (channels_last_conv(n, lanes))
    return n.inputs[0] == &v && n.inputs[1] != &v && (!n.has_input(2) || n.inputs[2] != &v);
  return elementwise(n) || n.op == "GlobalAveragePool";
}

// The activations whose producer and readers all keep them in order.
std::set<const Value*> candidates(const graph::Graph& g, int64_t lanes) {
  std::unordered_set<const Value*> interface(g.inputs().begin(), g.inputs().end());
  interface.insert(g.outputs().begin(), g.outputs().end());
  std::set<const Value*> in;
  for (const Value* v : g.values()) {
    if (!activation(*v, interface) ||
        !(channels_last_conv(*v->producer, lanes) || elementwise(*v->producer)))
      continue;
    bool readers_ok = true;
    for (const Node* user : graph::users_of(g, v))
      readers_ok = readers_ok && reads_in_order(*user, *v, lanes);
    if (readers_ok) in.insert(v);
  }
  // A node's tied values are all in or all out.
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node* n : g.nodes()) {
      std::vector<const Value*> t = tied(*n);
      bool all = true;
      for (const Value* v : t) all = all && in.count(v);
      if (all) continue;
      for (const Value* v : t) changed = in.erase(v) > 0 || changed;
    }
  }
  return in;
}

}  // namespace

void store_channels_last(graph::Graph& g, ChannelsLastPolicy policy, int64_t vector_lanes) {
  if (policy == ChannelsLastPolicy::kNone) return;
  bool all = policy == ChannelsLastPolicy::kAll;
  int64_t lanes = std::max<int64_t>(1, vector_lanes);
  std::set<const Value*> in = candidates(g, lanes);
  // Regions: values joined through the nodes that tie them or a conv between them.
  std::map<const Value*, const Value*> parent;
  for (const Value* v : in) parent[v] = v;
  std::function<const Value*(const Value*)> root = [&](const Value* v) {
    return parent[v] == v ? v : parent[v] = root(parent[v]);
  };
  auto join = [&](const Value* a, const Value* b) { parent[root(a)] = root(b); };
  for (const Node* n : g.nodes()) {
    std::vector<const Value*> t = tied(*n);
    if (channels_last_conv(*n, lanes)) t = {n->inputs[0], n->outputs[0]};
    const Value* first = nullptr;
    for (const Value* v : t) {
      if (!in.count(v)) continue;
      if (first)
        join(v, first);
      else
        first = v;
    }
  }
  std::set<const Value*> wanted;  // roots of the regions the policy keeps
  for (const Node* n : g.nodes()) {
    if (all || !depthwise(*n)) continue;
    if (in.count(n->inputs[0])) wanted.insert(root(n->inputs[0]));
  }
  for (Value* v : g.values())
    if (in.count(v) && (all || wanted.count(root(v)))) v->storage = channels_last_storage();
}

const std::vector<int64_t>& channels_last_storage() {
  static const std::vector<int64_t> order = {0, 2, 3, 1};
  return order;
}

bool stored_channels_last(const graph::Value& v) {
  return v.storage == channels_last_storage();
}

std::optional<ChannelsLastPolicy> channels_last_policy_named(const std::string& name) {
  for (ChannelsLastPolicy p :
       {ChannelsLastPolicy::kNone, ChannelsLastPolicy::kDepthwise, ChannelsLastPolicy::kAll})
    if (channels_last_policy_name(p) == name) return p;
  return std::nullopt;
}

std::string channels_last_policy_name(ChannelsLastPolicy policy) {
  switch (policy) {
    case ChannelsLastPolicy::kNone: return "none";
    case ChannelsLastPolicy::kDepthwise: return "depthwise";
    case ChannelsLastPolicy::kAll: return "all";
  }
  return "?";
}

}  // namespace tessel::passes
