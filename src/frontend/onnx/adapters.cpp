// The adapter table and the helpers adapters share.
#include "src/frontend/onnx/adapters.h"

#include "ir/graph/op_registry.h"

namespace tessel::onnx_frontend {

graph::Value* AdaptContext::constant(Tensor t) {
  return graph.add_constant(graph.unique_name(name + "/const"), std::move(t));
}

void AdaptContext::set_input(size_t pos, graph::Value* v) {
  if (inputs.size() <= pos) inputs.resize(pos + 1, nullptr);
  inputs[pos] = v;
}

void AdaptContext::attr_to_input(const std::string& attr, size_t pos, DType dtype) {
  const graph::AttrValue* v = attrs.find(attr);
  if (v == nullptr) return;
  Tensor t;
  if (auto* ints = std::get_if<std::vector<int64_t>>(v)) {
    t = Tensor(dtype, {int64_t(ints->size())});
    for (size_t i = 0; i < ints->size(); ++i) t.set_i64(int64_t(i), (*ints)[i]);
  } else if (auto* floats = std::get_if<std::vector<double>>(v)) {
    t = Tensor(dtype, {int64_t(floats->size())});
    for (size_t i = 0; i < floats->size(); ++i) t.set_f64(int64_t(i), (*floats)[i]);
  } else if (auto* f = std::get_if<double>(v)) {
    t = Tensor::scalar_f64(dtype, *f);
  } else if (auto* n = std::get_if<int64_t>(v)) {
    t = Tensor(dtype, {});
    t.set_i64(0, *n);
  } else {
    TESSEL_USER_ERROR(span()) << "attribute '" << attr << "' has an unexpected type";
  }
  attrs.erase(attr);
  set_input(pos, constant(std::move(t)));
}

std::vector<graph::Value*> AdaptContext::emit(const std::string& helper_op,
                                              std::vector<graph::Value*> helper_inputs,
                                              graph::Attrs helper_attrs, int num_outputs) {
  std::vector<std::string> names;
  for (int i = 0; i < num_outputs; ++i) names.push_back(graph.unique_name(name + "/" + helper_op));
  graph::Node* n = graph.add_node(helper_op, graph.unique_name(name + "/" + helper_op),
                                  std::move(helper_inputs), names, std::move(helper_attrs));
  infer_and_fold(*n, fold_constants);
  return n->outputs;
}

const AdapterTable& adapters() {
  static const AdapterTable table = [] {
    AdapterTable t;
    register_elementwise_adapters(t);
    register_nn_adapters(t);
    register_reduce_adapters(t);
    register_shape_adapters(t);
    register_movement_adapters(t);
    register_loss_adapters(t);
    register_composite_adapters(t);
    return t;
  }();
  return table;
}

}  // namespace tessel::onnx_frontend
