// Helpers of the movement-op unit tests: tensors from literals, one-node
// graphs run on the reference executor, error-message checks.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ir/graph/op_registry.h"
#include "src/reference/executor.h"

namespace tessel::movement_test {

inline Tensor f32(const Dims& shape, const std::vector<double>& v) {
  Tensor t(DType::kF32, shape);
  EXPECT_EQ(size_t(t.numel()), v.size()) << "literal of the wrong size";
  for (size_t i = 0; i < v.size() && i < size_t(t.numel()); ++i) t.set_f64(int64_t(i), v[i]);
  return t;
}

inline Tensor i64(const std::vector<int64_t>& v) {
  return Tensor::from_i64(v);
}

inline Tensor iota(DType dtype, const Dims& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_i64(i, i);
  return t;
}

inline std::vector<double> values(const Tensor& t) {
  return t.to_f64_vector();
}

using Args = std::vector<std::optional<Tensor>>;  // nullopt: omitted optional input

// Builds the node `op` named "the_<op>" over constant inputs, infers it and
// evaluates it on the reference executor.
inline std::vector<Tensor> run(const std::string& op, const Args& args, graph::Attrs attrs = {},
                               int num_outputs = 1) {
  graph::Graph g;
  std::vector<graph::Value*> ins;
  for (size_t i = 0; i < args.size(); ++i)
    ins.push_back(args[i] ? g.add_constant("in" + std::to_string(i), *args[i]) : nullptr);
  std::vector<std::string> outs;
  for (int i = 0; i < num_outputs; ++i) outs.push_back("out" + std::to_string(i));
  graph::Node* n = g.add_node(op, "the_" + op, ins, outs, std::move(attrs));
  graph::infer_node(*n);
  std::vector<const Tensor*> ptrs;
  for (graph::Value* v : ins) ptrs.push_back(v ? &*v->constant : nullptr);
  std::vector<Tensor> result = reference::evaluate_node(*n, ptrs);
  for (size_t i = 0; i < result.size(); ++i)
    EXPECT_EQ(graph::TensorType(result[i].dtype(), result[i].shape()).str(), n->outputs[i]->type.str())
        << "inferred type of output " << i << " differs from the evaluated one";
  return result;
}

inline graph::Attrs attrs_of(std::initializer_list<std::pair<const char*, graph::AttrValue>> list) {
  graph::Attrs a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}

// Expects f to throw a UserError naming node `node` and containing `text`.
template <typename F>
void expect_user_error(F&& f, const std::string& node, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << text << "'";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(node), std::string::npos) << msg;
    EXPECT_NE(msg.find(text), std::string::npos) << msg;
  }
}

}  // namespace tessel::movement_test
