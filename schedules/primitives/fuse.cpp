// fuse: directly nested loops into one loop over the product of their extents.
// Errors: fuse.loop_not_found, fuse.too_few_loops, fuse.duplicate_loop,
// fuse.not_nested, fuse.loop_kind, fuse.dependent_extent.
#include "ir/tensor/functor.h"
#include "schedules/primitives/loop_analysis.h"
#include "schedules/primitives/loop_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

namespace {

// The loops, checked to be distinct serial loops, each the body of the one before.
std::vector<const ForNode*> nested_chain(const PrimFunc& func, const std::vector<const VarNode*>& vars) {
  if (vars.size() < 2) throw ScheduleError("fuse.too_few_loops", "fuse: at least two loops are needed");
  std::vector<const ForNode*> loops;
  for (const VarNode* v : vars) {
    const ForNode& loop = loop_or_throw(func, v, "fuse");
    for (const ForNode* seen : loops) {
      if (seen == &loop)
        throw ScheduleError("fuse.duplicate_loop", "fuse: " + describe_loop(loop) + " is listed twice");
    }
    if (loop.for_kind != ForKind::kSerial) {
      throw ScheduleError("fuse.loop_kind", "fuse: " + describe_loop(loop) + " is " +
                                                std::string(for_kind_name(loop.for_kind)) +
                                                "; only serial loops are fused");
    }
    if (!loops.empty() && loops.back()->body.get() != &loop) {
      throw ScheduleError("fuse.not_nested", "fuse: " + describe_loop(loop) +
                                                 " is not the only statement in " +
                                                 describe_loop(*loops.back()) +
                                                 "; fused loops must be directly nested, outermost first");
    }
    for (const ForNode* outer : loops) {
      if (uses_var(loop.min, outer->var.get()) || uses_var(loop.extent, outer->var.get())) {
        throw ScheduleError("fuse.dependent_extent", "fuse: the range of " + describe_loop(loop) +
                                                         " depends on " + describe_loop(*outer));
      }
    }
    loops.push_back(&loop);
  }
  return loops;
}

}  // namespace

FuseResult fuse(const PrimFunc& func, const std::vector<const VarNode*>& vars) {
  std::vector<const ForNode*> loops = nested_chain(func, vars);
  std::string name;
  for (const ForNode* l : loops) name += l->var->name + "_";
  Var fused = var(name + "fused");

  // Innermost first: v_n = fused % e_n, v_{n-1} = (fused / e_n) % e_{n-1}, ...
  // and the outermost takes the whole quotient.
  VarMap map;
  Expr stride = int_imm(1);
  for (size_t i = loops.size(); i-- > 0;) {
    const ForNode& l = *loops[i];
    Expr quotient = i + 1 == loops.size() ? Expr(fused) : floordiv(fused, stride);
    Expr index = i == 0 ? quotient : floormod(quotient, l.extent);
    map[l.var.get()] = l.min + index;
    stride = stride * l.extent;
  }
  Expr extent = simplify(stride);
  Analyzer analyzer;
  analyzer.bind(fused, Range{int_imm(0), extent});
  Stmt body = simplify_bindings_below(substitute(loops.back()->body, map), analyzer);
  body = make_for(fused, int_imm(0), extent, ForKind::kSerial, body);
  return {replace_node(func, loops.front(), body), fused};
}

}  // namespace tessel::sched
