// Data that decides an address or would trap, through the real binary: an
// index out of range (Gather, GatherElements, GatherND, ScatterElements,
// ScatterND) or an integer divisor of zero (Div, Mod) is one user error
// (exit 2) naming the node and the value, from the compiled code (in memory
// and as a model.so), the tensor IR interpreter and the reference executor
// alike; a constant index out of range is a compile-time error.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "src/driver/npy.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using cli_test::contains;
using cli_test::expect_user_error;
using cli_test::Result;
using cli_test::TempDir;

void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
               int elem_type, const std::vector<int64_t>& dims) {
  auto* vi = list->Add();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// A one-node model: inputs (name, ONNX dtype, dims), output "y", int attributes.
struct Model {
  onnx::ModelProto proto;
  Model(const std::string& op, const std::vector<std::tuple<std::string, int, std::vector<int64_t>>>& inputs,
        const std::vector<std::pair<std::string, int64_t>>& attrs = {}) {
    proto.set_ir_version(8);
    proto.add_opset_import()->set_version(18);
    onnx::GraphProto* g = proto.mutable_graph();
    g->set_name("g");
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name("the_" + op);
    for (const auto& [name, type, dims] : inputs) {
      add_value(g->mutable_input(), name, type, dims);
      n->add_input(name);
    }
    n->add_output("y");
    g->add_output()->set_name("y");
    for (const auto& [key, value] : attrs) {
      auto* a = n->add_attribute();
      a->set_name(key);
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(value);
    }
  }
  // Makes input `name` an initializer holding `values` (int64).
  Model& constant(const std::string& name, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& values) {
    onnx::GraphProto* g = proto.mutable_graph();
    for (int i = 0; i < g->input_size(); ++i)
      if (g->input(i).name() == name) g->mutable_input()->DeleteSubrange(i, 1);
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  std::string save(const fs::path& dir) const {
    fs::path path = dir / "model.onnx";
    std::ofstream out(path, std::ios::binary);
    proto.SerializeToOstream(&out);
    return path.string();
  }
};

constexpr int kF32 = onnx::TensorProto::FLOAT, kI32 = onnx::TensorProto::INT32,
              kI64 = onnx::TensorProto::INT64;

Tensor f32(Dims shape) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t e = 0; e < t.numel(); ++e) t.set_f64(e, double(e));
  return t;
}

Tensor ints(DType dtype, Dims shape, const std::vector<int64_t>& values) {
  Tensor t(dtype, std::move(shape));
  for (size_t e = 0; e < values.size(); ++e) t.set_i64(int64_t(e), values[e]);
  return t;
}

// Writes the tensors as DIR/<name>.npy and returns DIR.
std::string inputs_dir(const fs::path& dir, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  fs::create_directories(dir);
  for (const auto& [name, t] : inputs) driver::write_npy((dir / (name + ".npy")).string(), t);
  return dir.string();
}

// The model on `bad` inputs: the same user error from the compiled code, the
// tensor IR interpreter (both fusion rules) and the reference executor; on
// `good` inputs every one runs.
void expect_rejected_everywhere(const std::string& model, const std::string& good, const std::string& bad,
                                const std::string& message) {
  for (std::vector<std::string> mode : {std::vector<std::string>{},
                                        {"--tir"},
                                        {"--tir", "--fusion", "none"},
                                        {"--reference"},
                                        {"--fusion", "none"}}) {
    std::vector<std::string> args = {"run", model, "--inputs", bad};
    args.insert(args.end(), mode.begin(), mode.end());
    SCOPED_TRACE(testing::PrintToString(mode));
    expect_user_error(cli_test::run_tessel(args), message);
    args[3] = good;
    Result ok = cli_test::run_tessel(args);
    EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  }
}

