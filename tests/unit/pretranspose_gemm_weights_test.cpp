// pretranspose_gemm_weights: a Gemm with a constant transposed B reads B^T
// with transB=0 after load_graph, and computes the same outputs.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "onnx/onnx_pb.h"
#include "src/driver/pipeline.h"
#include "src/passes/pretranspose_gemm_weights.h"
#include "src/reference/executor.h"

namespace tessel {
namespace {

// y = Gemm(x f32[2, 3], W f32[4, 3] constant, transB = 1), and z = Gemm(x, W) again.
std::string write_gemm_model(bool twice) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {2, 3}) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(3);
  for (int i = 0; i < 12; ++i) w->add_float_data(float(i) - 5.5f);
  for (const char* out : twice ? std::vector<const char*>{"y", "z"} : std::vector<const char*>{"y"}) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("Gemm");
    n->set_name(std::string("gemm_") + out);
    n->add_input("x");
    n->add_input("W");
    n->add_output(out);
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("transB");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(1);
    g->add_output()->set_name(out);
  }
  std::string path = (std::filesystem::temp_directory_path() /
                      ("tessel_pretranspose_" + std::to_string(twice) + ".onnx")).string();
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

TEST(PretransposeGemmWeights, ConstantBIsTransposedOnceAndTransBCleared) {
  std::string path = write_gemm_model(/*twice=*/true);
  graph::Graph g = driver::load_graph(path, {});
  std::vector<graph::Node*> nodes = g.nodes();
  ASSERT_EQ(nodes.size(), 2u);
  const graph::Value* wt = nodes[0]->inputs[1];
  EXPECT_EQ(nodes[1]->inputs[1], wt) << "a shared weight is transposed once";
  EXPECT_EQ(nodes[0]->attrs.get_int("transB"), 0);
  ASSERT_TRUE(wt->is_constant());
  EXPECT_EQ(wt->constant->shape(), (Dims{3, 4}));
  // W[n, k] = 3n + k - 5.5 read as W_t[k, n].
  EXPECT_EQ(wt->constant->data<float>()[1], 3.0f - 5.5f);  // W_t[0, 1] = W[1, 0]
  EXPECT_EQ(wt->constant->data<float>()[4], 1.0f - 5.5f);  // W_t[1, 0] = W[0, 1]
  std::remove(path.c_str());
}

TEST(PretransposeGemmWeights, OutputsAreBitForBitTheSame) {
  std::string path = write_gemm_model(/*twice=*/false);
  graph::Graph g = driver::load_graph(path, {});
  Tensor x(DType::kF32, {2, 3});
  for (int i = 0; i < 6; ++i) x.data<float>()[i] = 0.25f * float(i) - 0.6f;
  Tensor y = reference::Executor(g).run({x})[0];
  for (int r = 0; r < 2; ++r)
    for (int n = 0; n < 4; ++n) {
      float want = 0;
      for (int k = 0; k < 3; ++k) want += x.data<float>()[r * 3 + k] * (float(n * 3 + k) - 5.5f);
      EXPECT_FLOAT_EQ(y.data<float>()[r * 4 + n], want) << r << ", " << n;
    }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tessel
