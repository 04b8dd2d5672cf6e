// The region analysis and loop-nest regeneration of compute_at and
// reverse_compute_at (compute_location_nest.h).
#include "schedules/primitives/compute_location_nest.h"

#include <algorithm>

#include "ir/tensor/functor.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched::location {

using namespace tir;

std::optional<IndexMap> plain_index_map(const BlockNode& block, const std::vector<BufferRegion>& regions,
                                        const std::vector<Buffer>& only) {
  IndexMap map;
  for (const BufferRegion& r : regions) {
    if (!only.empty() &&
        std::none_of(only.begin(), only.end(), [&](const Buffer& b) { return b.same_as(r.buffer); }))
      continue;
    for (int d = 0; d < int(r.region.size()); ++d) {
      int v = iter_var_index(block, r.region[d].min);
      if (v < 0 || !is_const_int(r.region[d].extent, 1)) return std::nullopt;
      auto [it, inserted] = map.emplace(v, std::make_pair(r.buffer.get(), d));
      if (!inserted && it->second != std::make_pair(r.buffer.get(), d)) return std::nullopt;
    }
  }
  return map;
}

namespace {

RelaxMap relax_map(const std::vector<Stmt>& loops) {
  RelaxMap relax;
  for (const Stmt& s : loops) {
    const ForNode& f = *s.as<ForNode>();
    relax[f.var.get()] = Range{f.min, f.extent};
  }
  return relax;
}

}  // namespace

std::optional<std::vector<IntSet>> relaxed_access(const PrimFunc& func, const BlockNode& block,
                                                  const std::vector<BufferRegion>& regions,
                                                  const Buffer& buffer, const VarNode* loop,
                                                  const Analyzer& analyzer, int64_t* iterations) {
  VarMap bind;
  for (size_t i = 0; i < block.iter_vars.size(); ++i)
    bind[block.iter_vars[i].var.get()] = block.iter_values[i];
  std::vector<Stmt> relaxed = loops_below(func, loop, &block);
  RelaxMap relax = relax_map(relaxed);
  // Shared memory is seen by every thread of the block: the region needed is
  // the union over the threads, so the threadIdx loops above are relaxed too
  // (the copy may then be shared out among the threads, cooperative fetch).
  if (buffer->scope == MemScope::kShared) {
    for (const Stmt& s : loops_above(func, &block)) {
      const ForNode& f = *s.as<ForNode>();
      if (f.for_kind == ForKind::kThreadBound && is_thread_idx(f.thread_tag))
        relax[f.var.get()] = {f.min, f.extent};
    }
  }
  std::vector<std::vector<IntSet>> sets;
  std::vector<const VarNode*> used;
  for (const BufferRegion& r : regions) {
    if (!r.buffer.same_as(buffer)) continue;
    std::vector<Range> region;
    for (const Range& range : r.region) {
      region.push_back({substitute(range.min, bind), substitute(range.extent, bind)});
      for (const VarNode* v : vars_used(region.back().min)) used.push_back(v);
    }
    sets.push_back(eval_region(region, relax, analyzer));
  }
  if (iterations) {
    *iterations = 1;
    for (const Stmt& s : relaxed) {
      const ForNode& f = *s.as<ForNode>();
      if (std::find(used.begin(), used.end(), f.var.get()) == used.end()) continue;
      const int64_t* e = as_const_int(f.extent);
      *iterations = e && *iterations >= 0 ? *iterations * *e : -1;
    }
  }
  if (sets.empty()) return std::nullopt;
  std::vector<IntSet> out;
  for (const Range& range : union_regions(sets, analyzer))
    out.push_back(IntSet::interval(range.min, range.extent));
  return out;
}

namespace {

void plan_full_domain(NestPlan& plan, const IterVar& iv, int index) {
  Var ax = var("ax" + std::to_string(index));
  plan.loops.push_back({ax, int_imm(0), iv.dom.extent});
  plan.bindings.push_back(simplify(iv.dom.min + ax));
}

}  // namespace