TEST(DataChecksCli, GatherIndexOutOfRange) {
  TempDir dir;
  std::string model =
      Model("Gather", {{"data", kF32, {5, 4}}, {"indices", kI64, {3}}}, {{"axis", 0}}).save(dir.path());
  Tensor data = f32({5, 4});
  std::string good =
      inputs_dir(dir.path() / "good", {{"data", data}, {"indices", ints(DType::kI64, {3}, {4, -5, 0})}});
  std::string big = inputs_dir(dir.path() / "big",
                               {{"data", data}, {"indices", ints(DType::kI64, {3}, {0, 1, 1000000000})}});
  std::string negative =
      inputs_dir(dir.path() / "neg", {{"data", data}, {"indices", ints(DType::kI64, {3}, {0, -6, 1})}});
  expect_rejected_everywhere(model, good, big, "1000000000 is out of range");
  expect_rejected_everywhere(model, good, negative, "-6 is out of range");
  // The compiled code's message in full: the node, the position, the value and the range.
  expect_user_error(
      cli_test::run_tessel({"run", model, "--inputs", big}),
      "node 'the_Gather' (Gather): indices[2] = 1000000000 is out of range [-5, 5) for data axis 0");
}

TEST(DataChecksCli, GatherFromAModelLibrary) {
  TempDir dir;
  std::string model =
      Model("Gather", {{"data", kF32, {5, 4}}, {"indices", kI32, {2, 2}}}, {{"axis", 0}}).save(dir.path());
  std::string so = (dir.path() / "model.so").string();
  Result compiled = cli_test::run_tessel({"compile", model, "-o", so});
  ASSERT_EQ(compiled.code, 0) << compiled.out << compiled.err;
  std::string bad = inputs_dir(dir.path() / "bad",
                               {{"data", f32({5, 4})}, {"indices", ints(DType::kI32, {2, 2}, {0, 1, 7, 2})}});
  expect_user_error(cli_test::run_tessel({"run", so, "--inputs", bad}),
                    "node 'the_Gather' (Gather): indices[1, 0] = 7 is out of range [-5, 5) for data axis 0");
}

TEST(DataChecksCli, ConstantIndicesAreCheckedAtCompileTime) {
  TempDir dir;
  std::string model = Model("Gather", {{"data", kF32, {5, 4}}, {"indices", kI64, {2}}}, {{"axis", 0}})
                          .constant("indices", {2}, {1, -9})
                          .save(dir.path());
  expect_user_error(cli_test::run_tessel({"compile", model, "-o", (dir.path() / "m.so").string()}),
                    "node 'the_Gather' (Gather): indices[1] = -9 is out of range [-5, 5) for data axis 0");
  expect_user_error(cli_test::run_tessel({"run", model, "--tir"}), "indices[1] = -9 is out of range");
  expect_user_error(cli_test::run_tessel({"run", model, "--reference"}), "out of range");
}

TEST(DataChecksCli, GatherElementsIndexOutOfRange) {
  TempDir dir;
  std::string model =
      Model("GatherElements", {{"data", kF32, {2, 3}}, {"indices", kI64, {2, 2}}}, {{"axis", 1}})
          .save(dir.path());
  std::string good = inputs_dir(
      dir.path() / "good", {{"data", f32({2, 3})}, {"indices", ints(DType::kI64, {2, 2}, {0, 2, -3, 1})}});
  std::string bad = inputs_dir(dir.path() / "bad",
                               {{"data", f32({2, 3})}, {"indices", ints(DType::kI64, {2, 2}, {0, 2, 3, 1})}});
  expect_rejected_everywhere(model, good, bad, "3 is out of range");
}

TEST(DataChecksCli, GatherNDIndexOutOfRange) {
  TempDir dir;
  std::string model = Model("GatherND", {{"data", kF32, {3, 4}}, {"indices", kI64, {2, 2}}}).save(dir.path());
  std::string good = inputs_dir(
      dir.path() / "good", {{"data", f32({3, 4})}, {"indices", ints(DType::kI64, {2, 2}, {2, 3, -3, -4})}});
  std::string bad = inputs_dir(dir.path() / "bad",
                               {{"data", f32({3, 4})}, {"indices", ints(DType::kI64, {2, 2}, {2, 3, 0, 4})}});
  expect_rejected_everywhere(model, good, bad, "4 is out of range");
  expect_user_error(cli_test::run_tessel({"run", model, "--inputs", bad}),
                    "indices[1, 1] = 4 is out of range [-4, 4) for data axis 1");
}

