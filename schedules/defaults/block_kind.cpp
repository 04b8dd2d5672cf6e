// Block classification for the default CPU schedule (see block_kind.h).
#include "schedules/defaults/block_kind.h"

#include <algorithm>

#include "ir/tensor/functor.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/loop_analysis.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

const char* block_kind_name(BlockKind kind) {
  switch (kind) {
    case BlockKind::kMatmul: return "matmul";
    case BlockKind::kConv: return "conv";
    case BlockKind::kDepthwise: return "depthwise";
    case BlockKind::kReduction: return "reduction";
    case BlockKind::kElementwise: return "elementwise";
    case BlockKind::kOther: return "other";
  }
  return "?";
}

namespace {

using tir::Expr;
using tir::ExprKind;
using tir::LoadNode;
using tir::VarNode;

std::vector<const LoadNode*> loads_in(const Expr& e) {
  std::vector<const LoadNode*> out;
  tir::walk_exprs(e, [&](const Expr& x) {
    if (const auto* load = x.as<LoadNode>()) out.push_back(load);
  });
  return out;
}

bool load_uses(const LoadNode& load, const VarNode* v) {
  for (const Expr& index : load.indices)
    if (tir::uses_var(index, v)) return true;
  return false;
}

// The iteration variables of the block, by loop position.
struct Vars {
  std::vector<const VarNode*> spatial, reduce;  // parallel to BlockInfo::spatial / reduce
};

// A windowed access: one index mixes a spatial and a reduction variable
// (conv's h * stride + kh, pooling's window).
bool is_windowed(const LoadNode& load, const Vars& vars) {
  for (const Expr& index : load.indices) {
    bool s = false, r = false;
    for (const VarNode* v : vars.spatial) s = s || tir::uses_var(index, v);
    for (const VarNode* v : vars.reduce) r = r || tir::uses_var(index, v);
    if (s && r) return true;
  }
  return false;
}

// The loads of each operand of `acc += a * b` (under casts and selects: zero
// padding, an inlined Concat choosing between inputs), when every load of both
// uses every reduction variable.
using Loads = std::vector<const LoadNode*>;

bool match_contraction(const tir::BlockNode& block, const Vars& vars, Loads* a, Loads* b) {
  std::optional<ReductionPattern> pattern = match_reduction(block);
  if (!pattern || pattern->op != ReduceOp::kSum) return false;
  Expr value = pattern->value;
  while (const auto* cast = value.as<tir::CastNode>()) value = cast->value;
  if (value->kind != ExprKind::kMul) return false;
  Loads la = loads_in(tir::binary_a(*value)), lb = loads_in(tir::binary_b(*value));
  if (la.empty() || lb.empty()) return false;
  for (const Loads* side : {&la, &lb})
    for (const LoadNode* load : *side)
      for (const VarNode* r : vars.reduce)
        if (!load_uses(*load, r)) return false;
  *a = std::move(la);
  *b = std::move(lb);
  return true;
}

bool any_uses(const Loads& loads, const VarNode* v) {
  for (const LoadNode* load : loads)
    if (load_uses(*load, v)) return true;
  return false;
}

bool any_windowed(const Loads& loads, const Vars& vars) {
  for (const LoadNode* load : loads)
    if (is_windowed(*load, vars)) return true;
  return false;
}

// Whether vectorizing over v reads memory in order: every load other than the
// accumulator either ignores v or uses it in its last index.
bool contiguous_in(const tir::BlockNode& block, const tir::Buffer& output, const VarNode* v) {
  bool ok = true;
  tir::walk_exprs(block.body, [&](const Expr& x) {
    const auto* load = x.as<LoadNode>();
    if (!load || load->buffer.get() == output.get() || load->indices.empty()) return;
    if (load_uses(*load, v) && !tir::uses_var(load->indices.back(), v)) ok = false;
  });
  return ok;
}

int64_t count_ops(const tir::Stmt& body) {
  int64_t n = 0;
  tir::walk_exprs(body, [&](const Expr& x) {
    if (tir::is_binary(x->kind) || x->kind == ExprKind::kCall || x->kind == ExprKind::kSelect) ++n;
  });
  return std::max<int64_t>(n, 1);
}

int64_t bytes_moved(const tir::BlockNode& block, int64_t iterations) {
  std::vector<const tir::BufferNode*> seen;
  int64_t bytes = 0;
  auto add = [&](const std::vector<tir::BufferRegion>& regions) {
    for (const tir::BufferRegion& r : regions) {
      if (std::find(seen.begin(), seen.end(), r.buffer.get()) != seen.end()) continue;
      seen.push_back(r.buffer.get());
      int64_t elements = std::min(r.buffer->num_elements(), iterations);
      bytes += elements * int64_t(dtype_size(r.buffer->dtype));
    }
  };
  add(block.reads);
  add(block.writes);
  return bytes;
}

bool has_inner_loop(const tir::BlockNode& block) {
  bool found = false;
  tir::walk(block.body, [&](const tir::Stmt& s) {
    found = found || s->kind == tir::StmtKind::kFor;
    return !found;
  });
  return found;
}

// Reads the loop nest into info; false when it is not in the lowered form.
bool read_nest(const tir::PrimFunc& func, const tir::BlockNode& block, const tir::Stmt& stmt, BlockInfo& info,
               Vars& vars) {
  std::vector<tir::Stmt> loops = loops_above(func, stmt.get());
  if (loops.empty() || loops.size() != block.iter_vars.size() || !predicate_is_true(block)) return false;
  if (blocks_below(loops.front()).size() != 1 || has_inner_loop(block) || block.writes.empty()) return false;
  for (size_t l = 0; l < loops.size(); ++l) {
    const auto& loop = *loops[l].as<tir::ForNode>();
    const auto* min = loop.min.as<tir::IntImmNode>();
    const auto* extent = loop.extent.as<tir::IntImmNode>();
    if (!min || min->value != 0 || !extent || block.iter_values[l].get() != loop.var.get()) return false;
    const tir::IterVar& iv = block.iter_vars[l];
    info.extents.push_back(extent->value);
    info.iterations *= extent->value;
    if (iv.kind == tir::IterKind::kSpatial) {
      if (!info.reduce.empty()) return false;  // a spatial loop inside a reduction loop
      info.spatial.push_back(int(l));
      vars.spatial.push_back(iv.var.get());
    } else {
      info.reduce.push_back(int(l));
      vars.reduce.push_back(iv.var.get());
    }
  }
  info.output = block.writes[0].buffer;
  info.ops_per_iter = count_ops(block.body);
  info.bytes = bytes_moved(block, info.iterations);
  return true;
}

// The innermost spatial loop of extent > 1 (positions into info.spatial), or -1.
int innermost_wide(const BlockInfo& info, int below) {
  for (int s = below - 1; s >= 0; --s)
    if (info.extents[info.spatial[s]] > 1) return s;
  return -1;
}

void classify_contraction(const BlockInfo& base, const Vars& vars, const Loads& a, const Loads& b,
                          BlockInfo& info) {
  int vec = innermost_wide(base, int(base.spatial.size()));
  info.vector_loop = vec < 0 ? -1 : base.spatial[vec];
  bool wa = any_windowed(a, vars), wb = any_windowed(b, vars);
  if (!wa && !wb) {
    info.kind = BlockKind::kMatmul;
    // The rows of the outer-product tile: the next spatial loop out that only
    // the operand not read along the vector loop reads (A's rows for A x B;
    // the output channels of a 1x1 convolution, whose vector runs along a row
    // of its input).
    const VarNode* column = vec < 0 ? nullptr : vars.spatial[vec];
    const Loads& row_operand = column && any_uses(a, column) ? b : a;
    const Loads& column_operand = &row_operand == &a ? b : a;
    for (int s = vec - 1; s >= 0; --s) {
      const VarNode* v = vars.spatial[s];
      if (base.extents[base.spatial[s]] > 1 && any_uses(row_operand, v) && !any_uses(column_operand, v)) {
        info.unroll_loop = base.spatial[s];
        break;
      }
    }
    return;
  }
  // The tile's rows: the output channel (read by the weight, not by the
  // windowed input); with the output channels in the vector (a channels-last
  // conv), the positions (read by the input, not by the weight). A
  // depthwise conv computed channels-last reads input and weight along the
  // vector's channels, and its rows are the positions too.
  const Loads& input = wa ? a : b;
  const Loads& weight = wa ? b : a;
  const VarNode* column = vec < 0 ? nullptr : vars.spatial[size_t(vec)];
  bool channels_in_lanes = column && any_uses(weight, column);
  const Loads& row_operand = channels_in_lanes ? input : weight;
  const Loads& other = channels_in_lanes ? weight : input;
  for (int s = int(vars.spatial.size()) - 1; s >= 0; --s) {
    const VarNode* v = vars.spatial[s];
    if (s != vec && base.extents[base.spatial[s]] > 1 && any_uses(row_operand, v) && !any_uses(other, v)) {
      info.unroll_loop = base.spatial[s];
      break;
    }
  }
  info.kind = info.unroll_loop >= 0 ? BlockKind::kConv : BlockKind::kDepthwise;
  info.channels_in_lanes = channels_in_lanes && info.unroll_loop >= 0;
  info.input_per_channel = info.channels_in_lanes && any_uses(input, column);
}

}  // namespace

