// `tessel lower`: one paragraph per group.
#include "src/driver/lower_job.h"

#include <algorithm>

#include "ir/tensor/functor.h"
#include "ir/tensor/printer.h"
#include "src/driver/compile_model.h"
#include "src/lower/lower_group.h"

namespace tessel::driver {

namespace {

void print_params(const std::vector<tir::Buffer>& params, std::ostream& out) {
  for (size_t i = 0; i < params.size(); ++i)
    out << (i ? ", " : "") << params[i]->name << ": " << dtype_name(params[i]->dtype)
        << dims_str(params[i]->shape);
}

// "conv (reduce), relu_out": every block but the root, in order.
void print_blocks(const tir::PrimFunc& f, std::ostream& out) {
  int count = 0;
  tir::walk(f->body, [&](const tir::Stmt& s) {
    const auto* block = s.as<tir::BlockNode>();
    if (block && !s.same_as(f->body))
      out << (count++ ? ", " : "") << block->name << (block->is_reduction() ? " (reduce)" : "");
    return true;
  });
  if (count == 0) out << "(none)";
}

void print_group(const lower::LoweredGroup& lowered, bool print_ir, std::ostream& out) {
  out << "\ngroup " << lowered.group.name << ":";
  for (size_t i = 0; i < lowered.group.nodes.size(); ++i) {
    const graph::Node* n = lowered.group.nodes[i];
    out << (i ? ", " : " ") << n->name << " (" << n->op << ")";
  }
  out << "\n  func " << lowered.func->name << "(";
  print_params(lowered.func->inputs, out);
  out << ") -> (";
  print_params(lowered.func->outputs, out);
  out << ")\n  blocks: ";
  print_blocks(lowered.func, out);
  out << "\n";
  if (print_ir) out << tir::to_string(lowered.func) << "\n";
}

}  // namespace

void run_lower_job(const graph::Graph& g, const LowerJobOptions& o, std::ostream& out) {
  std::vector<passes::NodeGroup> groups = passes::make_grouping_policy(o.fusion)->group(g);
  out << "fusion " << passes::fusion_policy_name(o.fusion) << ": " << groups.size() << " groups of " << g.num_nodes() << " nodes\n";
  if (!o.node.empty()) {
    auto holds_node = [&](const passes::NodeGroup& group) {
      for (const graph::Node* n : group.nodes)
        if (n->name == o.node) return true;
      return false;
    };
    auto it = std::find_if(groups.begin(), groups.end(), holds_node);
    TESSEL_USER_CHECK(it != groups.end(), Span{}) << "no node named '" << o.node << "' in the model";
    groups = {*it};
  }
  lower::LayoutChoices layouts = layout_choices(CompileOptions{});
  for (const passes::NodeGroup& group : groups) {
    const graph::Node* scan = group.nodes.front();
    if (!scan->body) {
      print_group(lower::lower_group_with_bindings(g, group, layouts), o.print, out);
      continue;
    }
    out << "group " << group.name << ": a loop of " << scan->attrs.get_int("length")
        << " iterations (Scan) over its body's groups:\n";
    LowerJobOptions body = o;
    body.node.clear();
    run_lower_job(*scan->body, body, out);
  }
}

}  // namespace tessel::driver