TEST(DataChecksCli, ScatterElementsIndexOutOfRange) {
  TempDir dir;
  std::string model =
      Model("ScatterElements", {{"data", kF32, {3, 4}}, {"indices", kI64, {1, 2}}, {"updates", kF32, {1, 2}}},
            {{"axis", 0}})
          .save(dir.path());
  Tensor data = f32({3, 4}), updates = f32({1, 2});
  std::string good =
      inputs_dir(dir.path() / "good",
                 {{"data", data}, {"indices", ints(DType::kI64, {1, 2}, {2, -3})}, {"updates", updates}});
  std::string bad =
      inputs_dir(dir.path() / "bad",
                 {{"data", data}, {"indices", ints(DType::kI64, {1, 2}, {2, -4})}, {"updates", updates}});
  expect_rejected_everywhere(model, good, bad, "-4 is out of range");
}

TEST(DataChecksCli, ScatterNDIndexOutOfRange) {
  TempDir dir;
  std::string model =
      Model("ScatterND", {{"data", kF32, {4, 3}}, {"indices", kI64, {2, 1}}, {"updates", kF32, {2, 3}}})
          .save(dir.path());
  Tensor data = f32({4, 3}), updates = f32({2, 3});
  std::string good =
      inputs_dir(dir.path() / "good",
                 {{"data", data}, {"indices", ints(DType::kI64, {2, 1}, {3, -4})}, {"updates", updates}});
  std::string bad =
      inputs_dir(dir.path() / "bad",
                 {{"data", data}, {"indices", ints(DType::kI64, {2, 1}, {1, 4})}, {"updates", updates}});
  expect_rejected_everywhere(model, good, bad, "4 is out of range");
}

TEST(DataChecksCli, IntegerDivisionByZero) {
  for (const char* op : {"Div", "Mod"}) {
    TempDir dir;
    std::string model = Model(op, {{"a", kI32, {4}}, {"b", kI32, {4}}}).save(dir.path());
    Tensor a = ints(DType::kI32, {4}, {7, -7, 9, 1});
    std::string good =
        inputs_dir(dir.path() / "good", {{"a", a}, {"b", ints(DType::kI32, {4}, {2, -1, 3, 5})}});
    std::string bad = inputs_dir(dir.path() / "bad", {{"a", a}, {"b", ints(DType::kI32, {4}, {2, 3, 0, 5})}});
    SCOPED_TRACE(op);
    expect_rejected_everywhere(model, good, bad, "division by zero");
    expect_user_error(
        cli_test::run_tessel({"run", model, "--inputs", bad}),
        std::string("node 'the_") + op + "' (" + op + "): divisor B[2] is 0: integer division by zero");
  }
}

TEST(DataChecksCli, ConstantZeroDivisorIsACompileTimeError) {
  TempDir dir;
  std::string model =
      Model("Div", {{"a", kI64, {2}}, {"b", kI64, {2}}}).constant("b", {2}, {3, 0}).save(dir.path());
  expect_user_error(cli_test::run_tessel({"compile", model, "-o", (dir.path() / "m.so").string()}),
                    "node 'the_Div' (Div): divisor B[1] is 0: integer division by zero");
}

// The loss ops pick each position's class out of the input: a class outside
// [0, C) is refused (a negative one is not counted from the end), while the
// ignore_index is skipped.
TEST(DataChecksCli, LossTargetOutOfRange) {
  TempDir dir;
  std::string model = Model("NegativeLogLikelihoodLoss", {{"input", kF32, {3, 5}}, {"target", kI64, {3}}},
                            {{"ignore_index", 7}})
                          .save(dir.path());
  Tensor input = f32({3, 5});
  std::string good =
      inputs_dir(dir.path() / "good", {{"input", input}, {"target", ints(DType::kI64, {3}, {4, 7, 0})}});
  std::string big =
      inputs_dir(dir.path() / "big", {{"input", input}, {"target", ints(DType::kI64, {3}, {4, 5, 0})}});
  std::string negative =
      inputs_dir(dir.path() / "neg", {{"input", input}, {"target", ints(DType::kI64, {3}, {4, 0, -1})}});
  expect_rejected_everywhere(model, good, big, "5 is out of range");
  expect_rejected_everywhere(model, good, negative, "out of range");
}

}  // namespace
}  // namespace tessel