BlockInfo classify_block(const tir::PrimFunc& func, const std::string& name) {
  BlockInfo info;
  info.name = name;
  tir::Stmt stmt = find_block(func, name);
  const auto* block = stmt.defined() ? stmt.as<tir::BlockNode>() : nullptr;
  Vars vars;
  if (!block || !read_nest(func, *block, stmt, info, vars)) {
    info.kind = BlockKind::kOther;
    return info;
  }
  if (info.reduce.empty()) {
    info.kind = is_complete(*block) ? BlockKind::kElementwise : BlockKind::kOther;
    return info;
  }
  if (info.spatial.empty() || !match_reduction(*block)) {
    info.kind = BlockKind::kOther;
    return info;
  }
  Loads a, b;
  if (match_contraction(*block, vars, &a, &b)) {
    classify_contraction(info, vars, a, b, info);
    int vec = innermost_wide(info, int(info.spatial.size()));  // the vector loop's position among the spatial ones
    if (vec >= 0) info.vector_in_order = contiguous_in(*block, info.output, vars.spatial[size_t(vec)]);
    return info;
  }
  info.kind = BlockKind::kReduction;
  int vec = innermost_wide(info, int(info.spatial.size()));
  if (vec >= 0 && contiguous_in(*block, info.output, vars.spatial[vec])) info.vector_loop = info.spatial[vec];
  return info;
}

std::vector<BlockInfo> classify_blocks(const tir::PrimFunc& func) {
  std::vector<BlockInfo> out;
  for (const tir::Stmt& b : all_blocks(func))
    if (b.get() != func->body.get()) out.push_back(classify_block(func, b.as<tir::BlockNode>()->name));
  return out;
}

}  // namespace tessel::sched
