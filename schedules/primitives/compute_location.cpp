// compute_at and legal_compute_locations: moving a block's loop nest under a
// loop of its consumers, regenerated to cover the region they read below that
// loop, by region analysis (ir/tensor/int_set.h; compute_location_nest.h).
#include <map>

#include "ir/tensor/functor.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/primitives/compute_location_nest.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;
using namespace location;

namespace {

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
