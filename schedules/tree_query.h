// Finding and replacing parts of a PrimFunc's statement tree: blocks by name,
// loops by their variable, the loops above a block, the parent chain of a
// node. Every primitive starts from these.
#pragma once

#include <string>
#include <vector>

#include "ir/tensor/function.h"

namespace tessel::sched {

// The statements from the function body down to `target` (inclusive), or
// empty when target is not in the tree.
std::vector<tir::Stmt> path_to(const tir::Stmt& root, const tir::StmtNode* target);

// The block named `name`, or an undefined Stmt.
tir::Stmt find_block(const tir::PrimFunc& func, const std::string& name);
// The loop whose variable is `var`, or an undefined Stmt.
tir::Stmt find_loop(const tir::PrimFunc& func, const tir::VarNode* var);
// The For statements enclosing the block (outermost first), up to the nearest
// enclosing block (loops above an outer block are not the block's loops).
std::vector<tir::Stmt> loops_above(const tir::PrimFunc& func, const tir::StmtNode* block);
// Every block except the root, in program order.
std::vector<tir::Stmt> all_blocks(const tir::PrimFunc& func);

// The tree with the node `target` (by identity) replaced by `replacement`;
// an undefined replacement removes it from its sequence.
tir::Stmt replace_node(const tir::Stmt& root, const tir::StmtNode* target, const tir::Stmt& replacement);
tir::PrimFunc replace_node(const tir::PrimFunc& func, const tir::StmtNode* target,
                           const tir::Stmt& replacement);

// Blocks that write a buffer the given block reads (producers) and that read
// a buffer it writes (consumers), in program order.
std::vector<tir::Stmt> producers_of(const tir::PrimFunc& func, const tir::BlockNode& block);
std::vector<tir::Stmt> consumers_of(const tir::PrimFunc& func, const tir::BlockNode& block);

// The root block (the function body, when it is a block named root).
const tir::BlockNode* root_block(const tir::PrimFunc& func);
const tir::BlockNode* root_block(tir::PrimFunc&& func) = delete;  // it lives in func

}  // namespace tessel::sched
