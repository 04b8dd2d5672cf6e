// compute_at, reverse_compute_at and legal_compute_locations: moving a block's
// loop nest under a loop of its consumers (producers), regenerated to cover the
// region they read (write) below that loop, by region analysis (ir/tensor/int_set.h).
#include <algorithm>
#include <map>

#include "ir/tensor/functor.h"
#include "ir/tensor/int_set.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

namespace {

// Where each iteration variable of a block appears as a plain index of an
// accessed buffer: var position -> (buffer, dimension).
using IndexMap = std::map<int, std::pair<const BufferNode*, int>>;

// The (buffer, dimension) each iteration variable indexes in `regions` (those
// of buffers in `only`, when given); nullopt when some dimension is not indexed
// by a plain iteration variable, or one variable indexes two places.
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

// A consumer's reads of the buffers produced under the loop: the plain
// dimensions as plain_index_map; a dimension read at one point computed from
// iteration variables (a flat plane's row h * W' + w) maps nothing, so the
// producers must write it whole below the loop and its variables run over
// their whole domain there. nullopt when a read spans more than one point.
bool uses_iter_var(const BlockNode& block, const Expr& e) {
  return std::any_of(block.iter_vars.begin(), block.iter_vars.end(),
                     [&](const IterVar& iv) { return uses_var(e, iv.var.get()); });
}

struct ConsumerReads {
  IndexMap plain;
  std::vector<std::pair<const BufferNode*, int>> whole;
};

std::optional<ConsumerReads> consumer_reads(const BlockNode& block, const std::vector<BufferRegion>& regions,
                                            const std::vector<Buffer>& produced) {
  ConsumerReads out;
  for (const BufferRegion& r : regions) {
    if (std::none_of(produced.begin(), produced.end(), [&](const Buffer& b) { return b.same_as(r.buffer); }))
      continue;
    for (int d = 0; d < int(r.region.size()); ++d) {
      if (!is_const_int(r.region[d].extent, 1)) return std::nullopt;
      int v = iter_var_index(block, r.region[d].min);
      if (v < 0) {
        // A constant index is a broadcast (an SE block's scale over a plane): the consumer's other
        // variables would be all its work, under a loop chosen for its producer's.
        if (!uses_iter_var(block, r.region[d].min)) return std::nullopt;
        out.whole.emplace_back(r.buffer.get(), d);
        continue;
      }
      auto [it, inserted] = out.plain.emplace(v, std::make_pair(r.buffer.get(), d));
      if (!inserted && it->second != std::make_pair(r.buffer.get(), d)) return std::nullopt;
    }
  }
  return out;
}

RelaxMap relax_map(const std::vector<Stmt>& loops) {
  RelaxMap relax;
  for (const Stmt& s : loops) {
    const ForNode& f = *s.as<ForNode>();
    relax[f.var.get()] = Range{f.min, f.extent};
  }
  return relax;
}

// The region of `buffer` the block accesses (through `regions`, its reads or
// writes) when the loops below `loop` run over their ranges, per dimension.
// nullopt when the block does not access the buffer.
// With `iterations`, also the number of iterations of the relaxed loops the
// region depends on (-1 when one has no constant extent): a region of more
// points than that is over-approximated.
std::optional<std::vector<IntSet>> relaxed_access(const PrimFunc& func, const BlockNode& block,
                                                  const std::vector<BufferRegion>& regions,
                                                  const Buffer& buffer, const VarNode* loop,
                                                  const Analyzer& analyzer, int64_t* iterations = nullptr) {
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

// The regenerated loop nest of a block: one loop per iteration variable (none
// when it takes one value), bindings, and guards keeping it inside its domain.
struct NestPlan {
  std::vector<LoopSpec> loops;
  std::vector<Expr> bindings;
  std::vector<Expr> guards;
};

void plan_full_domain(NestPlan& plan, const IterVar& iv, int index) {
  Var ax = var("ax" + std::to_string(index));
  plan.loops.push_back({ax, int_imm(0), iv.dom.extent});
  plan.bindings.push_back(simplify(iv.dom.min + ax));
}

// Covers `cover` (when bounded) intersected with the domain; `exact` callers
// (reverse_compute_at) must not cover more than the set, so they fail instead
// of falling back to the whole domain. Returns false when the set is unbounded.
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

// The loops at and above `loop`, for an analyzer that knows their ranges.
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

// Inserts `nest` as item `index` of the loop's body, in func.
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

// Items of the loop's body containing the named blocks: the first and the last.
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

// Blocks other than `self` that write (readers=false) or read the block's buffers.
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

// A box of at most `iterations` points: the relaxed loops may enumerate it
// exactly (a necessary condition; affine bindings of split loops meet it).
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

// The set of one dimension of one buffer's region, when the region is known.
std::optional<IntSet> set_at(const std::map<const BufferNode*, std::vector<IntSet>>& regions,
                             const std::pair<const BufferNode*, int>& where) {
  auto it = regions.find(where.first);
  if (it == regions.end() || where.second >= int(it->second.size())) return std::nullopt;
  return it->second[where.second];
}

}  // namespace

namespace {

using RegionMap = std::map<const BufferNode*, std::vector<IntSet>>;

// The buffers a block moved by compute_at writes, with the variable -> (buffer,
// dimension) map its plain writes give. Throws when the block cannot move.
std::pair<std::vector<Buffer>, IndexMap> movable_outputs(const PrimFunc& func, const BlockNode& p,
                                                         const std::string& kP) {
  std::vector<Buffer> outputs;
  for (const BufferRegion& w : p.writes) {
    if (is_function_output(func, w.buffer))
      throw ScheduleError(kP + ".output_block", "block '" + p.name + "' writes the function output '" +
                                                    w.buffer->name +
                                                    "'; computing it only where it is read would "
                                                    "leave the rest of the output unwritten");
    if (writers_of(func, w.buffer).size() > 1)
      throw ScheduleError(kP + ".multiple_writers", "buffer '" + w.buffer->name + "' of block '" + p.name +
                                                        "' is written by other blocks too");
    outputs.push_back(w.buffer);
  }
  std::optional<IndexMap> index_map = plain_index_map(p, p.writes, {});
  if (!index_map)
    throw ScheduleError(kP + ".write_not_trivial",
                        "block '" + p.name +
                            "' does not write its buffers at plain "
                            "iteration variables, so the region to cover cannot be mapped "
                            "back to its iterations");
  return {outputs, *index_map};
}

// The region of each output the consumers read below the loop.
RegionMap needed_regions(const PrimFunc& func, const std::vector<std::string>& consumers,
                         const std::vector<Buffer>& outputs, const VarNode* loop, const Analyzer& analyzer) {
  RegionMap needed;
  for (const Buffer& out : outputs) {
    std::vector<std::vector<IntSet>> sets;
    for (const std::string& c : consumers) {
      Stmt cb_stmt = find_block(func, c);
      const BlockNode& cb = *cb_stmt.as<BlockNode>();
      if (auto s = relaxed_access(func, cb, cb.reads, out, loop, analyzer)) sets.push_back(*s);
    }
    for (const Range& r : union_regions(sets, analyzer))
      needed[out.get()].push_back(IntSet::interval(r.min, r.extent));
  }
  return needed;
}

}  // namespace

PrimFunc compute_at(const PrimFunc& func, const std::string& block, const VarNode* loop) {
  const std::string kP = "compute_at";
  BlockAt p = require_block(func, block, kP);
  Stmt target = require_loop(func, loop, kP);
  check_not_own_nest(func, p, target, kP);
  auto [outputs, index_map] = movable_outputs(func, *p.node, kP);
  std::vector<std::string> consumers = names_of(neighbours(func, *p.node, p.node->writes, true));
  if (consumers.empty())
    throw ScheduleError(kP + ".no_consumer", "block '" + block + "' has no consumer to be computed at");
  for (const std::string& c : consumers)
    if (!is_under(func, target.get(), find_block(func, c).get()))
      throw ScheduleError(kP + ".consumer_outside_loop", "consumer '" + c + "' of block '" + block +
                                                             "' is not under loop '" + loop->name + "'");
  std::vector<std::string> producers = names_of(neighbours(func, *p.node, p.node->reads, false));

  PrimFunc removed = remove_stmt(func, removable_nest(func, p.node).get());
  Stmt at = find_loop(removed, loop);
  int first_consumer = item_span(removed, at, consumers).first;
  int last_producer = item_span(removed, at, producers).second;
  if (last_producer >= first_consumer)
    throw ScheduleError(kP + ".dependence", "under loop '" + loop->name + "', a producer of block '" + block +
                                                "' runs no earlier than its first consumer");
  Analyzer analyzer = analyzer_for(loops_to(removed, at));
  RegionMap needed = needed_regions(removed, consumers, outputs, loop, analyzer);
  NestPlan plan;
  for (int i = 0; i < int(p.node->iter_vars.size()); ++i) {
    std::optional<IntSet> cover;
    auto it = index_map.find(i);
    if (it != index_map.end() && p.node->iter_vars[i].kind == IterKind::kSpatial)
      cover = set_at(needed, it->second);
    plan_iter_var(plan, p.node->iter_vars[i], i, cover, analyzer, false);
  }
  PrimFunc out = insert_in_loop(removed, at, last_producer + 1, build_nest(*p.node, plan));
  check_dependences_kept(func, out, block, kP);
  return out;
}

namespace {

// The producers of `c` under the target loop, and the buffers of c's reads they write.
struct Sources {
  std::vector<std::string> producers;
  std::vector<Buffer> produced;
};

Sources sources_under(const PrimFunc& func, const BlockNode& c, const Stmt& target, const std::string& kP) {
  Sources out;
  for (const Stmt& s : neighbours(func, c, c.reads, false)) {
    if (!is_under(func, target.get(), s.get())) continue;
    const BlockNode& pb = *s.as<BlockNode>();
    out.producers.push_back(pb.name);
    for (const BufferRegion& w : pb.writes)
      if (lists_buffer(c.reads, w.buffer)) out.produced.push_back(w.buffer);
    // At and above the loop, a producer's reduction is still partial.
    for (const Stmt& l : loops_to(func, target))
      for (size_t i = 0; i < pb.iter_vars.size(); ++i)
        if (pb.iter_vars[i].kind == IterKind::kReduce &&
            uses_var(pb.iter_values[i], l.as<ForNode>()->var.get()))
          throw ScheduleError(kP + ".inside_reduction", "loop '" + l.as<ForNode>()->var->name +
                                                            "' is a reduction loop of producer '" + pb.name +
                                                            "', whose results are partial inside it");
  }
  if (out.producers.empty())
    throw ScheduleError(
        kP + ".producer_outside_loop",
        "no producer of block '" + c.name + "' is under loop '" + target.as<ForNode>()->var->name + "'");
  return out;
}

// The region of each produced buffer the producers write below the loop; each
// must be a box the analysis bounds exactly, since the consumer reads all of it.
RegionMap written_regions(const PrimFunc& func, const Sources& sources, const VarNode* loop,
                          const Analyzer& analyzer, const std::string& kP) {
  RegionMap written;
  for (const Buffer& b : sources.produced) {
    std::vector<std::vector<IntSet>> sets;
    for (const std::string& n : sources.producers) {
      Stmt pb_stmt = find_block(func, n);
      const BlockNode& pb = *pb_stmt.as<BlockNode>();
      int64_t iterations = 0;
      std::optional<std::vector<IntSet>> s =
          relaxed_access(func, pb, pb.writes, b, loop, analyzer, &iterations);
      if (!s) continue;
      if (!exact_box(*s, iterations, analyzer))
        throw ScheduleError(kP + ".inexact_region", "the region producer '" + n + "' writes of '" + b->name +
                                                        "' below loop '" + loop->name +
                                                        "' is not a box that "
                                                        "region analysis bounds exactly");
      sets.push_back(*s);
    }
    for (const Range& r : union_regions(sets, analyzer))
      written[b.get()].push_back(IntSet::interval(r.min, r.extent));
  }
  return written;
}

// The dimensions a consumer reads at computed points must be written whole
// below the loop: its iterations there may read any of their elements.
void check_written_whole(const ConsumerReads& reads, const RegionMap& written, const Analyzer& analyzer,
                         const std::string& block, const VarNode* loop, const std::string& kP) {
  for (const auto& [buffer, d] : reads.whole) {
    std::optional<IntSet> set = set_at(written, {buffer, d});
    bool whole = set && set->stride == 1 && analyzer.can_prove(eq(set->min, int_imm(0))) &&
                 analyzer.can_prove(eq(set->extent, int_imm(buffer->shape[size_t(d)])));
    if (!whole)
      throw ScheduleError(kP + ".read_not_trivial",
                          "block '" + block + "' reads dimension " + std::to_string(d) + " of '" +
                              buffer->name + "' at computed indices, and the producers below loop '" +
                              loop->name + "' do not write all of it");
  }
}

NestPlan plan_consumer(const BlockNode& c, const IndexMap& index_map, const RegionMap& written,
                       const VarNode* loop, const Analyzer& analyzer, const std::string& kP) {
  NestPlan plan;
  for (int i = 0; i < int(c.iter_vars.size()); ++i) {
    const IterVar& iv = c.iter_vars[i];
    std::optional<IntSet> cover;
    if (auto it = index_map.find(i); it != index_map.end()) cover = set_at(written, it->second);
    if (cover && iv.kind == IterKind::kReduce && covers_domain(*cover, iv, analyzer)) cover.reset();
    if (cover && iv.kind == IterKind::kReduce)
      throw ScheduleError(kP + ".reduction_split",
                          "block '" + c.name + "' would reduce over '" + iv.var->name +
                              "' piecewise, one piece per iteration of '" + loop->name + "'");
    if (!plan_iter_var(plan, iv, i, cover, analyzer, true))
      throw ScheduleError(kP + ".unbounded_region", "the region the producers write below loop '" +
                                                        loop->name + "' has no constant size along '" +
                                                        iv.var->name + "'");
  }
  return plan;
}

}  // namespace

PrimFunc reverse_compute_at(const PrimFunc& func, const std::string& block, const VarNode* loop) {
  const std::string kP = "reverse_compute_at";
  BlockAt c = require_block(func, block, kP);
  Stmt target = require_loop(func, loop, kP);
  check_not_own_nest(func, c, target, kP);
  for (const BufferRegion& w : c.node->writes)
    if (writers_of(func, w.buffer).size() > 1)
      throw ScheduleError(kP + ".multiple_writers", "buffer '" + w.buffer->name + "' of block '" + block +
                                                        "' is written by other blocks too");
  Sources sources = sources_under(func, *c.node, target, kP);
  std::optional<ConsumerReads> reads = consumer_reads(*c.node, c.node->reads, sources.produced);
  if (!reads || (!reads->whole.empty() && reads->plain.empty()))
    throw ScheduleError(kP + ".read_not_trivial",
                        "block '" + block +
                            "' does not read its producers' buffers at "
                            "plain iteration variables, so the produced region cannot be "
                            "mapped back to its iterations");
  std::vector<std::string> consumers = names_of(neighbours(func, *c.node, c.node->writes, true));

  PrimFunc removed = remove_stmt(func, removable_nest(func, c.node).get());
  Stmt at = find_loop(removed, loop);
  int last_producer = item_span(removed, at, sources.producers).second;
  int first_consumer = item_span(removed, at, consumers).first;
  if (first_consumer >= 0 && first_consumer <= last_producer)
    throw ScheduleError(kP + ".dependence", "under loop '" + loop->name + "', a consumer of block '" + block +
                                                "' runs no later than its last producer");
  Analyzer analyzer = analyzer_for(loops_to(removed, at));
  RegionMap written = written_regions(removed, sources, loop, analyzer, kP);
  check_written_whole(*reads, written, analyzer, block, loop, kP);
  NestPlan plan = plan_consumer(*c.node, reads->plain, written, loop, analyzer, kP);
  PrimFunc out = insert_in_loop(removed, at, last_producer + 1, build_nest(*c.node, plan));
  check_dependences_kept(func, out, block, kP);
  return out;
}

std::vector<const VarNode*> legal_compute_locations(const PrimFunc& func, const std::string& block) {
  BlockAt p = require_block(func, block, "compute_at");
  std::vector<Stmt> consumers = neighbours(func, *p.node, p.node->writes, true);
  std::vector<const VarNode*> legal;
  if (consumers.empty()) return legal;
  for (const Stmt& loop : loops_above(func, consumers.front().get())) {
    const VarNode* v = loop.as<ForNode>()->var.get();
    try {
      compute_at(func, block, v);
      legal.push_back(v);
    } catch (const ScheduleError&) {
      // Not a legal location; the tuner samples only the others.
    }
  }
  return legal;
}

}  // namespace tessel::sched
