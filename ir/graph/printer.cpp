// The graph printer.
#include "ir/graph/printer.h"

#include <sstream>

namespace tessel::graph {

namespace {

std::string value_ref(const Value* v) { return v ? "%" + v->name : "_"; }

// A storage order prints after the type: %y: f32[1, 32, 56, 56] stored [0, 2, 3, 1].
std::string typed(const Value* v) {
  std::string s = value_ref(v) + ": " + v->type.str();
  if (v->storage.empty()) return s;
  s += " stored [";
  for (size_t i = 0; i < v->storage.size(); ++i) s += (i ? ", " : "") + std::to_string(v->storage[i]);
  return s + "]";
}

void print_body(std::ostringstream& os, const Graph& body, const std::string& indent);

void print_node(std::ostringstream& os, const Node& n, const std::string& indent) {
  os << indent << "  ";
  for (size_t i = 0; i < n.outputs.size(); ++i) os << (i ? ", " : "") << typed(n.outputs[i]);
  os << " = " << n.op << "(";
  for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << value_ref(n.inputs[i]);
  os << ")";
  if (!n.attrs.empty()) {
    os << " {";
    bool first = true;
    for (const auto& [name, value] : n.attrs.all()) {
      os << (first ? "" : ", ") << name << " = " << attr_value_str(value);
      first = false;
    }
    os << "}";
  }
  os << "  # node '" << n.name << "'\n";
  if (n.body) print_body(os, *n.body, indent + "    ");
}

void print_body(std::ostringstream& os, const Graph& g, const std::string& indent) {
  os << indent << "body(";
  for (size_t i = 0; i < g.inputs().size(); ++i) os << (i ? ", " : "") << typed(g.inputs()[i]);
  os << ") {\n";
  for (const Value* c : g.constants()) os << indent << "  const " << typed(c) << "\n";
  for (const Node* n : g.nodes()) print_node(os, *n, indent);
  os << indent << "  return ";
  for (size_t i = 0; i < g.outputs().size(); ++i) os << (i ? ", " : "") << value_ref(g.outputs()[i]);
  os << "\n" << indent << "}\n";
}

}  // namespace

std::string print_graph(const Graph& g) {
  std::ostringstream os;
  os << "graph " << (g.name.empty() ? "main" : g.name) << "(";
  for (size_t i = 0; i < g.inputs().size(); ++i) os << (i ? ", " : "") << typed(g.inputs()[i]);
  os << ") {\n";
  for (const Value* c : g.constants()) os << "  const " << typed(c) << "\n";
  for (const Node* n : g.nodes()) print_node(os, *n, "");
  os << "  return ";
  for (size_t i = 0; i < g.outputs().size(); ++i) os << (i ? ", " : "") << value_ref(g.outputs()[i]);
  os << "\n";
  for (size_t k = 0; k < g.data_dependent_dims.size(); ++k) {
    const DataDependentDim& d = g.data_dependent_dims[k];
    os << "  data-dependent " << value_ref(g.outputs().at(d.output)) << " axis " << d.axis << " size "
       << value_ref(g.outputs().at(g.num_user_outputs() + k)) << "\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace tessel::graph
