// Helpers of the elementwise unit tests: small tensors from value lists, one
// node built, inferred and evaluated on the reference executor.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/graph/graph.h"
#include "ir/graph/op_registry.h"
#include "src/reference/executor.h"

namespace tessel::elementwise_test {

inline Tensor make(DType dtype, Dims shape, const std::vector<double>& values) {
  Tensor t(dtype, std::move(shape));
  EXPECT_EQ(size_t(t.numel()), values.size()) << "test tensor has the wrong number of values";
  for (size_t i = 0; i < values.size() && int64_t(i) < t.numel(); ++i) t.set_f64(int64_t(i), values[i]);
  return t;
}

inline Tensor f32(Dims shape, const std::vector<double>& v) {
  return make(DType::kF32, std::move(shape), v);
}
inline Tensor i32(Dims shape, const std::vector<double>& v) {
  return make(DType::kI32, std::move(shape), v);
}

// A graph of one node `op` (named "n_<op>") over graph inputs typed like `ins`
// (null: an omitted input), with its types inferred.
struct OneNode {
  graph::Graph g;
  graph::Node* node = nullptr;

  OneNode(const std::string& op, const std::vector<const Tensor*>& ins, graph::Attrs attrs = {},
          int outs = 1) {
    std::vector<graph::Value*> values;
    for (size_t i = 0; i < ins.size(); ++i)
      values.push_back(
          ins[i] ? g.add_input("x" + std::to_string(i), graph::TensorType(ins[i]->dtype(), ins[i]->shape()))
                 : nullptr);
    std::vector<std::string> names;
    for (int i = 0; i < outs; ++i) names.push_back("y" + std::to_string(i));
    node = g.add_node(op, "n_" + op, values, names, std::move(attrs));
    graph::infer_node(*node);
  }
};

// Infers and evaluates one node on concrete inputs.
inline std::vector<Tensor> run_op(const std::string& op, const std::vector<const Tensor*>& ins,
                                  graph::Attrs attrs = {}, int outs = 1) {
  OneNode one(op, ins, std::move(attrs), outs);
  return reference::evaluate_node(*one.node, ins);
}

inline std::vector<double> values(const Tensor& t) {
  return t.to_f64_vector();
}

// Runs f, which must throw a UserError whose message has every substring.
template <typename F>
void expect_user_error(F f, const std::vector<std::string>& substrings) {
  try {
    f();
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    for (const std::string& s : substrings)
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos)
          << "message: " << e.what() << "\nmissing: " << s;
  }
}

}  // namespace tessel::elementwise_test
