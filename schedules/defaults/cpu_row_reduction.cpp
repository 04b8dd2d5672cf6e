// The row-reduction rule of the default CPU schedule (declared in
// cpu_rules.h): a reduction along the rows it reads in order, summed by lanes.
#include "ir/tensor/functor.h"
#include "schedules/defaults/cpu_rules.h"
#include "schedules/tree_query.h"

namespace tessel::sched::cpu_rules {

namespace {

// Whether every load in the block but its accumulator's reads the reduction
// variables (the block's last `count` iteration variables) only in its last
// indices, one each, in order, over the whole of those dimensions: the
// reduction then walks a contiguous run of each row, and the fused reduction
// loop reads it in order. Unit dimensions and reduction variables of extent 1
// (a 1x1 conv's window over a 1x1 plane) move nothing and are left out.
bool reads_reduction_in_rows(const tir::BlockNode& block, const std::vector<int64_t>& extents, size_t count) {
  std::vector<const tir::VarNode*> ks;
  std::vector<int64_t> k_extents;
  for (size_t i = block.iter_vars.size() - count; i < block.iter_vars.size(); ++i)
    if (extents[i] > 1) {
      ks.push_back(block.iter_vars[i].var.get());
      k_extents.push_back(extents[i]);
    }
  bool in_rows = true;
  tir::walk_exprs(block.body, [&](const tir::Expr& e) {
    const auto* load = e.as<tir::LoadNode>();
    if (!load || load->indices.empty() || load->buffer.same_as(block.writes[0].buffer)) return;  // the accumulator
    std::vector<tir::Expr> indices;
    std::vector<int64_t> shape;
    for (size_t d = 0; d < load->indices.size(); ++d)
      if (load->buffer->shape[d] != 1) {
        indices.push_back(load->indices[d]);
        shape.push_back(load->buffer->shape[d]);
      }
    bool reads_along = false;  // a load the reduction does not move (the row's max in a softmax) is no constraint
    for (const tir::Expr& index : indices)
      for (const tir::VarNode* k : ks) reads_along = reads_along || tir::uses_var(index, k);
    if (!reads_along) return;
    size_t rank = indices.size(), n = ks.size();
    for (size_t d = 0; d < rank; ++d) {
      bool touches = false;
      for (const tir::VarNode* k : ks) touches = touches || tir::uses_var(indices[d], k);
      if (rank - d > n) {  // a row index
        in_rows = in_rows && !touches;
        continue;
      }
      size_t j = n - (rank - d);  // the reduction variable this index should be
      in_rows = in_rows && indices[d].as<tir::VarNode>() == ks[j] && shape[d] == k_extents[j];
    }
  });
  return in_rows;
}

// Whether a load of the block that moves along the reduction does not read
// iteration variable `v`: rows of outputs along v then share its vectors (the
// input of a matrix-vector product, shared by the weight rows of several
// outputs; a weight row, shared by several positions' inputs).
bool shares_a_row_across(const tir::BlockNode& block, size_t v, size_t count) {
  const tir::VarNode* var = block.iter_vars[v].var.get();
  bool shared = false;
  tir::walk_exprs(block.body, [&](const tir::Expr& e) {
    const auto* load = e.as<tir::LoadNode>();
    if (!load || load->buffer.same_as(block.writes[0].buffer)) return;
    bool along = false, reads_v = false;
    for (const tir::Expr& index : load->indices) {
      for (size_t k = block.iter_vars.size() - count; k < block.iter_vars.size(); ++k)
        along = along || tir::uses_var(index, block.iter_vars[k].var.get());
      reads_v = reads_v || tir::uses_var(index, var);
    }
    shared = shared || (along && !reads_v);
  });
  return shared;
}

// Outputs summed together per reduction step: a step then loads the shared
// row's vector once for all of them, where one output at a time loaded both
// operands per FMA (as many loads as FMAs, on two load ports). The whole loop
// when it is short (the few positions of a pointwise conv's tail), else a
// divisor of up to kMostSharedRows.
constexpr int64_t kMostSharedRows = 12;

int64_t shared_rows(int64_t extent) {
  if (extent <= kMostSharedRows) return extent;
  for (int64_t d = kMostSharedRows / 2; d > 1; --d)
    if (extent % d == 0) return d;
  return 1;
}

}  // namespace

// A reduction along the rows it reads in order (softmax's max and sum,
// LayerNorm's sums, ReduceSum over the last axis, global pooling over the
// last two) has no contiguous spatial vector loop (a spatial loop vectorized
// there would gather across rows), and a float reduction loop stays scalar
// (LLVM may not reorder the sum). So the reduction loops (fused when
// there are several) are split by a vector factor and the inner part
// factored out (rfactor): partial results per lane, vectorized, then a
// reduction of the lanes. Requires the reduction loops innermost and every
// load reading them in order in its last indices.
bool schedule_row_reduction(Context& ctx, const BlockInfo& info) {
  size_t count = info.reduce.size();
  if (count == 0) return false;
  for (size_t j = 0; j < count; ++j)
    if (info.reduce[j] != int(info.extents.size() - count + j)) return false;
  int64_t extent = 1;
  for (int p : info.reduce) extent *= info.extents[size_t(p)];
  int64_t lanes = lanes_for(info, ctx.options), factor = vector_factor(extent, lanes);
  if (factor < lanes / 2 || extent / factor < 2) return false;
  tir::Stmt block_stmt = find_block(ctx.sch.func(), info.name);
  if (!reads_reduction_in_rows(*block_stmt.as<tir::BlockNode>(), info.extents, count)) return false;
  const auto& block = *block_stmt.as<tir::BlockNode>();
  size_t spatial_end = info.extents.size() - count;  // past the innermost spatial loop of extent > 1
  while (spatial_end > 0 && info.extents[spatial_end - 1] == 1) --spatial_end;
  size_t last_spatial = spatial_end > 0 ? spatial_end - 1 : 0;
  int64_t rows = 1;
  if (spatial_end > 0 && shares_a_row_across(block, last_spatial, count)) {
    int64_t spatial = info.extents[last_spatial];
    rows = choose(ctx, ctx.sch, info.name + ".shared_rows", {1, shared_rows(spatial)}, shared_rows(spatial));
  }
  std::vector<LoopRV> outer;
  bool shaped = attempt(ctx.sch, [&](Schedule& s) {
    BlockRV b = s.get_block(info.name);
    std::vector<LoopRV> loops = s.get_loops(b);
    std::vector<LoopRV> reduce_loops(loops.end() - long(count), loops.end());
    LoopRV k = count == 1 ? reduce_loops[0] : s.fuse(reduce_loops);
    std::vector<LoopRV> k_parts = s.split(k, {extent / factor, factor}, /*exact=*/true);
    BlockRV rf = s.rfactor(k_parts[1], int(info.output->rank()));
    std::vector<LoopRV> rf_loops = s.get_loops(rf);  // [spatial..., k_outer, lane]
    LoopRV k_outer = rf_loops[rf_loops.size() - 2], lane = rf_loops.back();
    if (rows > 1) {  // [..., spatial_outer, k_outer, rows (unrolled), lane]
      std::vector<LoopRV> parts =
          s.split(rf_loops[last_spatial], {info.extents[last_spatial] / rows, rows}, true);
      s.reorder({k_outer, parts[1]});
      s.unroll(parts[1]);
      rf_loops = s.get_loops(rf);
    }
    BlockRV init = s.decompose_reduction(rf, k_outer);
    s.vectorize(lane);
    s.vectorize(s.get_loops(init).back());
    outer.assign(rf_loops.begin(), rows > 1 ? rf_loops.begin() + long(last_spatial) + 1 : rf_loops.end() - 2);
  });
  if (!shaped) return false;
  // The lanes of each row are summed right after its partial sums, inside the
  // parallel loop, not in a serial pass over every row afterwards.
  if (!outer.empty())
    attempt(ctx.sch, [&](Schedule& s) { s.reverse_compute_at(s.get_block(info.name), outer.back()); });
  parallelize(ctx, outer, info);
  return true;
}

}  // namespace tessel::sched::cpu_rules
