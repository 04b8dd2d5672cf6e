// Graph construction and rewiring.
#include "ir/graph/graph.h"

#include <algorithm>
#include <unordered_set>

namespace tessel::graph {

Value* Graph::new_value(std::string value_name) {
  auto v = std::make_unique<Value>();
  v->id = next_id_++;
  v->name = std::move(value_name);
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value* Graph::add_input(std::string value_name, TensorType type) {
  Value* v = new_value(std::move(value_name));
  v->type = std::move(type);
  inputs_.push_back(v);
  return v;
}

Value* Graph::add_constant(std::string value_name, Tensor value) {
  Value* v = new_value(std::move(value_name));
  v->type = TensorType(value.dtype(), value.shape());
  v->constant = std::move(value);
  return v;
}

Node* Graph::add_node(std::string op, std::string node_name, std::vector<Value*> node_inputs,
                      const std::vector<std::string>& output_names, Attrs attrs) {
  auto n = std::make_unique<Node>();
  n->id = next_id_++;
  n->op = std::move(op);
  n->name = std::move(node_name);
  n->inputs = std::move(node_inputs);
  n->attrs = std::move(attrs);
  for (size_t i = 0; i < output_names.size(); ++i) {
    Value* v = new_value(output_names[i]);
    v->producer = n.get();
    v->producer_output = int(i);
    n->outputs.push_back(v);
  }
  nodes_.push_back(std::move(n));
  return nodes_.back().get();
}

Node* Graph::add_node_before(const Node* position, std::string op, std::string node_name,
                             std::vector<Value*> node_inputs, const std::vector<std::string>& output_names,
                             Attrs attrs) {
  auto at = std::find_if(nodes_.begin(), nodes_.end(), [&](const auto& n) { return n.get() == position; });
  TESSEL_ICHECK(at != nodes_.end()) << "add_node_before: node '" << position->name << "' is not in the graph";
  size_t index = size_t(at - nodes_.begin());
  Node* n = add_node(std::move(op), std::move(node_name), std::move(node_inputs), output_names, std::move(attrs));
  std::rotate(nodes_.begin() + long(index), nodes_.end() - 1, nodes_.end());
  return n;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

std::vector<Value*> Graph::values() const {
  std::vector<Value*> out;
  for (const auto& v : values_) out.push_back(v.get());
  return out;
}

std::vector<Value*> Graph::constants() const {
  std::vector<Value*> out;
  for (const auto& v : values_)
    if (v->is_constant() && v->producer == nullptr) out.push_back(v.get());
  return out;
}

void Graph::replace_uses(Value* from, Value* to) {
  for (auto& n : nodes_)
    for (Value*& in : n->inputs)
      if (in == from) in = to;
  for (Value*& out : outputs_)
    if (out == from) out = to;
}

void Graph::remove_unused_values() {
  std::unordered_set<const Value*> used(inputs_.begin(), inputs_.end());
  used.insert(outputs_.begin(), outputs_.end());
  for (const auto& n : nodes_) {
    used.insert(n->inputs.begin(), n->inputs.end());
    used.insert(n->outputs.begin(), n->outputs.end());
  }
  std::erase_if(values_, [&](const std::unique_ptr<Value>& v) { return !used.count(v.get()); });
}

void Graph::set_inputs(std::vector<Value*> inputs) {
  TESSEL_ICHECK(std::is_permutation(inputs.begin(), inputs.end(), inputs_.begin(), inputs_.end()))
      << "set_inputs takes the graph's inputs in another order";
  inputs_ = std::move(inputs);
}

std::string Graph::unique_name(const std::string& base) {
  return base + "__t" + std::to_string(next_name_++);
}

std::vector<Node*> users_of(const Graph& g, const Value* v) {
  std::vector<Node*> out;
  for (Node* n : g.nodes())
    if (std::find(n->inputs.begin(), n->inputs.end(), v) != n->inputs.end()) out.push_back(n);
  return out;
}

std::vector<int64_t> stored_dims(const Value& v) {
  std::vector<int64_t> dims = v.type.static_dims();
  if (v.storage.empty()) return dims;
  std::vector<int64_t> stored;
  for (int64_t d : v.storage) stored.push_back(dims[size_t(d)]);
  return stored;
}

}  // namespace tessel::graph