bool plan_iter_var(NestPlan& plan, const IterVar& iv, int index, const std::optional<IntSet>& cover,
                   const Analyzer& analyzer, bool exact) {
  const int64_t* dom_min = as_const_int(iv.dom.min);
  const int64_t* dom_extent = as_const_int(iv.dom.extent);
  if (!cover || !dom_min || !dom_extent) {
    plan_full_domain(plan, iv, index);
    return true;
  }
  Expr extent = analyzer.simplify(cover->extent);
  ConstBound eb = analyzer.bound(extent);
  bool bounded = cover->stride == 1 && eb.max.has_value() && (!exact || eb.is_const());
  if (!bounded) {
    if (exact) return false;
    plan_full_domain(plan, iv, index);
    return true;
  }
  Expr min = analyzer.simplify(cover->min);
  int64_t e = std::max<int64_t>(*eb.max, 1);
  if (!exact && e >= *dom_extent) {
    plan_full_domain(plan, iv, index);
    return true;
  }
  Expr binding = min;
  if (e > 1) {
    Var ax = var("ax" + std::to_string(index));
    plan.loops.push_back({ax, int_imm(0), int_imm(e)});
    binding = simplify(min + ax);
  }
  plan.bindings.push_back(binding);
  if (!analyzer.can_prove(min >= int_imm(*dom_min))) plan.guards.push_back(binding >= int_imm(*dom_min));
  if (!analyzer.can_prove(min + e <= int_imm(*dom_min + *dom_extent)))
    plan.guards.push_back(binding < int_imm(*dom_min + *dom_extent));
  return true;
}

Stmt build_nest(const BlockNode& block, const NestPlan& plan) {
  BlockFields f = fields_of(block);
  f.iter_values = plan.bindings;
  f.predicate = bool_imm(true);
  for (const Expr& g : plan.guards)
    f.predicate = is_const_int(f.predicate, 1) ? g : logical_and(f.predicate, g);
  return make_nest(plan.loops, make_block(std::move(f)));
}

std::vector<Stmt> loops_to(const PrimFunc& func, const Stmt& loop) {
  std::vector<Stmt> loops = loops_above(func, loop.get());
  loops.push_back(loop);
  return loops;
}

void check_not_own_nest(const PrimFunc& func, const BlockAt& b, const Stmt& loop,
                        const std::string& primitive) {
  Stmt nest = removable_nest(func, b.node);
  if (nest.get() == loop.get() || is_under(func, nest.get(), loop.get()))
    throw ScheduleError(primitive + ".loop_in_own_nest", "loop '" + loop.as<ForNode>()->var->name +
                                                             "' belongs to the loop nest of block '" +
                                                             b.node->name + "' itself");
}

PrimFunc insert_in_loop(const PrimFunc& func, const Stmt& loop, int index, const Stmt& nest) {
  const ForNode& f = *loop.as<ForNode>();
  std::vector<Stmt> items = seq_items(f.body);
  items.insert(items.begin() + index, nest);
  return replace_node(func, loop.get(), with_body(f, make_seq(std::move(items))));
}

std::vector<std::string> names_of(const std::vector<Stmt>& blocks) {
  std::vector<std::string> out;
  for (const Stmt& s : blocks) out.push_back(s.as<BlockNode>()->name);
  return out;
}

std::pair<int, int> item_span(const PrimFunc& func, const Stmt& loop, const std::vector<std::string>& names) {
  int first = -1, last = -1;
  for (const std::string& n : names) {
    Stmt b = find_block(func, n);
    int item = b.defined() ? item_containing(loop.as<ForNode>()->body, b.get()) : -1;
    if (item < 0) continue;
    first = first < 0 ? item : std::min(first, item);
    last = std::max(last, item);
  }
  return {first, last};
}

std::vector<Stmt> neighbours(const PrimFunc& func, const BlockNode& self,
                             const std::vector<BufferRegion>& regions, bool readers) {
  std::vector<Stmt> out;
  for (const BufferRegion& r : regions)
    for (const Stmt& s : readers ? readers_of(func, r.buffer) : writers_of(func, r.buffer))
      if (s.get() != &self &&
          std::none_of(out.begin(), out.end(), [&](const Stmt& x) { return x.same_as(s); }))
        out.push_back(s);
  return out;
}

bool exact_box(const std::vector<IntSet>& box, int64_t iterations, const Analyzer& analyzer) {
  if (iterations < 0) return false;
  int64_t volume = 1;
  for (const IntSet& s : box) {
    ConstBound b = analyzer.bound(analyzer.simplify(s.extent));
    if (!b.is_const() || s.stride != 1) return false;
    volume *= *b.min;
  }
  return volume <= iterations;
}

bool covers_domain(const IntSet& set, const IterVar& iv, const Analyzer& analyzer) {
  return analyzer.can_prove(eq(set.min, iv.dom.min)) && analyzer.can_prove(eq(set.extent, iv.dom.extent)) &&
         set.stride == 1;
}

std::optional<IntSet> set_at(const std::map<const BufferNode*, std::vector<IntSet>>& regions,
                             const std::pair<const BufferNode*, int>& where) {
  auto it = regions.find(where.first);
  if (it == regions.end() || where.second >= int(it->second.size())) return std::nullopt;
  return it->second[where.second];
}

}  // namespace tessel::sched::location
