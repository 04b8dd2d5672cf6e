// reverse_compute_at: moving a consumer's loop nest under a loop of its
// producers, regenerated to iterate over exactly what they write below that
// loop, by region analysis (ir/tensor/int_set.h; compute_location_nest.h).
#include <algorithm>

#include "ir/tensor/functor.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/primitives/compute_location_nest.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;
using namespace location;

namespace {

bool uses_iter_var(const BlockNode& block, const Expr& e) {
  return std::any_of(block.iter_vars.begin(), block.iter_vars.end(),
                     [&](const IterVar& iv) { return uses_var(e, iv.var.get()); });
}

// A consumer's reads of the buffers produced under the loop: the plain
// dimensions as plain_index_map; a dimension read at one point computed from
// iteration variables (a flat plane's row h * W' + w) maps nothing, so the
// producers must write it whole below the loop and its variables run over
// their whole domain there. nullopt when a read spans more than one point.
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
  // A buffer another block writes too may be moved only when no block reads
  // it here (a kernel output written in parts, a flat head and its tail):
  // then only the order of the writers matters, and check_dependences_kept
  // keeps it.
  for (const BufferRegion& w : c.node->writes)
    if (writers_of(func, w.buffer).size() > 1 && !readers_of(func, w.buffer).empty())
      throw ScheduleError(kP + ".multiple_writers", "buffer '" + w.buffer->name + "' of block '" + block +
                                                        "' is written by other blocks and read here");
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

}  // namespace tessel::sched
