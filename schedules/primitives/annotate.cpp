// annotate: sets an integer annotation (a pragma or hint for later passes) on
// a loop or a block. Errors: annotate.empty_key, annotate.loop_not_found,
// annotate.block_not_found.
#include "schedules/primitives/loop_analysis.h"
#include "schedules/primitives/loop_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

namespace {

void check_key(const std::string& key) {
  if (key.empty()) throw ScheduleError("annotate.empty_key", "annotate: the annotation key is empty");
}

}  // namespace

PrimFunc annotate_loop(const PrimFunc& func, const VarNode* var, const std::string& key, int64_t value) {
  check_key(key);
  const ForNode& loop = loop_or_throw(func, var, "annotate");
  Annotations annotations = loop.annotations;
  annotations[key] = value;
  Stmt annotated = make_for(loop.var, loop.min, loop.extent, loop.for_kind, loop.body, loop.thread_tag,
                            std::move(annotations));
  return replace_node(func, &loop, annotated);
}

PrimFunc annotate_block(const PrimFunc& func, const std::string& name, const std::string& key,
                        int64_t value) {
  check_key(key);
  Stmt block = find_block(func, name);
  if (!block.defined()) {
    throw ScheduleError("annotate.block_not_found", "annotate: no block " + name + " in " + func->name);
  }
  const auto& b = static_cast<const BlockNode&>(*block);
  Annotations annotations = b.annotations;
  annotations[key] = value;
  return replace_node(func, block.get(), with_annotations(b, std::move(annotations)));
}

}  // namespace tessel::sched
