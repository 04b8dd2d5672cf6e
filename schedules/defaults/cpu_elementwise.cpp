// The default CPU schedule's rule for elementwise blocks: vectorized rows
// (with strided reads deinterleaved), fused planes for short rows, parallel
// outer loops.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"
#include "schedules/defaults/cpu_rules.h"
#include "schedules/tree_query.h"

namespace tessel::sched::cpu_rules {

// The loop among `loops` (the last one: the vector loop) whose iterations
// are the phases of a strided read along the vector loop: some load's last
// index is v * s + p (+ a constant), v the vector loop's variable, p the
// phase loop's, of extent s. -1 for none. (A conv input split into stride
// phases: Xs[.., p, .., q] = X[.., q * s + p].) Block bindings are
// substituted, so the block may sit under loops compute_at made.
int phase_loop(const Schedule& sch, const std::string& name, const std::vector<LoopRV>& loops) {
  tir::Stmt block_stmt = find_block(sch.func(), name);
  const auto* block = block_stmt.as<tir::BlockNode>();
  if (!block || loops.size() < 2) return -1;
  tir::VarMap bind;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) bind[block->iter_vars[i].var.get()] = block->iter_values[i];
  const tir::Var& v = sch.loop(loops.back()).var;
  int found = -1;
  tir::walk_exprs(block->body, [&](const tir::Expr& e) {
    const auto* load = e.as<tir::LoadNode>();
    if (found >= 0 || !load || load->indices.empty()) return;
    tir::Expr index = tir::substitute(load->indices.back(), bind);
    for (size_t l = 0; l + 1 < loops.size() && found < 0; ++l) {
      const tir::ForNode& f = sch.loop(loops[l]);
      const auto* s = f.extent.as<tir::IntImmNode>();
      if (!s || s->value < 2 || s->value > 4) continue;
      tir::Expr rest = tir::simplify(index - v * s->value - f.var);
      if (rest->kind == tir::ExprKind::kIntImm) found = int(l);
    }
  });
  return found;
}

// The phase loop moved inside the vector loop and unrolled: each vector
// iteration then reads all s phases of s vectors of input, which LLVM does
// with wide loads and shuffles; one phase at a time, it loads lane by lane.
void vectorize_with_phases(Schedule& sch, const std::vector<LoopRV>& loops, int phase) {
  LoopRV vec = loops.back();
  if (phase >= 0) {
    std::vector<LoopRV> order;
    for (size_t l = 0; l + 1 < loops.size(); ++l)
      if (int(l) != phase) order.push_back(loops[l]);
    order.push_back(vec);
    order.push_back(loops[size_t(phase)]);
    sch.reorder(order);
    sch.unroll(loops[size_t(phase)]);
  }
  sch.vectorize(vec);
}

// Rows of at least a vector: the outer loops fused into one parallel loop,
// the row vectorized whole (LLVM gives it its tail), so indices stay affine;
// a strided read's phase loop unrolled inside it (vectorize_with_phases).
// Shorter rows: everything fused into one loop, split into (outer, vector),
// parallel outer, vectorized inner.
void schedule_elementwise(Context& ctx, const BlockInfo& info) {
  if (info.iterations <= 1) return;
  int64_t lanes = lanes_for(info, ctx.options);
  int64_t row = info.extents.back();
  if (row >= lanes && info.extents.size() > 1) {
    std::vector<LoopRV> outer;
    bool shaped = attempt(ctx.sch, [&](Schedule& s) {
      std::vector<LoopRV> loops = s.get_loops(s.get_block(info.name));
      int phase = phase_loop(s, info.name, loops);
      vectorize_with_phases(s, loops, phase);
      loops.pop_back();
      if (phase >= 0) loops.erase(loops.begin() + phase);
      if (!loops.empty()) outer = {loops.size() > 1 ? s.fuse(loops) : loops[0]};  // none: [phase, row] only
    });
    if (shaped) parallelize(ctx, outer, info.iterations * info.ops_per_iter);
    return;
  }
  // Short rows: the trailing loops fused into a plane of a few vectors (7 x 7
  // -> 49), vectorized whole, the rest parallel. Its index stays one variable
  // of the plane: contiguous reads, and guards partition_vector_loops can split.
  size_t trailing = info.extents.size();
  int64_t plane = 1;
  while (trailing > 0 && plane < 4 * lanes) plane *= info.extents[--trailing];
  if (trailing > 0 && plane >= 4 * lanes) {
    LoopRV outer;
    bool shaped = attempt(ctx.sch, [&](Schedule& s) {
      std::vector<LoopRV> loops = s.get_loops(s.get_block(info.name));
      std::vector<LoopRV> inner(loops.begin() + long(trailing), loops.end());
      loops.resize(trailing);
      s.vectorize(s.fuse(inner));
      outer = loops.size() > 1 ? s.fuse(loops) : loops[0];
    });
    if (shaped) {
      parallelize(ctx, {outer}, info.iterations * info.ops_per_iter);
      return;
    }
  }
  int64_t vec = vector_factor(info.iterations, lanes);
  LoopRV outer;
  bool shaped = attempt(ctx.sch, [&](Schedule& s) {
    std::vector<LoopRV> loops = s.get_loops(s.get_block(info.name));
    LoopRV all = loops.size() > 1 ? s.fuse(loops) : loops[0];
    outer = all;
    if (vec == info.iterations) {
      s.vectorize(all);
    } else if (vec > 1) {
      std::vector<LoopRV> parts = s.split(all, {info.iterations / vec, vec}, /*exact=*/true);
      s.vectorize(parts[1]);
      outer = parts[0];
    }
  });
  if (shaped && vec != info.iterations) parallelize(ctx, {outer}, info.iterations * info.ops_per_iter);
}

}  // namespace tessel::sched::cpu_rules
