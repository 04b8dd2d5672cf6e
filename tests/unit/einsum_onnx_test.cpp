// Einsum (adapters_einsum.cpp): a contraction becomes one MatMul, a diagonal
// and a sum need none, and malformed equations are refused by name.
// Equations against numpy.einsum: tests/model/einsum_vs_numpy.py.
#include <gtest/gtest.h>

#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

int count_ops(const graph::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op == op;
  return n;
}

ModelBuilder einsum_model(const std::string& equation,
                          const std::vector<std::vector<std::variant<int64_t, std::string>>>& shapes) {
  ModelBuilder b(12);
  std::vector<std::string> names;
  for (size_t i = 0; i < shapes.size(); ++i) {
    names.push_back("x" + std::to_string(i));
    b.input(names.back(), shapes[i]);
  }
  onnx::NodeProto* n = b.node("Einsum", names, {"y"}, "es");
  ModelBuilder::set_string(n, "equation", equation);
  b.output("y");
  return b;
}

graph::Graph einsum(const std::string& equation,
                    const std::vector<std::vector<std::variant<int64_t, std::string>>>& shapes) {
  return einsum_model(equation, shapes).import();
}

TEST(Einsum, AttentionScoresAreOneBatchedMatMul) {
  graph::Graph g = einsum("bhqd,bhkd->bhqk", {{2, 3, 4, 8}, {2, 3, 5, 8}});
  EXPECT_EQ(count_ops(g, "MatMul"), 1);
  EXPECT_EQ(count_ops(g, "ReduceSum"), 0);
  EXPECT_EQ(g.outputs()[0]->type.dims, (graph::TensorType(DType::kF32, {2, 3, 4, 5}).dims));
}

TEST(Einsum, ADiagonalIsMaskedAndSummed) {
  graph::Graph g = einsum("ii->i", {{3, 3}});
  EXPECT_EQ(count_ops(g, "MatMul"), 0);
  Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  EXPECT_EQ(reference::Executor(g).run({x})[0].to_f64_vector(), (std::vector<double>{1, 5, 9}));
}

TEST(Einsum, MalformedEquationsAreRefusedByName) {
  struct Case {
    std::string equation, message;
  };
  for (const Case& c :
       {Case{"ij,jk->ik", "has 2 terms for 1 inputs"}, Case{"ijk->i", "has 3 labels for an input of rank 2"},
        Case{"ij->iz", "the output has a label no input has"}, Case{"ij->ii", "the output repeats a label"},
        Case{"i1->i", "is no label"}}) {
    SCOPED_TRACE(c.equation);
    ModelBuilder b = einsum_model(c.equation, {{3, 4}});
    expect_import_error(b, c.message);
  }
}

}  // namespace
}  // namespace tessel::onnx_test
