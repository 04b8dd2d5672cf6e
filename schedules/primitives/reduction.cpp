// rfactor and decompose_reduction: the reduction block primitives. rfactor
// computes partial results per iteration of one reduction loop into a buffer
// with an extra dimension, then reduces those; decompose_reduction hoists init
// into its own block before a loop.
#include <algorithm>

#include "ir/tensor/functor.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

namespace {

bool binding_uses(const BlockNode& b, IterKind kind, const VarNode* loop_var) {
  for (size_t i = 0; i < b.iter_vars.size(); ++i)
    if (b.iter_vars[i].kind == kind && uses_var(b.iter_values[i], loop_var)) return true;
  return false;
}

// The one block under `loop` whose bindings use its variable.
BlockAt block_bound_by(const Stmt& loop, const std::string& primitive) {
  const VarNode* v = loop.as<ForNode>()->var.get();
  std::vector<Stmt> found;
  walk(loop, [&](const Stmt& s) {
    const BlockNode* b = s.as<BlockNode>();
    if (b && std::any_of(b->iter_values.begin(), b->iter_values.end(),
                         [&](const Expr& e) { return uses_var(e, v); }))
      found.push_back(s);
    return true;
  });
  if (found.size() != 1)
    throw ScheduleError(primitive + (found.empty() ? ".no_block" : ".multiple_blocks"),
                        "loop '" + v->name + "' binds the iteration variables of " +
                            std::to_string(found.size()) + " blocks; it needs exactly one");
  return {found[0], found[0].as<BlockNode>()};
}

std::vector<Expr> with_axis(std::vector<Expr> indices, int axis, Expr index) {
  indices.insert(indices.begin() + axis, std::move(index));
  return indices;
}

// `acc[idx] = identity` and `acc[idx] = acc[idx] op value`.
std::pair<Stmt, Stmt> reduction_stmts(const ReductionPattern& r, const Buffer& acc,
                                      const std::vector<Expr>& idx, const Expr& value) {
  return {make_store(acc, r.identity, idx), make_store(acc, combine(r.op, load(acc, idx), value), idx)};
}

struct RfactorPlan {
  BlockAt block;
  ReductionPattern pattern;
  std::vector<Stmt> reduce_loops;  // loops the reduction bindings use, outermost first
};

RfactorPlan check_rfactor(const PrimFunc& func, const Stmt& loop, int factor_axis) {
  const std::string kP = "rfactor";
  const ForNode& l = *loop.as<ForNode>();
  BlockAt b = block_bound_by(loop, kP);
  const BlockNode& r = *b.node;
  if (binding_uses(r, IterKind::kSpatial, l.var.get()) || !binding_uses(r, IterKind::kReduce, l.var.get()))
    throw ScheduleError(kP + ".not_reduction_loop", "loop '" + l.var->name +
                                                        "' binds a spatial variable of block '" + r.name +
                                                        "'; rfactor needs a reduction loop");
  std::optional<ReductionPattern> pattern = match_reduction(r);
  if (!pattern)
    throw ScheduleError(kP + ".unknown_combiner", "block '" + r.name +
                                                      "' is not `B[s] = identity; B[s] = B[s] op "
                                                      "value` with op one of +, *, max, min");
  for (const Expr& i : pattern->indices)
    for (const VarNode* v : vars_used(i))
      if (int p = iter_var_index(r, Expr(v)); p < 0 || r.iter_vars[p].kind != IterKind::kSpatial)
        throw ScheduleError(kP + ".unknown_combiner",
                            "block '" + r.name + "' stores at a reduction variable");
  if (!predicate_is_true(r))
    throw ScheduleError(kP + ".predicated", "block '" + r.name + "' has a predicate (a non-exact split)");
  if (factor_axis < 0 || factor_axis > pattern->buffer->rank())
    throw ScheduleError(kP + ".bad_factor_axis", "factor_axis " + std::to_string(factor_axis) +
                                                     " is not in [0, " +
                                                     std::to_string(pattern->buffer->rank()) + "]");
  std::vector<Stmt> reduce_loops;
  for (const Stmt& s : loops_above(func, b.node)) {
    const ForNode& f = *s.as<ForNode>();
    if (!binding_uses(r, IterKind::kReduce, f.var.get())) continue;
    if (binding_uses(r, IterKind::kSpatial, f.var.get()))
      throw ScheduleError(kP + ".mixed_loop", "loop '" + f.var->name +
                                                  "' binds both spatial and reduction "
                                                  "variables of block '" +
                                                  r.name + "'");
    if (!as_const_int(f.min) || !as_const_int(f.extent))
      throw ScheduleError(kP + ".non_constant_loop", "loop '" + f.var->name + "' has a non-constant range");
    reduce_loops.push_back(s);
  }
  int item = root_item(func, b.node);
  for (const Stmt& other : all_blocks(func))
    if (other.get() != b.node && root_item(func, other.get()) == item)
      throw ScheduleError(kP + ".shared_nest", "block '" + r.name + "' shares its loop nest with block '" +
                                                   other.as<BlockNode>()->name +
                                                   "'; apply rfactor before compute_at");
  return {b, *pattern, reduce_loops};
}

// The partial-result block: the spatial variables, one new spatial variable for
// the factored loop and one reduction variable per other reduction loop.
Block make_rf_block(const PrimFunc& func, const RfactorPlan& plan, const ForNode& loop, const Buffer& rf,
                    int axis) {
  const BlockNode& r = *plan.block.node;
  BlockFields f;
  f.name = unique_block_name(func, r.name + "_rf");
  f.predicate = bool_imm(true);
  VarMap to_rf;  // old iteration variables and loop variables -> the rf block's variables
  for (size_t i = 0; i < r.iter_vars.size(); ++i) {
    if (r.iter_vars[i].kind != IterKind::kSpatial) continue;
    Var v = var(r.iter_vars[i].var->name);
    f.iter_vars.push_back({v, r.iter_vars[i].dom, IterKind::kSpatial});
    f.iter_values.push_back(r.iter_values[i]);
    to_rf[r.iter_vars[i].var.get()] = v;
  }
  VarMap loop_to_var;
  Expr rf_index;
  for (const Stmt& s : plan.reduce_loops) {
    const ForNode& l = *s.as<ForNode>();
    bool factored = l.var.same_as(loop.var);
    Var v = var((factored ? "vrf_" : "vr_") + l.var->name);
    f.iter_vars.push_back({v, {l.min, l.extent}, factored ? IterKind::kSpatial : IterKind::kReduce});
    f.iter_values.push_back(l.var);
    loop_to_var[l.var.get()] = v;
    if (factored) rf_index = simplify(v - l.min);
  }
  for (size_t i = 0; i < r.iter_vars.size(); ++i)
    if (r.iter_vars[i].kind == IterKind::kReduce)
      to_rf[r.iter_vars[i].var.get()] = simplify(substitute(r.iter_values[i], loop_to_var));
  std::vector<Expr> idx;
  for (const Expr& i : plan.pattern.indices) idx.push_back(substitute(i, to_rf));
  std::vector<Expr> rf_idx = with_axis(idx, axis, rf_index);
  Expr value = substitute(plan.pattern.value, to_rf);
  if (plan.reduce_loops.size() == 1) {
    // Only the factored loop: each partial result is a single value.
    f.body = make_store(rf, value, rf_idx);
    return make_block_detected(std::move(f));
  }
  auto [init, body] = reduction_stmts(plan.pattern, rf, rf_idx, value);
  f.init = init;
  f.body = body;
  return make_block_detected(std::move(f));
}

// The original block, now reducing the partial results over the factored axis.
Stmt make_write_back(const RfactorPlan& plan, const ForNode& loop, const Buffer& rf, int axis) {
  const BlockNode& r = *plan.block.node;
  BlockFields f = fields_of(r);
  f.iter_vars.clear();
  f.iter_values.clear();
  f.predicate = bool_imm(true);
  std::vector<LoopSpec> loops;
  VarMap to_new;
  for (const IterVar& iv : r.iter_vars) {
    if (iv.kind != IterKind::kSpatial) continue;
    Var v = var(iv.var->name), ax = var("ax" + std::to_string(loops.size()));
    f.iter_vars.push_back({v, iv.dom, IterKind::kSpatial});
    f.iter_values.push_back(simplify(iv.dom.min + ax));
    loops.push_back({ax, int_imm(0), iv.dom.extent});
    to_new[iv.var.get()] = v;
  }
  Var vrf = var("vrf"), axr = var("ax" + std::to_string(loops.size()));
  f.iter_vars.push_back({vrf, {loop.min, loop.extent}, IterKind::kReduce});
  f.iter_values.push_back(simplify(loop.min + axr));
  loops.push_back({axr, int_imm(0), loop.extent});
  std::vector<Expr> idx;
  for (const Expr& i : plan.pattern.indices) idx.push_back(substitute(i, to_new));
  Expr partial = load(rf, with_axis(idx, axis, simplify(vrf - loop.min)));
  auto [init, body] = reduction_stmts(plan.pattern, plan.pattern.buffer, idx, partial);
  f.init = init;
  f.body = body;
  return make_nest(loops, make_block_detected(std::move(f)));
}

}  // namespace

