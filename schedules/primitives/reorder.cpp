// reorder: permutes loops of one chain of nested loops.
// Errors: reorder.loop_not_found, reorder.too_few_loops, reorder.duplicate_loop,
// reorder.not_one_chain, reorder.dependent_extent, reorder.vectorized_not_innermost.
#include <algorithm>

#include "ir/tensor/functor.h"
#include "schedules/primitives/loop_analysis.h"
#include "schedules/primitives/loop_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

namespace {

std::string names_of(const std::vector<const ForNode*>& loops) {
  std::string s;
  for (const ForNode* l : loops) s += (s.empty() ? "" : ", ") + l->var->name;
  return s;
}

// The loops from the outermost listed one down to the innermost listed one,
// checked to form a single-child chain with no block, sequence or condition
// between them.
std::vector<const ForNode*> chain_between(const PrimFunc& func, const std::vector<const ForNode*>& listed) {
  std::vector<Stmt> deepest;
  for (const ForNode* l : listed) {
    std::vector<Stmt> path = path_to(func->body, l);
    if (path.size() > deepest.size()) deepest = std::move(path);
  }
  std::string what = "reorder of " + names_of(listed);
  auto on_path = [&](const ForNode* l) {
    return std::any_of(deepest.begin(), deepest.end(), [&](const Stmt& s) { return s.get() == l; });
  };
  for (const ForNode* l : listed) {
    if (!on_path(l)) {
      throw ScheduleError("reorder.not_one_chain",
                          what + ": loop " + l->var->name +
                              " does not enclose the innermost listed loop (the loops "
                              "belong to different loop nests or blocks)");
    }
  }
  auto first = std::find_if(deepest.begin(), deepest.end(), [&](const Stmt& s) {
    return std::find(listed.begin(), listed.end(), s.get()) != listed.end();
  });
  std::vector<const ForNode*> chain;
  for (auto it = first; it != deepest.end(); ++it) {
    const ForNode* loop = it->as<ForNode>();
    if (!loop) {
      throw ScheduleError("reorder.not_one_chain",
                          what + ": a " + std::string(stmt_kind_name((*it)->kind)) +
                              " stands between the loops; they must be directly nested");
    }
    if (!chain.empty() && chain.back()->body.get() != loop) {
      throw ScheduleError("reorder.not_one_chain", what + ": loop " + loop->var->name +
                                                       " is not the only statement in loop " +
                                                       chain.back()->var->name);
    }
    chain.push_back(loop);
  }
  return chain;
}

}  // namespace

PrimFunc reorder(const PrimFunc& func, const std::vector<const VarNode*>& order) {
  if (order.size() < 2)
    throw ScheduleError("reorder.too_few_loops", "reorder: at least two loops are needed");
  std::vector<const ForNode*> listed;
  for (const VarNode* v : order) {
    const ForNode& loop = loop_or_throw(func, v, "reorder");
    if (std::find(listed.begin(), listed.end(), &loop) != listed.end()) {
      throw ScheduleError("reorder.duplicate_loop", "reorder: " + describe_loop(loop) + " is listed twice");
    }
    listed.push_back(&loop);
  }
  std::vector<const ForNode*> chain = chain_between(func, listed);
  // The listed loops take the chain's listed positions in the order given.
  std::vector<const ForNode*> permuted = chain;
  size_t next = 0;
  for (const ForNode*& slot : permuted) {
    if (std::find(listed.begin(), listed.end(), slot) != listed.end()) slot = listed[next++];
  }
  for (size_t i = 0; i < permuted.size(); ++i) {
    for (size_t j = i + 1; j < permuted.size(); ++j) {
      const VarNode* inner = permuted[j]->var.get();
      if (uses_var(permuted[i]->min, inner) || uses_var(permuted[i]->extent, inner)) {
        throw ScheduleError("reorder.dependent_extent",
                            "reorder: the range of " + describe_loop(*permuted[i]) + " depends on loop " +
                                inner->name + ", which would move inside it");
      }
    }
    if (i + 1 < permuted.size() && permuted[i]->for_kind == ForKind::kVectorized) {
      throw ScheduleError(
          "reorder.vectorized_not_innermost",
          "reorder: vectorized " + describe_loop(*permuted[i]) + " would enclose other loops");
    }
  }
  Stmt body = chain.back()->body;
  for (size_t i = permuted.size(); i-- > 0;) body = with_body(*permuted[i], body);
  return replace_node(func, chain.front(), body);
}

}  // namespace tessel::sched
