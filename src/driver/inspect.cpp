// The inspection report.
#include "src/driver/inspect.h"

#include <iomanip>
#include <map>
#include <sstream>

#include "ir/graph/op_registry.h"
#include "ir/graph/printer.h"
#include "src/frontend/onnx/supported_ops.h"

namespace tessel::driver {

namespace {

std::string human(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T"};
  int p = 0;
  while (v >= 1000 && p < 4) {
    v /= 1000;
    ++p;
  }
  std::ostringstream os;
  os << std::fixed << std::setprecision(p ? 2 : 0) << v << " " << prefixes[p] << unit;
  return os.str();
}

}  // namespace

ModelSummary summarize(const graph::Graph& g) {
  ModelSummary s;
  for (const graph::Value* c : g.constants()) {
    s.parameters += c->constant->numel();
    s.parameter_bytes += int64_t(c->constant->nbytes());
  }
  for (const graph::Node* n : g.nodes()) s.flops += graph::node_flops(*n);
  return s;
}

void print_inspection(const graph::Graph& g, std::ostream& out) {
  out << "graph " << (g.name.empty() ? "main" : g.name) << ": " << g.num_nodes() << " nodes\n\ninputs:\n";
  for (const graph::Value* v : g.inputs()) out << "  " << v->name << ": " << v->type.str() << "\n";
  out << "outputs:\n";
  for (size_t j = 0; j < g.num_user_outputs(); ++j) {
    const graph::Value* v = g.outputs()[j];
    out << "  " << v->name << ": " << v->type.str();
    for (const graph::DataDependentDim& d : g.data_dependent_dims)
      if (d.output == j)
        out << " (axis " << d.axis << ": at most " << v->type.dims[size_t(d.axis)].value
            << ", decided by the data)";
    out << "\n";
  }

  std::map<std::string, int> histogram;
  for (const graph::Node* n : g.nodes()) ++histogram[n->op];
  out << "\nops:\n";
  for (const auto& [op, count] : histogram) out << "  " << std::left << std::setw(24) << op << count << "\n";

  ModelSummary s = summarize(g);
  out << "\nparameters: " << s.parameters << " (" << human(double(s.parameter_bytes), "B") << ")\n";
  out << "\nFLOPs per node:\n";
  for (const graph::Node* n : g.nodes()) {
    int64_t f = graph::node_flops(*n);
    out << "  " << std::left << std::setw(40) << n->name << std::setw(22) << n->op << std::right
        << std::setw(14) << f << "  " << n->outputs[0]->type.str() << "\n";
  }
  out << "\ntotal FLOPs: " << s.flops << " (" << human(double(s.flops), "FLOP") << ")\n";
}

std::string graph_text(const graph::Graph& g) {
  return graph::print_graph(g);
}

std::string supported_ops_report() {
  return onnx_frontend::ops_markdown();
}

}  // namespace tessel::driver
