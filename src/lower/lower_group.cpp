// Lowering of node groups to PrimFuncs: parameters from the group's boundary,
// one lower_node call per member, outputs materialised at the end.
#include "src/lower/lower_group.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/core/diagnostics.h"
#include "ir/graph/op_registry.h"
#include "ir/tensor/functor.h"
#include "src/lower/op_lowering.h"
#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

namespace {

using graph::Node;
using graph::Value;

// The values crossing the group's boundary, each once, in order of first use.
struct Boundary {
  std::vector<const Value*> inputs, outputs;
  std::unordered_map<const Value*, const Node*> first_user;  // for the spans of input errors
};

Boundary boundary_of(const graph::Graph& g, const NodeGroup& group) {
  std::unordered_set<const Node*> members(group.nodes.begin(), group.nodes.end());
  std::unordered_set<const Value*> used_outside(g.outputs().begin(), g.outputs().end());
  for (const Node* n : g.nodes())
    if (!members.count(n))
      for (const Value* v : n->inputs) used_outside.insert(v);
  Boundary b;
  for (const Node* n : group.nodes) {
    for (const Value* v : n->inputs) {
      if (!v || (v->producer && members.count(v->producer)) || b.first_user.count(v)) continue;
      b.inputs.push_back(v);
      b.first_user[v] = n;
    }
    for (const Value* v : n->outputs)
      if (v && used_outside.count(v)) b.outputs.push_back(v);
  }
  return b;
}

// Input names are reserved in the context before any block exists, so that
// blocks named like an input take the suffix. Output names are only made
// distinct from the inputs and each other: the block computing an output
// usually takes the output's name.
std::vector<std::string> input_names(LowerContext& ctx, const std::vector<const Value*>& values) {
  std::vector<std::string> names;
  for (const Value* v : values) names.push_back(ctx.unique_block_name(identifier_of(v->name)));
  return names;
}

std::vector<std::string> output_names(const std::vector<const Value*>& values,
                                      std::vector<std::string> taken) {
  std::vector<std::string> names;
  for (const Value* v : values) {
    std::string base = identifier_of(v->name), name = base;
    for (int i = 1; std::find(taken.begin(), taken.end(), name) != taken.end(); ++i)
      name = base + "_" + std::to_string(i);
    taken.push_back(name);
    names.push_back(name);
  }
  return names;
}

// A constant of one element (a scale, a zero point, a clip bound) as an
// immediate: the simplifier and LLVM then see its value (a clamp to constant
// bounds, a division by a constant) instead of a load from a parameter.
std::optional<TensorExpr> scalar_constant(const Value& v) {
  if (!v.constant || v.constant->numel() != 1 || !v.storage.empty()) return std::nullopt;
  DType t = v.type.dtype;
  bool plain_int = is_integer(t) && !is_small(t) && t != DType::kU64;
  if (!(t == DType::kF32 || t == DType::kF64 || plain_int)) return std::nullopt;
  tir::Expr value =
      is_integer(t) ? tir::int_imm(v.constant->get_i64(0), t) : tir::float_imm(v.constant->get_f64(0), t);
  TensorExpr e;
  e.shape = v.constant->shape();
  e.dtype = t;
  e.at = [value](const std::vector<tir::Expr>&) { return value; };
  return e;
}

// A node whose inputs have static shapes but whose output does not (a Range
// or NonZero over values known only at run time): why it cannot compile,
// rather than the advice to bind input shapes, which would not help.
void check_output_shapes_known(const Node& n) {
  for (const Value* in : n.inputs)
    if (in && !(in->type.rank_known && in->type.is_static())) return;
  for (const Value* out : n.outputs)
    TESSEL_USER_CHECK(out->type.rank_known && out->type.is_static(), n.span())
        << "its output '" << out->name << "' is " << out->type.str()
        << ": its shape depends on the values of its inputs, known only at run time, and compiled kernels "
           "need static shapes: make those inputs constants of the model";
}

void check_lowered(const Node& n, size_t i, const TensorExpr& t) {
  const graph::TensorType& type = n.outputs[i]->type;
  std::vector<int64_t> want = static_shape(type, n.span());
  TESSEL_ICHECK(t.at && t.shape == want && t.dtype == type.dtype)
      << "the lowering of " << n.op << " '" << n.name << "' gives output " << i << " as "
      << dtype_name(t.dtype) << dims_str(t.shape) << ", shape inference says " << type.str();
}

// Buffers the function's body reads.
std::unordered_set<const tir::BufferNode*> read_buffers(const tir::PrimFunc& f) {
  std::unordered_set<const tir::BufferNode*> read;
  tir::walk_exprs(f->body, [&](const tir::Expr& e) {
    if (const auto* load = e.as<tir::LoadNode>()) read.insert(load->buffer.get());
  });
  return read;
}

using graph::pattern_of;

bool is_elementwise(const Node& n) { return pattern_of(n) <= graph::OpPattern::kBroadcast; }
bool is_anchor(const Node& n) { return pattern_of(n) == graph::OpPattern::kOutElemwiseFusable; }
// Reductions, normalisations, windows, contractions: not elementwise, not data movement.
bool is_stage(const Node& n) { return pattern_of(n) > graph::OpPattern::kInjective; }

// A conv's or matmul's result with its elementwise tail, about to be read by
// another stage (a multi-stage kernel's pooling, normalisation or softmax;
// data movement composes its index map instead): a block of its own, which the schedule puts in
// the anchor's register tile as its epilogue, vectorized. Inlined into the
// stage instead, the tail would be recomputed there per element read, in
// the stage's loops (scalar where it reduces).
TensorExpr materialize_epilogue(LowerContext& ctx, const Value& v, const TensorExpr& t) {
  return ctx.materialize(identifier_of(v.name), t);
}

}  // namespace

