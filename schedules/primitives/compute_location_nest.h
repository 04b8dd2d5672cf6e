// The region analysis and loop-nest regeneration compute_at and
// reverse_compute_at share (schedules/primitives/compute_location.cpp,
// reverse_compute_at.cpp). Not an API.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/tensor/int_set.h"
#include "schedules/primitives/block_analysis.h"

namespace tessel::sched::location {

using tir::Analyzer;
using tir::BlockNode;
using tir::BufferNode;
using tir::BufferRegion;
using tir::Expr;
using tir::IntSet;
using tir::PrimFunc;
using tir::Stmt;

// Where each iteration variable of a block appears as a plain index of an
// accessed buffer: var position -> (buffer, dimension).
using IndexMap = std::map<int, std::pair<const BufferNode*, int>>;
// Per buffer, the set of each dimension of a region.
using RegionMap = std::map<const BufferNode*, std::vector<IntSet>>;

// The (buffer, dimension) each iteration variable indexes in `regions` (those
// of buffers in `only`, when given); nullopt when some dimension is not indexed
// by a plain iteration variable, or one variable indexes two places.
std::optional<IndexMap> plain_index_map(const BlockNode& block, const std::vector<BufferRegion>& regions,
                                        const std::vector<tir::Buffer>& only);

// The region of `buffer` the block accesses (through `regions`, its reads or
// writes) when the loops below `loop` run over their ranges, per dimension.
// nullopt when the block does not access the buffer.
// With `iterations`, also the number of iterations of the relaxed loops the
// region depends on (-1 when one has no constant extent): a region of more
// points than that is over-approximated.
std::optional<std::vector<IntSet>> relaxed_access(const PrimFunc& func, const BlockNode& block,
                                                  const std::vector<BufferRegion>& regions,
                                                  const tir::Buffer& buffer, const tir::VarNode* loop,
                                                  const Analyzer& analyzer, int64_t* iterations = nullptr);

// The regenerated loop nest of a block: one loop per iteration variable (none
// when it takes one value), bindings, and guards keeping it inside its domain.
struct NestPlan {
  std::vector<LoopSpec> loops;
  std::vector<Expr> bindings;
  std::vector<Expr> guards;
};

// Covers `cover` (when bounded) intersected with the domain; `exact` callers
// (reverse_compute_at) must not cover more than the set, so they fail instead
// of falling back to the whole domain. Returns false when the set is unbounded.
bool plan_iter_var(NestPlan& plan, const tir::IterVar& iv, int index, const std::optional<IntSet>& cover,
                   const Analyzer& analyzer, bool exact);
Stmt build_nest(const BlockNode& block, const NestPlan& plan);

// The loops at and above `loop`, for an analyzer that knows their ranges.
std::vector<Stmt> loops_to(const PrimFunc& func, const Stmt& loop);
void check_not_own_nest(const PrimFunc& func, const BlockAt& b, const Stmt& loop,
                        const std::string& primitive);
// Inserts `nest` as item `index` of the loop's body, in func.
PrimFunc insert_in_loop(const PrimFunc& func, const Stmt& loop, int index, const Stmt& nest);
std::vector<std::string> names_of(const std::vector<Stmt>& blocks);
// Items of the loop's body containing the named blocks: the first and the last.
std::pair<int, int> item_span(const PrimFunc& func, const Stmt& loop, const std::vector<std::string>& names);
// Blocks other than `self` that write (readers=false) or read the block's buffers.
std::vector<Stmt> neighbours(const PrimFunc& func, const BlockNode& self,
                             const std::vector<BufferRegion>& regions, bool readers);
// A box of at most `iterations` points: the relaxed loops may enumerate it
// exactly (a necessary condition; affine bindings of split loops meet it).
bool exact_box(const std::vector<IntSet>& box, int64_t iterations, const Analyzer& analyzer);
bool covers_domain(const IntSet& set, const tir::IterVar& iv, const Analyzer& analyzer);
// The set of one dimension of one buffer's region, when the region is known.
std::optional<IntSet> set_at(const RegionMap& regions, const std::pair<const BufferNode*, int>& where);

}  // namespace tessel::sched::location
