// Where the default CPU schedule puts an anchor's epilogues (the elementwise
// blocks that consume its result): in its register tile where they can go,
// else under the next loop out that takes them (declared in cpu_rules.h).
#include <set>
#include <string>
#include <vector>

#include "schedules/defaults/cpu_rules.h"
#include "schedules/tree_query.h"

namespace tessel::sched::cpu_rules {

namespace {

// The innermost loop vectorized; a row that is not whole vectors (an
// epilogue's row of 14, 28 or 56 under a per-channel loop) as masked
// vectors, not a remainder in narrower vectors and scalars: an epilogue's
// body can be long (a quantize and dequantize, an activation's polynomial),
// and its scalar remainder then cost more than masking every vector.
void vectorize_row(Schedule& sch, const std::string& name, int64_t lanes) {
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block(name));
  if (loops.empty()) return;
  int64_t extent = extent_of(sch, loops.back());
  if (extent <= 1) return;
  sch.vectorize(loops.back());
  if (extent % lanes != 0) sch.annotate(loops.back(), tir::kMaskedTail, 1);
}

bool reads_any(const tir::PrimFunc& func, const std::string& name,
               const std::set<const tir::BufferNode*>& bufs) {
  tir::Stmt block_stmt = find_block(func, name);
  const auto* block = block_stmt.as<tir::BlockNode>();
  for (const tir::BufferRegion& r : block->reads)
    if (bufs.count(r.buffer.get())) return true;
  return false;
}

}  // namespace

// Moves the elementwise blocks after the anchor that consume its result (or
// an attached epilogue's) under the anchor's tile loop, vectorized there; one
// that cannot go there (it reads a flat convolution's rows back as planes)
// under the next loop out that takes it, among `outward`.
void attach_epilogues(Context& ctx, const std::vector<BlockInfo>& blocks, size_t anchor,
                      const std::vector<LoopRV>& outward, std::set<std::string>& done) {
  std::set<const tir::BufferNode*> hot{blocks[anchor].output.get()};
  // An epilogue that also reads a larger anchor's result (a flat conv's
  // plane, beside the few positions of its tail) is not this anchor's to
  // take: under the tail's loops it ran serially over the whole plane.
  std::set<const tir::BufferNode*> larger;
  for (const BlockInfo& b : blocks)
    if (b.kind != BlockKind::kElementwise && b.output->num_elements() > blocks[anchor].output->num_elements())
      larger.insert(b.output.get());
  for (size_t i = anchor + 1; i < blocks.size(); ++i) {
    const BlockInfo& epi = blocks[i];
    if (epi.kind != BlockKind::kElementwise || done.count(epi.name) ||
        !reads_any(ctx.sch.func(), epi.name, hot) || reads_any(ctx.sch.func(), epi.name, larger))
      continue;
    bool attached = false;
    for (size_t l = 0; l < outward.size() && !attached; ++l)
      attached =
          attempt(ctx.sch, [&](Schedule& s) { s.reverse_compute_at(s.get_block(epi.name), outward[l]); });
    if (!attached) continue;
    attempt(ctx.sch, [&](Schedule& s) { vectorize_row(s, epi.name, lanes_for(epi, ctx.options)); });
    hot.insert(epi.output.get());
    done.insert(epi.name);
  }
}

// Whether some block reading the anchor's output cannot join its tile loop
// (a flat convolution's epilogue reads the rows back as planes): then the
// tile accumulates in a local buffer (TileShape::local_tile).
bool epilogue_stays_outside(const Schedule& sch, const std::vector<BlockInfo>& blocks, size_t index,
                            const TileShape& shape) {
  Schedule trial = sch;
  std::vector<LoopRV> outer;
  if (!attempt(trial, [&](Schedule& s) { outer = tile_reduction(s, blocks[index], shape); }) || outer.empty())
    return false;
  for (size_t i = index + 1; i < blocks.size(); ++i) {
    if (!reads_any(trial.func(), blocks[i].name, {blocks[index].output.get()})) continue;
    if (!attempt(trial,
                 [&](Schedule& s) { s.reverse_compute_at(s.get_block(blocks[i].name), outer.back()); }))
      return true;
  }
  return false;
}

}  // namespace tessel::sched::cpu_rules
