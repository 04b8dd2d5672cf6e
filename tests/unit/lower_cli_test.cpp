// Tests of `tessel lower`, `tessel run --tir` and `tessel conformance --target
// tir`, run as a separate process: the groups each policy makes on
// examples/tiny_cnn.onnx, --node, --print, the user errors, the interpreted
// model against the reference executor, and case verdicts on the tensor IR.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "src/driver/conformance.h"
#include "src/driver/npy.h"
#include "src/frontend/onnx/tensor_proto.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

using cli_test::read_file;
using cli_test::Result;
using cli_test::contains;
using cli_test::expect_user_error;

// Runs `tessel ARGS` (a shell command line; the tests' paths need no quoting).
Result tessel(const std::string& args) {
  return cli_test::run_tessel_line(args);
}

Result tessel_on_tiny_cnn(const std::string& command, const std::string& args) {
  return tessel(command + " '" + TESSEL_SOURCE_DIR + "/examples/tiny_cnn.onnx' " + args);
}

Result lower_tiny_cnn(const std::string& args) {
  return tessel_on_tiny_cnn("lower", args);
}

int count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

constexpr const char* kShape = "--input-shape image=1x1x28x28";

TEST(LowerCliTest, SimpleFusionGroupsAnchorsWithTheirNeighbours) {
  Result r = lower_tiny_cnn(std::string(kShape) + " --fusion simple");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "fusion simple: 6 groups of 9 nodes\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "group fused_conv1: conv1 (Conv), relu1 (Relu)\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "group fused_fc: flatten (Flatten), fc (Gemm)\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "group softmax: softmax (Softmax)\n")) << r.out;
  // The fused conv reads the image and both weights, and hands on r1.
  EXPECT_TRUE(contains(r.out,
                       "func fused_conv1(image: f32[1, 1, 28, 28], conv1_w: f32[8, 1, 3, 3], "
                       "conv1_b: f32[8]) -> (r1: f32[1, 8, 28, 28])"))
      << r.out;
  EXPECT_EQ(count(r.out, "\ngroup "), 6);
}

TEST(LowerCliTest, NoFusionMakesAGroupPerNode) {
  Result r = lower_tiny_cnn(std::string(kShape));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "fusion none: 9 groups of 9 nodes\n")) << r.out;
  EXPECT_EQ(count(r.out, "\ngroup "), 9);
  EXPECT_TRUE(contains(r.out, "func relu1(c1: f32[1, 8, 28, 28]) -> (r1: f32[1, 8, 28, 28])")) << r.out;
}

TEST(LowerCliTest, NodeSelectsItsGroupAndPrintShowsThePrimFunc) {
  Result r = lower_tiny_cnn(std::string(kShape) + " --fusion simple --node relu2 --print");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count(r.out, "\ngroup "), 1) << r.out;
  EXPECT_TRUE(contains(r.out, "group fused_conv2: conv2 (Conv), relu2 (Relu)\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nfunc fused_conv2(")) << r.out;  // the printed IR
  EXPECT_TRUE(contains(r.out, "block ")) << r.out;
}

TEST(LowerCliTest, HelpNamesTheCommandAndItsFlags) {
  Result help = tessel("lower --help");
  EXPECT_EQ(help.code, 0) << help.err;
  EXPECT_EQ(help.out.rfind("usage: tessel lower MODEL.onnx", 0), 0u) << help.out;
  for (const char* flag : {"--input-shape", "--fusion", "--node", "--print"})
    EXPECT_TRUE(contains(help.out, flag));
  EXPECT_TRUE(contains(tessel("--help").out, "  lower ")) << "the command table lists lower";
  EXPECT_TRUE(contains(tessel("conformance --help").out, "--fusion"));
}

TEST(LowerCliTest, UnknownNodeIsAUserError) {
  expect_user_error(lower_tiny_cnn(std::string(kShape) + " --node conv9"),
                    "no node named 'conv9' in the model");
}

TEST(LowerCliTest, UnknownFusionIsAUserError) {
  expect_user_error(lower_tiny_cnn(std::string(kShape) + " --fusion greedy"),
                    "unknown fusion policy 'greedy'");
}

TEST(LowerCliTest, SymbolicShapesAreAUserError) {
  expect_user_error(lower_tiny_cnn(""), "lowering needs static shapes");
}

