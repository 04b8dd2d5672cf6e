// The default CPU schedule's rule for elementwise blocks: vectorized rows
// (with strided reads deinterleaved), fused planes for short rows, parallel
// outer loops.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"
#include "schedules/defaults/cpu_rules.h"
#include "schedules/tree_query.h"

namespace tessel::sched::cpu_rules {

namespace {

// The block's iteration variables -> their bindings: substituted into its
// indices, they read in terms of the loops above it.
tir::VarMap block_bindings(const tir::BlockNode& block) {
  tir::VarMap bind;
  for (size_t i = 0; i < block.iter_vars.size(); ++i)
    bind[block.iter_vars[i].var.get()] = block.iter_values[i];
  return bind;
}

// An index without the clamp of a guarded read, max(min(i, hi), lo) -> i:
// inside the guard, where it is read, the clamp is the identity.
tir::Expr unclamped(tir::Expr e) {
  while (e->kind == tir::ExprKind::kMax || e->kind == tir::ExprKind::kMin) {
    const tir::Expr &a = tir::binary_a(*e), &b = tir::binary_b(*e);
    if (b->kind == tir::ExprKind::kIntImm)
      e = a;
    else if (a->kind == tir::ExprKind::kIntImm)
      e = b;
    else
      break;
  }
  return e;
}

}  // namespace

// The loop among `loops` (the last one: the vector loop) whose iterations
// are the phases of a strided read along the vector loop: some load's last
// index is v * s + p (+ a constant), v the vector loop's variable, p the
// phase loop's, of extent s. -1 for none. (A conv input split into stride
// phases: Xs[.., p, .., q] = X[.., q * s + p], or its guarded read
// X[.., max(min(q * s + p - 1, W - 1), 0)] where the padding joined it.)
// Block bindings are substituted, so the block may sit under loops
// compute_at made.
int phase_loop(const Schedule& sch, const std::string& name, const std::vector<LoopRV>& loops) {
  tir::Stmt block_stmt = find_block(sch.func(), name);
  const auto* block = block_stmt.as<tir::BlockNode>();
  if (!block || loops.size() < 2) return -1;
  tir::VarMap bind = block_bindings(*block);
  const tir::Var& v = sch.loop(loops.back()).var;
  int found = -1;
  tir::walk_exprs(block->body, [&](const tir::Expr& e) {
    const auto* load = e.as<tir::LoadNode>();
    if (found >= 0 || !load || load->indices.empty()) return;
    tir::Expr index = tir::substitute(unclamped(load->indices.back()), bind);
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

namespace {

// A plane of at most this many positions, each gathered from its own cache
// line, stays in a core's L1 (32 KiB or more) from one channel to the next.
constexpr int64_t kGatheredPlaneInL1 = 512;

// The outer loop (an index into `loops`, the last one the vector loop) along
// which a load the vector loop gathers steps by one element, or -1: a
// transposing read, such as a channels-last conv's result read back per
// channel plane, Yt[n, h * W + w, c] along w. Moved just outside the vector
// loop (gathers_close), each gather then reads the cache lines the previous
// one read, where a channel's plane of them would not stay in L1 until the
// next channel reads it (a small plane keeps the channel outside: whole
// planes written in order, and no row shared by two threads).
int gathered_row_loop(const Schedule& sch, const std::string& name, const std::vector<LoopRV>& loops) {
  tir::Stmt block_stmt = find_block(sch.func(), name);
  const auto* block = block_stmt.as<tir::BlockNode>();
  if (!block || loops.size() < 3) return -1;
  tir::VarMap bind = block_bindings(*block);
  auto at = [&](int one) {  // every loop at 0, loop `one` (if any) at 1
    tir::VarMap point;
    for (size_t l = 0; l < loops.size(); ++l)
      point[sch.loop(loops[l]).var.get()] = tir::int_imm(int(l) == one ? 1 : 0);
    return point;
  };
  int vector = int(loops.size()) - 1, found = -1;
  tir::walk_exprs(block->body, [&](const tir::Expr& e) {
    const auto* load = e.as<tir::LoadNode>();
    if (found >= 0 || !load || load->indices.empty()) return;
    std::vector<tir::Expr> indices;
    for (const tir::Expr& i : load->indices) indices.push_back(tir::substitute(i, bind));
    std::optional<int64_t> base = tir::constant_offset(load->buffer, indices, at(-1));
    std::optional<int64_t> along = tir::constant_offset(load->buffer, indices, at(vector));
    if (!base || !along || *along - *base == 0 || *along - *base == 1) return;
    for (int l = vector - 2; l >= 0 && found < 0; --l) {
      std::optional<int64_t> step = tir::constant_offset(load->buffer, indices, at(l));
      if (step && *step - *base == 1) found = l;
    }
  });
  int64_t plane = 1;  // what one iteration of the found loop gathers
  for (int l = found + 1; found >= 0 && l <= vector; ++l) plane *= extent_of(sch, loops[size_t(l)]);
  return found >= 0 && plane > kGatheredPlaneInL1 ? found : -1;
}

// The loops with loops[row] moved just outside the vector loop (the last).
std::vector<LoopRV> gathers_close(Schedule& sch, std::vector<LoopRV> loops, int row) {
  if (row < 0) return loops;
  LoopRV moved = loops[size_t(row)];
  loops.erase(loops.begin() + row);
  loops.insert(loops.end() - 1, moved);
  sch.reorder(loops);
  return loops;
}

// Whether the block's iteration variables from `first` on, fused into one
// index, keep every access in order: as it steps, each load's and the
// store's address steps by one everywhere or stays put everywhere. Probed at
// the steps that matter for an affine address: the innermost variable's first
// step and each carry into an outer variable of the group. A flat conv's
// accumulator read as [c, h * 18 + w] is in order along w only; a gate read
// per channel stays put along (h, w), not along (c, h, w): fused, they read
// with gathers.
bool fuses_in_order(const tir::BlockNode& block, const std::vector<int64_t>& extents, size_t first) {
  using Point = std::vector<int64_t>;
  std::vector<std::pair<Point, Point>> steps;  // the fused index's step from .first to .second
  for (size_t d = first; d < extents.size(); ++d) {
    if (extents[d] < 2) continue;
    Point from(extents.size(), 0), to(extents.size(), 0);
    for (size_t e = d + 1; e < extents.size(); ++e) from[e] = extents[e] - 1;
    to[d] = 1;
    steps.emplace_back(from, to);
  }
  auto bind = [&](const Point& point) {
    tir::VarMap at;
    for (size_t v = 0; v < block.iter_vars.size() && v < point.size(); ++v)
      at[block.iter_vars[v].var.get()] = tir::int_imm(point[v]);
    return at;
  };
  auto in_order = [&](const tir::Buffer& buffer, const std::vector<tir::Expr>& indices) {
    bool all_one = true, all_still = true;
    for (const auto& [from, to] : steps) {
      std::optional<int64_t> x = tir::constant_offset(buffer, indices, bind(from)),
                             y = tir::constant_offset(buffer, indices, bind(to));
      all_one = all_one && x && y && *y - *x == 1;
      all_still = all_still && x && y && *y == *x;
    }
    return all_one || all_still;
  };
  bool ok = true;
  tir::walk_exprs(block.body, [&](const tir::Expr& e) {
    if (const auto* load = e.as<tir::LoadNode>(); ok && load && !load->indices.empty())
      ok = in_order(load->buffer, load->indices);
  });
  tir::walk(block.body, [&](const tir::Stmt& st) {
    if (const auto* store = st.as<tir::StoreNode>(); ok && store) ok = in_order(store->buffer, store->indices);
    return ok;
  });
  return ok;
}

}  // namespace

// A short-row block's trailing loops fuse until the plane holds this many vectors.
constexpr int64_t kPlaneVectors = 4;

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
      if (phase < 0) loops = gathers_close(s, loops, gathered_row_loop(s, info.name, loops));
      vectorize_with_phases(s, loops, phase);
      loops.pop_back();
      if (phase >= 0) loops.erase(loops.begin() + phase);
      if (!loops.empty()) outer = {loops.size() > 1 ? s.fuse(loops) : loops[0]};  // none: [phase, row] only
    });
    if (shaped) parallelize(ctx, outer, info);
    return;
  }
  // Short rows: the trailing loops fused into a plane of a few vectors (7 x 7
  // -> 49) as long as the plane's index keeps every access in order,
  // vectorized whole, the rest parallel. Its index stays one variable of the
  // plane: contiguous reads, and guards partition_vector_loops can split.
  tir::Stmt block_stmt = find_block(ctx.sch.func(), info.name);
  const auto* block = block_stmt.as<tir::BlockNode>();
  size_t trailing = info.extents.size() - 1;
  int64_t plane = row;
  int64_t plane_vectors = choose(ctx, ctx.sch, info.name + ".plane", {1, 2, 4, 8, 16}, kPlaneVectors);
  while (trailing > 0 && plane < plane_vectors * lanes && block && fuses_in_order(*block, info.extents, trailing - 1))
    plane *= info.extents[--trailing];
  if (trailing > 0) {
    LoopRV outer;
    bool shaped = attempt(ctx.sch, [&](Schedule& s) {
      std::vector<LoopRV> loops = s.get_loops(s.get_block(info.name));
      if (trailing + 1 == loops.size())
        loops = gathers_close(s, loops, gathered_row_loop(s, info.name, loops));
      std::vector<LoopRV> inner(loops.begin() + long(trailing), loops.end());
      loops.resize(trailing);
      LoopRV plane_loop = inner.size() > 1 ? s.fuse(inner) : inner[0];
      s.vectorize(plane_loop);
      // Left to LLVM, a row of 14 with a sigmoid ran as three 4-lane vectors and two scalars.
      if (plane % lanes != 0) s.annotate(plane_loop, tir::kMaskedTail, 1);
      outer = loops.size() > 1 ? s.fuse(loops) : loops[0];
    });
    if (shaped) {
      parallelize(ctx, {outer}, info);
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
  if (shaped && vec != info.iterations) parallelize(ctx, {outer}, info);
}

}  // namespace tessel::sched::cpu_rules
