// Helpers of the nn op tests: build one node over given tensors, infer it,
// run its reference kernel; and check user errors by message substrings.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "ir/graph/op_registry.h"
#include "src/reference/executor.h"
#include "tessel/error.h"

namespace tessel::nn_test {

inline Tensor f32(Dims shape, const std::vector<double>& values) {
  Tensor t(DType::kF32, std::move(shape));
  EXPECT_EQ(size_t(t.numel()), values.size()) << "test data of the wrong size";
  for (size_t i = 0; i < values.size() && i < size_t(t.numel()); ++i) t.set_f64(int64_t(i), values[i]);
  return t;
}

// 0, 1, 2, ... in the given shape and dtype.
inline Tensor iota(DType dtype, Dims shape) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(i));
  return t;
}

inline Tensor filled(DType dtype, Dims shape, double v) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, v);
  return t;
}

// One node named "node_under_test" over graph inputs of the given tensors'
// types (null: an omitted optional input); inferred at construction.
struct OneNode {
  graph::Graph g;
  graph::Node* node = nullptr;
  std::vector<const Tensor*> inputs;

  OneNode(const std::string& op, std::vector<const Tensor*> in, graph::Attrs attrs = {}, int outputs = 1)
      : inputs(std::move(in)) {
    std::vector<graph::Value*> values;
    for (size_t i = 0; i < inputs.size(); ++i)
      values.push_back(inputs[i] ? g.add_input("in" + std::to_string(i),
                                               graph::TensorType(inputs[i]->dtype(), inputs[i]->shape()))
                                 : nullptr);
    std::vector<std::string> names;
    for (int i = 0; i < outputs; ++i) names.push_back("out" + std::to_string(i));
    node = g.add_node(op, "node_under_test", values, names, std::move(attrs));
    graph::infer_node(*node);
  }
  std::string type(size_t i = 0) const { return node->outputs[i]->type.str(); }
  std::vector<Tensor> run() const { return reference::evaluate_node(*node, inputs); }
};

inline std::vector<Tensor> run_op(const std::string& op, std::vector<const Tensor*> in,
                                  graph::Attrs attrs = {}, int outputs = 1) {
  return OneNode(op, std::move(in), std::move(attrs), outputs).run();
}

// Shape inference over declared types (with unknown dims), without values.
inline std::vector<graph::TensorType> infer_types(const std::string& op,
                                                  const std::vector<graph::TensorType>& types,
                                                  graph::Attrs attrs = {}, int outputs = 1) {
  graph::Graph g;
  std::vector<graph::Value*> values;
  for (size_t i = 0; i < types.size(); ++i) values.push_back(g.add_input("in" + std::to_string(i), types[i]));
  std::vector<std::string> names;
  for (int i = 0; i < outputs; ++i) names.push_back("out" + std::to_string(i));
  graph::Node* n = g.add_node(op, "node_under_test", values, names, std::move(attrs));
  graph::infer_node(*n);
  std::vector<graph::TensorType> out;
  for (graph::Value* v : n->outputs) out.push_back(v->type);
  return out;
}

inline void expect_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(size_t(t.numel()), want.size()) << t.type_str();
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(t.get_f64(int64_t(i)), want[i], tol) << "element " << i;
}

// f must throw a UserError whose message contains every substring.
inline void expect_user_error(const std::function<void()>& f, const std::vector<std::string>& substrings) {
  try {
    f();
  } catch (const UserError& e) {
    std::string msg = e.what();
    for (const std::string& s : substrings)
      EXPECT_NE(msg.find(s), std::string::npos) << "'" << s << "' not in: " << msg;
    return;
  }
  ADD_FAILURE() << "expected a UserError";
}

template <typename... Kv>
graph::Attrs attrs(Kv&&... kv) {
  graph::Attrs a;
  (a.set(kv.first, kv.second), ...);
  return a;
}

inline std::pair<std::string, graph::AttrValue> kv(std::string k, graph::AttrValue v) {
  return {std::move(k), std::move(v)};
}
inline graph::AttrValue ints(std::vector<int64_t> v) {
  return v;
}

}  // namespace tessel::nn_test