TEST(LowerCliTest, RunOnTheTensorIrMatchesTheReference) {
  fs::path dir = fs::temp_directory_path() / ("tessel_run_tir_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string common = std::string(kShape) + " --seed 3 --out '" + dir.string();
  Result ref = tessel_on_tiny_cnn("run", "--reference " + common + "/reference'");
  Result tir = tessel_on_tiny_cnn("run", "--tir --fusion simple " + common + "/tir'");
  expect_user_error(tessel_on_tiny_cnn("run", "--reference --fusion simple " + std::string(kShape)),
                    "--fusion applies to --tir and compiled runs only");
  ASSERT_EQ(ref.code, 0) << ref.err;
  ASSERT_EQ(tir.code, 0) << tir.err;
  Tensor want = driver::read_npy((dir / "reference" / "probs.npy").string());
  Tensor got = driver::read_npy((dir / "tir" / "probs.npy").string());
  EXPECT_EQ(driver::compare_tensors(got, want, {1e-5, 1e-7}), "");
  fs::remove_all(dir);
}

void add_input(onnx::GraphProto* g, const std::string& name, int elem_type, const std::vector<int64_t>& dims,
               const std::string& symbol = "") {
  auto* tt = g->add_input()->mutable_type()->mutable_tensor_type();
  g->mutable_input(g->input_size() - 1)->set_name(name);
  tt->set_elem_type(elem_type);
  for (int64_t d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (d >= 0)
      dim->set_dim_value(d);
    else
      dim->set_dim_param(symbol);
  }
}

// y = Relu(Reshape(x, shape)) with the shape a graph input, as ONNX's cases
// pass it; x: f32[2, 3] (or f32[N, 3]), expected y: f32[3, 2].
// wrong_rank: x declared f32[N, 3, 1], a rank its data does not have.
void write_reshape_case(const fs::path& dir, bool right, bool symbolic = false, bool wrong_rank = false) {
  fs::create_directories(dir / "test_data_set_0");
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  std::vector<int64_t> x_dims{symbolic ? -1 : 2, 3};
  if (wrong_rank) x_dims.push_back(1);
  add_input(g, "x", onnx::TensorProto::FLOAT, x_dims, "N");
  add_input(g, "shape", onnx::TensorProto::INT64, {2});
  for (auto [op, ins, out] :
       {std::tuple<const char*, std::vector<std::string>, const char*>{"Reshape", {"x", "shape"}, "r"},
        {"Relu", {"r"}, "y"}}) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(std::string(op) + "_node");
    for (const std::string& i : ins) n->add_input(i);
    n->add_output(out);
  }
  g->add_output()->set_name("y");
  std::ofstream model(dir / "model.onnx", std::ios::binary);
  m.SerializeToOstream(&model);
  Tensor x(DType::kF32, {2, 3}), y(DType::kF32, {3, 2});
  for (int i = 0; i < 6; ++i) {
    x.set_f64(i, i % 2 ? i : -i);
    y.set_f64(i, i % 2 ? i : 0);
  }
  if (!right) y.set_f64(5, 6);
  fs::path set = dir / "test_data_set_0";
  onnx_frontend::save_tensor_pb(x, "x", (set / "input_0.pb").string());
  onnx_frontend::save_tensor_pb(Tensor::from_i64({3, 2}), "shape", (set / "input_1.pb").string());
  onnx_frontend::save_tensor_pb(y, "y", (set / "output_0.pb").string());
}

TEST(LowerCliTest, ConformanceOnTheTensorIr) {
  fs::path dir = fs::temp_directory_path() / ("tessel_conformance_tir_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  write_reshape_case(dir / "test_good", true);
  write_reshape_case(dir / "test_bad", false);
  write_reshape_case(dir / "test_symbolic", true, true);
  write_reshape_case(dir / "test_wrong_rank", true, true, true);
  Result r = tessel("conformance '" + dir.string() + "' --target tir --fusion simple");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.out, "FAIL test_bad: test_data_set_0 output 0: 1 of 6 elements differ")) << r.out;
  EXPECT_TRUE(contains(r.out, "PASS test_good\n")) << r.out;
  // The runner binds a dimension the model leaves open from the case's data.
  EXPECT_TRUE(contains(r.out, "PASS test_symbolic\n")) << r.out;
  // An error while compiling is the case's verdict, with its message.
  EXPECT_TRUE(contains(r.out, "FAIL test_wrong_rank: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "2 passed, 2 failed\n")) << r.out;
  expect_user_error(
      tessel("conformance '" + dir.string() + "' --target tpu"),
      "unknown conformance target 'tpu' (available: reference, tir, llvm, cuda, cuda-emulated)");
  expect_user_error(tessel("conformance '" + dir.string() + "' --target tir --fusion all"),
                    "unknown fusion policy 'all'");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessel
