// prefetch: while a block reads one slice of a parameter (a weight panel),
// ask the cache for the next slice, a few lines per iteration of a loop, so
// that the slice arrives from memory while this one is computed on instead of
// when the block first reads it.
#include <algorithm>

#include "ir/tensor/functor.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

namespace {

const std::string kP = "prefetch";

// The slice index the read uses, in terms of the loops above the block.
Expr slice_index(const BlockNode& block, const BufferRegion& read, const Analyzer& loops) {
  if (!is_const_int(read.region[0].extent, 1))
    throw ScheduleError(kP + ".not_sliced", "block '" + block.name + "' reads a range of '" +
                                                read.buffer->name +
                                                "' along its first dimension, not one slice at a time");
  VarMap bindings;
  for (size_t i = 0; i < block.iter_vars.size(); ++i)
    bindings[block.iter_vars[i].var.get()] = block.iter_values[i];
  return loops.simplify(substitute(read.region[0].min, bindings));
}

// The loops above the block, and the slice index in terms of them.
struct SliceAccess {
  std::vector<Stmt> loops;
  Analyzer analyzer;
  Expr slice;
  int slice_loop = -1;  // the innermost loop the slice index uses, in `loops`
};

SliceAccess slice_access(const PrimFunc& func, const BlockNode& block, const BufferRegion& read) {
  SliceAccess a;
  a.loops = loops_above(func, &block);
  for (const Stmt& l : a.loops)
    a.analyzer.bind(l.as<ForNode>()->var, Range{l.as<ForNode>()->min, l.as<ForNode>()->extent});
  a.slice = slice_index(block, read, a.analyzer);
  for (size_t i = 0; i < a.loops.size(); ++i)
    if (uses_var(a.slice, a.loops[i].as<ForNode>()->var.get())) a.slice_loop = int(i);
  return a;
}

}  // namespace

int prefetch_slice_loop(const PrimFunc& func, const std::string& block, int read_index) {
  BlockAt b = require_block(func, block, kP);
  if (read_index < 0 || read_index >= int(b.node->reads.size())) return -1;
  const BufferRegion& read = b.node->reads[size_t(read_index)];
  if (!is_const_int(read.region[0].extent, 1)) return -1;
  return slice_access(func, *b.node, read).slice_loop;
}

PrimFunc prefetch(const PrimFunc& func, const std::string& block, int read_index, const VarNode* at) {
  BlockAt b = require_block(func, block, kP);
  if (read_index < 0 || read_index >= int(b.node->reads.size()))
    throw ScheduleError(kP + ".bad_index", "block '" + block + "' reads " +
                                               std::to_string(b.node->reads.size()) + " buffer(s); index " +
                                               std::to_string(read_index) + " is out of range");
  const BufferRegion& read = b.node->reads[size_t(read_index)];
  const Buffer& buffer = read.buffer;
  if (is_intermediate(func, buffer) || buffer->rank() < 2 || !buffer->is_row_major())
    throw ScheduleError(kP + ".not_parameter", "'" + buffer->name +
                                                   "' is not a dense parameter of rank 2 or more: only "
                                                   "a parameter's slices stay where a prefetch finds them");
  SliceAccess access = slice_access(func, *b.node, read);
  const std::vector<Stmt>& loops = access.loops;
  const Expr& slice = access.slice;
  auto at_it = std::find_if(loops.begin(), loops.end(),
                            [&](const Stmt& l) { return l.as<ForNode>()->var.get() == at; });
  if (at_it == loops.end())
    throw ScheduleError(kP + ".no_loop", "no loop above block '" + block + "' is the given one");
  // The slice loop: the innermost loop the slice index uses; the loops below
  // it down to `at` stream the next slice in order.
  auto slice_it = access.slice_loop < 0 ? loops.end() : loops.begin() + access.slice_loop;
  if (slice_it == loops.end())
    throw ScheduleError(kP + ".no_slice_loop",
                        "block '" + block + "' reads one slice of '" + buffer->name + "' only");
  if (slice_it >= at_it)
    throw ScheduleError(kP + ".slice_varies", "the slice of '" + buffer->name + "' changes inside loop '" +
                                                  at->name + "'; prefetch at a loop inside the slice's loop");
  Expr position = int_imm(0);
  int64_t stream = 1;
  for (auto it = slice_it + 1; it <= at_it; ++it) {
    const auto& loop = *it->as<ForNode>();
    const int64_t* extent = as_const_int(loop.extent);
    if (!extent)
      throw ScheduleError(kP + ".dynamic_extent", "loop '" + loop.var->name + "' has no constant extent");
    position = position * int_imm(*extent) + (Expr(loop.var) - loop.min);
    stream *= *extent;
  }
  int64_t slice_elems = 1;
  for (int d = 1; d < buffer->rank(); ++d) slice_elems *= buffer->shape[d];
  int64_t elem_bytes = int64_t(dtype_size(buffer->dtype));
  int64_t line_elems = std::max<int64_t>(1, PrefetchNode::kLineBytes / elem_bytes);
  int64_t lines = (slice_elems + line_elems - 1) / line_elems;
  int64_t lines_per_step = (lines + stream - 1) / stream;
  const auto& slice_loop = *slice_it->as<ForNode>();
  Expr next = min(substitute(slice, VarMap{{slice_loop.var.get(), Expr(slice_loop.var) + int_imm(1)}}),
                  int_imm(buffer->shape[0] - 1));
  // Step p starts at line p * lines / stream: the steps cover the slice once,
  // not lines_per_step * stream lines running on into the slices after it.
  Expr first_line = floordiv(position * int_imm(lines), int_imm(stream));
  Expr offset = access.analyzer.simplify(next * int_imm(slice_elems) + first_line * int_imm(line_elems));
  const auto& at_loop = *at_it->as<ForNode>();
  Stmt body = make_seq({make_prefetch(buffer, offset, lines_per_step), at_loop.body});
  return replace_node(func, at_it->get(), with_body(at_loop, body));
}

}  // namespace tessel::sched
