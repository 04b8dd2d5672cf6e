// What the loop primitives ask of a loop nest: the loop a variable names, the
// blocks directly below a statement, whether a loop feeds a reduction
// variable, and the block rebuilders they share.
#pragma once

#include <string>
#include <vector>

#include "ir/tensor/function.h"
#include "ir/tensor/simplify.h"
#include "schedules/schedule_error.h"

namespace tessel::sched {

// The loop whose variable is `var`, or ScheduleError "<primitive>.loop_not_found".
const tir::ForNode& loop_or_throw(const tir::PrimFunc& func, const tir::VarNode* var,
                                  const std::string& primitive);
// The loop lives in func: not on a temporary function.
const tir::ForNode& loop_or_throw(tir::PrimFunc&& func, const tir::VarNode* var, const std::string& primitive) = delete;

// The blocks below s that no other block below s encloses, in program order.
std::vector<const tir::BlockNode*> blocks_below(const tir::Stmt& s);
std::vector<const tir::BlockNode*> blocks_below(tir::Stmt&& s) = delete;  // they live in s

// ScheduleError "<primitive>.reduction_loop" when a block below `loop` binds
// a reduction variable to an expression of the loop's variable: running its
// iterations at once would race on the reduction's output.
void check_no_reduction_binding(const tir::ForNode& loop, const std::string& primitive);
// For parallel and vectorize: no reduction binding, and every block below
// binds the loop to one of its spatial variables (otherwise the iterations
// recompute the same elements: a race once they run at once).
void check_data_parallel(const tir::ForNode& loop, const std::string& primitive);

// The block with new bindings, predicate or annotations; everything else kept.
tir::Stmt with_bindings(const tir::BlockNode& block, std::vector<tir::Expr> iter_values, tir::Expr predicate);
tir::Stmt with_annotations(const tir::BlockNode& block, tir::Annotations annotations);

// Simplifies the bindings and predicates of the blocks below s (not inside
// them) knowing the ranges of `analyzer` and of the loops on the way down;
// when `extra_predicate` is defined it is And-ed to each predicate first.
tir::Stmt simplify_bindings_below(const tir::Stmt& s, const tir::Analyzer& analyzer,
                                  const tir::Expr& extra_predicate = {});

// "loop i (extent 64)": how error messages name a loop.
std::string describe_loop(const tir::ForNode& loop);

}  // namespace tessel::sched