PrimitiveResult rfactor(const PrimFunc& func, const VarNode* loop, int factor_axis) {
  Stmt l = require_loop(func, loop, "rfactor");
  RfactorPlan plan = check_rfactor(func, l, factor_axis);
  const ForNode& f = *l.as<ForNode>();
  const Buffer& acc = plan.pattern.buffer;
  std::vector<int64_t> shape = acc->shape;
  shape.insert(shape.begin() + factor_axis, *as_const_int(f.extent));
  Buffer rf = make_buffer(unique_block_name(func, acc->name + "_rf"), acc->dtype, shape, acc->scope);
  Block rf_block = make_rf_block(func, plan, f, rf, factor_axis);
  int item = root_item(func, plan.block.node);
  Stmt write_back = make_write_back(plan, f, rf, factor_axis);
  PrimFunc out = replace_node(func, plan.block.node, rf_block);
  out = insert_at_root(out, item + 1, write_back);
  return {with_root_allocs(out, {rf}), rf_block->name};
}

PrimitiveResult decompose_reduction(const PrimFunc& func, const std::string& block, const VarNode* loop) {
  const std::string kP = "decompose_reduction";
  BlockAt b = require_block(func, block, kP);
  require_loop(func, loop, kP);
  const BlockNode& r = *b.node;
  if (!r.is_reduction() || !r.init.defined())
    throw ScheduleError(kP + ".not_reduction", "block '" + block + "' is not a reduction with an init");
  std::vector<Stmt> loops = loops_above(func, b.node);
  auto at = std::find_if(loops.begin(), loops.end(),
                         [&](const Stmt& s) { return s.as<ForNode>()->var.get() == loop; });
  if (at == loops.end())
    throw ScheduleError(kP + ".loop_not_ancestor",
                        "loop '" + loop->name + "' is not a loop of block '" + block + "'");
  for (auto it = loops.begin(); it != at; ++it)
    if (binding_uses(r, IterKind::kReduce, it->as<ForNode>()->var.get()))
      throw ScheduleError(kP + ".reduce_loop_above", "reduction loop '" + it->as<ForNode>()->var->name +
                                                         "' is outside loop '" + loop->name +
                                                         "': the init would run once per iteration of it");
  // Copies of the loops at and below `loop` that bind spatial variables.
  std::vector<LoopSpec> copies;
  VarMap loop_map;
  for (auto it = at; it != loops.end(); ++it) {
    const ForNode& f = *it->as<ForNode>();
    bool spatial = binding_uses(r, IterKind::kSpatial, f.var.get());
    if (spatial && binding_uses(r, IterKind::kReduce, f.var.get()))
      throw ScheduleError(kP + ".mixed_loop", "loop '" + f.var->name +
                                                  "' binds both spatial and reduction "
                                                  "variables of block '" +
                                                  block + "'");
    if (!spatial && !binding_uses(r, IterKind::kReduce, f.var.get()) && !is_const_int(f.extent, 1))
      throw ScheduleError(kP + ".repeating_loop",
                          "loop '" + f.var->name + "' binds no variable of block '" + block +
                              "': the block's updates repeat in each of its iterations, and with the init "
                              "moved before loop '" +
                              loop->name + "' they would accumulate more than once");
    if (!spatial) {
      if (uses_var(r.predicate, f.var.get()))
        throw ScheduleError(kP + ".predicated", "the predicate of block '" + block +
                                                    "' depends on reduction loop '" + f.var->name + "'");
      continue;
    }
    Var copy = var(f.var->name + "_init");
    copies.push_back({copy, f.min, f.extent});
    loop_map[f.var.get()] = copy;
  }
  BlockFields init;
  init.name = unique_block_name(func, block + "_init");
  init.predicate = substitute(r.predicate, loop_map);
  VarMap to_init;
  for (size_t i = 0; i < r.iter_vars.size(); ++i) {
    const IterVar& iv = r.iter_vars[i];
    if (iv.kind == IterKind::kReduce) {
      if (uses_var(r.init, iv.var.get()))
        throw ScheduleError(kP + ".init_uses_reduction", "the init of block '" + block +
                                                             "' uses reduction "
                                                             "variable '" +
                                                             iv.var->name + "'");
      continue;
    }
    Var v = var(iv.var->name);
    init.iter_vars.push_back({v, iv.dom, IterKind::kSpatial});
    init.iter_values.push_back(substitute(r.iter_values[i], loop_map));
    to_init[iv.var.get()] = v;
  }
  init.body = substitute(r.init, to_init);
  Block init_block = make_block_detected(std::move(init));
  for (const BufferRegion& read : init_block->reads)
    for (const Stmt& w : writers_of(func, read.buffer))
      if (is_under(func, at->get(), w.get()))
        throw ScheduleError(kP + ".dependence", "the init of block '" + block + "' reads '" +
                                                    read.buffer->name + "', written under loop '" +
                                                    loop->name + "'");
  BlockFields update = fields_of(r);
  update.init = Stmt{};
  PrimFunc out = replace_node(func, b.node, make_block_detected(std::move(update)));
  Stmt moved = find_loop(out, loop);
  out = replace_node(out, moved.get(), make_seq({make_nest(copies, init_block), moved}));
  return {out, init_block->name};
}

}  // namespace tessel::sched