std::string identifier_of(const std::string& name) {
  std::string id;
  for (char c : name) id += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "v_" + id;
  return id;
}

LoweredGroup lower_group_with_bindings(const graph::Graph& g, const NodeGroup& group, const LayoutChoices& layouts) {
  TESSEL_ICHECK(!group.nodes.empty()) << "group " << group.name << " has no nodes";
  Boundary boundary = boundary_of(g, group);
  LowerContext ctx(identifier_of(group.name), layouts);
  std::vector<std::string> in_names = input_names(ctx, boundary.inputs);
  std::vector<std::string> out_names = output_names(boundary.outputs, in_names);

  std::unordered_map<const Value*, TensorExpr> env;
  std::vector<tir::Buffer> input_buffers;
  for (size_t i = 0; i < boundary.inputs.size(); ++i) {
    const Value* v = boundary.inputs[i];
    if (std::optional<TensorExpr> s = scalar_constant(*v)) {
      env[v] = *s;
      input_buffers.emplace_back();  // no parameter
      continue;
    }
    env[v] = ctx.input(in_names[i], v->type.dtype, static_shape(v->type, boundary.first_user.at(v)->span()),
                       v->storage);
    input_buffers.push_back(env[v].buffer);
  }
  // A value read by several members inlines into each, unless its expression
  // is too large to compute more than once (share: then it is a block).
  std::unordered_map<const Value*, int> reads;
  for (const Node* n : group.nodes)
    for (const Value* v : n->inputs)
      if (v) ++reads[v];
  std::unordered_set<const Value*> epilogues;  // an anchor's result, through elementwise ops
  for (const Node* n : group.nodes) {
    check_output_shapes_known(*n);
    std::vector<TensorExpr> inputs;
    for (const Value* v : n->inputs) {
      if (v && epilogues.count(v) && is_stage(*n) && !env.at(v).buffer.defined())
        env[v] = materialize_epilogue(ctx, *v, env.at(v));
      inputs.push_back(v ? env.at(v) : TensorExpr{});
    }
    std::vector<TensorExpr> outputs = lower_node(ctx, *n, inputs);
    bool epilogue = is_anchor(*n) || (is_elementwise(*n) && std::any_of(n->inputs.begin(), n->inputs.end(),
                                                                       [&](const Value* v) { return epilogues.count(v); }));
    for (size_t i = 0; i < outputs.size(); ++i) {
      check_lowered(*n, i, outputs[i]);
      auto r = reads.find(n->outputs[i]);
      if (r != reads.end() && r->second > 1) outputs[i] = share(ctx, *n, outputs[i], r->second);
      if (epilogue) epilogues.insert(n->outputs[i]);
      env[n->outputs[i]] = std::move(outputs[i]);
    }
  }

  // Two outputs backed by one buffer: all but the first are copied before any
  // output renames that buffer, so that every copy reads it under one name.
  std::vector<TensorExpr> results;
  std::vector<const tir::BufferNode*> taken;
  for (size_t i = 0; i < boundary.outputs.size(); ++i) {
    const Value* v = boundary.outputs[i];
    auto it = env.find(v);
    TESSEL_USER_CHECK(it != env.end(), v->producer->span())
        << "the tensor IR lowering of " << v->producer->op << " does not compute its output '" << v->name
        << "'";
    TensorExpr t = it->second;
    const tir::BufferNode* backing = t.buffer.get();
    if (backing && std::find(taken.begin(), taken.end(), backing) != taken.end())
      t = ctx.materialize(out_names[i] + "_copy", t);
    taken.push_back(backing);
    results.push_back(std::move(t));
  }
  for (size_t i = 0; i < results.size(); ++i)
    ctx.output(out_names[i], results[i], boundary.outputs[i]->storage);
  tir::PrimFunc full = ctx.finish();

  LoweredGroup lowered{group, {}, {}, boundary.outputs};
  std::unordered_set<const tir::BufferNode*> read = read_buffers(full);
  std::vector<tir::Buffer> kept;
  for (size_t i = 0; i < input_buffers.size(); ++i) {
    if (!read.count(input_buffers[i].get())) continue;
    kept.push_back(input_buffers[i]);
    lowered.inputs.push_back(boundary.inputs[i]);
  }
  lowered.func = tir::make_prim_func(full->name, kept, full->outputs, full->body);
  return lowered;
}

tir::PrimFunc lower_group(const graph::Graph& g, const NodeGroup& group, const LayoutChoices& layouts) {
  return lower_group_with_bindings(g, group, layouts).func;
}

std::vector<LoweredGroup> lower_graph(const graph::Graph& g, const GroupingPolicy& policy,
                                      const LayoutChoices& layouts) {
  std::vector<LoweredGroup> lowered;
  for (const NodeGroup& group : policy.group(g)) {
    TESSEL_ICHECK(is_convex(g, group)) << "group " << group.name << " is not convex";
    lowered.push_back(lower_group_with_bindings(g, group, layouts));
  }
  return lowered;
}

}  // namespace tessel::lower
