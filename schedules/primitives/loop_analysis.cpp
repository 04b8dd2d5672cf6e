// Queries and rebuilders shared by the loop primitives.
#include "schedules/primitives/loop_analysis.h"

#include "ir/tensor/functor.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

const ForNode& loop_or_throw(const PrimFunc& func, const VarNode* var, const std::string& primitive) {
  Stmt loop = find_loop(func, var);
  if (!loop.defined()) {
    throw ScheduleError(
        primitive + ".loop_not_found",
        primitive + ": no loop over " + (var ? var->name : std::string("<null>")) + " in " + func->name);
  }
  return static_cast<const ForNode&>(*loop);
}

std::vector<const BlockNode*> blocks_below(const Stmt& s) {
  std::vector<const BlockNode*> blocks;
  walk(s, [&](const Stmt& x) {
    const BlockNode* b = x.as<BlockNode>();
    if (!b) return true;
    blocks.push_back(b);
    return false;
  });
  return blocks;
}

void check_no_reduction_binding(const ForNode& loop, const std::string& primitive) {
  for (const BlockNode* block : blocks_below(loop.body)) {
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      if (iv.kind != IterKind::kReduce || !uses_var(block->iter_values[i], loop.var.get())) continue;
      throw ScheduleError(primitive + ".reduction_loop",
                          primitive + ": " + describe_loop(loop) + " binds the reduction variable " +
                              iv.var->name + " of block " + block->name +
                              "; running its iterations at once would race on the reduction's output");
    }
  }
}

void check_data_parallel(const ForNode& loop, const std::string& primitive) {
  check_no_reduction_binding(loop, primitive);
  for (const BlockNode* block : blocks_below(loop.body)) {
    bool binds = false;
    for (size_t i = 0; i < block->iter_vars.size() && !binds; ++i)
      binds =
          block->iter_vars[i].kind == IterKind::kSpatial && uses_var(block->iter_values[i], loop.var.get());
    if (binds) continue;
    throw ScheduleError(primitive + ".not_data_parallel",
                        primitive + ": block " + block->name + " under " + describe_loop(loop) +
                            " binds no spatial variable to it, so every iteration computes the same elements "
                            "into the same buffer; running the iterations at once would race on it");
  }
}

Stmt with_bindings(const BlockNode& b, std::vector<Expr> iter_values, Expr predicate) {
  return make_ref<BlockNode>(b.name, b.iter_vars, std::move(iter_values), std::move(predicate), b.reads,
                             b.writes, b.init, b.body, b.alloc_buffers, b.annotations);
}

Stmt with_annotations(const BlockNode& b, Annotations annotations) {
  return make_ref<BlockNode>(b.name, b.iter_vars, b.iter_values, b.predicate, b.reads, b.writes, b.init,
                             b.body, b.alloc_buffers, std::move(annotations));
}

namespace {

// Walks down to the nearest blocks, binding loop variables on the way.
class BindingSimplifier : public StmtMutator {
 public:
  BindingSimplifier(Analyzer analyzer, Expr extra)
      : analyzer_(std::move(analyzer)), extra_(std::move(extra)) {}
  using StmtMutator::mutate;

 protected:
  Stmt mutate_for(const ForNode& node, const Stmt& self) override {
    Analyzer outer = analyzer_;
    analyzer_.bind(node.var, Range{node.min, node.extent});
    Stmt body = mutate(node.body);
    analyzer_ = std::move(outer);
    return body.same_as(node.body) ? self : with_body(node, body);
  }
  Stmt mutate_block(const BlockNode& node, const Stmt& /*self*/) override {
    std::vector<Expr> values;
    for (const Expr& v : node.iter_values) values.push_back(analyzer_.simplify(v));
    Expr predicate = node.predicate;
    if (extra_.defined()) predicate = is_const_int(predicate, 1) ? extra_ : logical_and(predicate, extra_);
    return with_bindings(node, std::move(values), analyzer_.simplify(predicate));
  }

 private:
  Analyzer analyzer_;
  Expr extra_;
};

}  // namespace

Stmt simplify_bindings_below(const Stmt& s, const Analyzer& analyzer, const Expr& extra_predicate) {
  return BindingSimplifier(analyzer, extra_predicate).mutate(s);
}

std::string describe_loop(const ForNode& loop) {
  std::string extent;
  if (const int64_t* c = as_const_int(loop.extent)) extent = " (extent " + std::to_string(*c) + ")";
  return "loop " + loop.var->name + extent;
}

}  // namespace tessel::sched
