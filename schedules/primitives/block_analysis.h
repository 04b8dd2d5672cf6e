// Analyses and small rebuilders shared by the block primitives (cache, compute_location,
// inline, reduction, storage_align): looking up blocks and loops (or failing with a
// ScheduleError), block properties, the loops a binding uses, and edits of the root block.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/tensor/function.h"
#include "ir/tensor/simplify.h"
#include "schedules/schedule_error.h"

namespace tessel::sched {

// ---- Lookup. `primitive` prefixes the error kind ("compute_at.no_block").
struct BlockAt {
  tir::Stmt stmt;
  const tir::BlockNode* node = nullptr;
};
BlockAt require_block(const tir::PrimFunc& func, const std::string& name, const std::string& primitive);
tir::Stmt require_loop(const tir::PrimFunc& func, const tir::VarNode* loop, const std::string& primitive);

// A block's fields as values, to rebuild a changed copy.
struct BlockFields {
  std::string name;
  std::vector<tir::IterVar> iter_vars;
  std::vector<tir::Expr> iter_values;
  tir::Expr predicate;
  std::vector<tir::BufferRegion> reads, writes;
  tir::Stmt init, body;
  std::vector<tir::Buffer> alloc_buffers;
  tir::Annotations annotations;
};
BlockFields fields_of(const tir::BlockNode& block);
tir::Block make_block(BlockFields fields);
// The block with reads and writes recomputed from init and body.
tir::Block make_block_detected(BlockFields fields);

// ---- Block properties.
// No reduction variables and no init: writes each element of its domain once.
bool is_complete(const tir::BlockNode& block);
// The body when it is a single store, else nullptr.
const tir::StoreNode* single_store(const tir::BlockNode& block);
// The position of `e` among the block's iteration variables, or -1.
int iter_var_index(const tir::BlockNode& block, const tir::Expr& e);
// Positions of the iteration variables `indices` are, when they are distinct
// iteration variables (an injective, untransformed access); otherwise nullopt.
std::optional<std::vector<int>> trivial_indices(const tir::BlockNode& block,
                                                const std::vector<tir::Expr>& indices);
// Variables an expression uses, in order of first use.
std::vector<const tir::VarNode*> vars_used(const tir::Expr& e);
bool predicate_is_true(const tir::BlockNode& block);

// ---- Buffers and the blocks that touch them.
bool is_function_input(const tir::PrimFunc& func, const tir::Buffer& buffer);
bool is_function_output(const tir::PrimFunc& func, const tir::Buffer& buffer);
// In the root block's alloc_buffers.
bool is_intermediate(const tir::PrimFunc& func, const tir::Buffer& buffer);
bool lists_buffer(const std::vector<tir::BufferRegion>& regions, const tir::Buffer& buffer);
// Blocks (not the root) whose declared writes / reads name the buffer, in program order.
std::vector<tir::Stmt> writers_of(const tir::PrimFunc& func, const tir::Buffer& buffer);
std::vector<tir::Stmt> readers_of(const tir::PrimFunc& func, const tir::Buffer& buffer);

// ---- Tree shape.
// The statements of a sequence, or {s} for any other statement.
std::vector<tir::Stmt> seq_items(const tir::Stmt& s);
// What to remove to take the block out of the tree: the outermost loop of the
// chain of loops above it whose only content is the block (or the block).
tir::Stmt removable_nest(const tir::PrimFunc& func, const tir::StmtNode* block);
// The function without `target` (removed from its enclosing sequence; a loop
// left empty is an internal error: callers remove whole nests).
tir::PrimFunc remove_stmt(const tir::PrimFunc& func, const tir::StmtNode* target);
// The loops from below `loop` (exclusive) down to the block, outermost first.
std::vector<tir::Stmt> loops_below(const tir::PrimFunc& func, const tir::VarNode* loop,
                                   const tir::StmtNode* block);
bool is_under(const tir::PrimFunc& func, const tir::StmtNode* ancestor, const tir::StmtNode* node);
// The index of the item of `body`'s sequence that contains `node`, or -1.
int item_containing(const tir::Stmt& body, const tir::StmtNode* node);

struct LoopSpec {
  tir::Var var;
  tir::Expr min, extent;
};
// for l0: for l1: ... body, outermost first.
tir::Stmt make_nest(const std::vector<LoopSpec>& loops, tir::Stmt body);
// An analyzer that knows the ranges of the given loops.
tir::Analyzer analyzer_for(const std::vector<tir::Stmt>& loops);

// ---- Root block edits.
std::string unique_block_name(const tir::PrimFunc& func, const std::string& base);
// The root block with buffers added to (and `remove` taken from) its alloc_buffers.
tir::PrimFunc with_root_allocs(const tir::PrimFunc& func, const std::vector<tir::Buffer>& add,
                               const tir::BufferNode* remove = nullptr);
// Inserts `stmt` as item `index` of the root body's sequence.
tir::PrimFunc insert_at_root(const tir::PrimFunc& func, int index, const tir::Stmt& stmt);
// The index of the root item containing node, or -1.
int root_item(const tir::PrimFunc& func, const tir::StmtNode* node);

// ---- Reductions: init `B[s] = identity`, body `B[s] = B[s] op value` (or `value op B[s]`).
enum class ReduceOp { kSum, kProd, kMax, kMin };
struct ReductionPattern {
  ReduceOp op;
  tir::Buffer buffer;
  std::vector<tir::Expr> indices;  // of the store, in the block's iteration variables
  tir::Expr identity;
  tir::Expr value;  // the operand combined into the accumulator
};
std::optional<ReductionPattern> match_reduction(const tir::BlockNode& block);
tir::Expr combine(ReduceOp op, tir::Expr acc, tir::Expr value);

// ---- Dependences. Throws `<primitive>.dependence` when moving `block` from
// `before` to `after` changed its program order relative to a block it shares a
// buffer with (one of them writing it).
void check_dependences_kept(const tir::PrimFunc& before, const tir::PrimFunc& after, const std::string& block,
                            const std::string& primitive);

}  // namespace tessel::sched
