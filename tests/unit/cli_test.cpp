// Tests of the `tessel` command line, run as a separate process: exit codes
// (0 success, 1 failed cases, 2 user error), where messages go, the inspect
// report, and `run --reference` with .npy and .pb inputs and outputs.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "src/driver/npy.h"
#include "src/frontend/onnx/tensor_proto.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

using cli_test::quote;
using cli_test::read_file;
using cli_test::Result;
using cli_test::contains;
using cli_test::expect_user_error;
using cli_test::TempDir;

Result tessel(const std::vector<std::string>& args) {
  return cli_test::run_tessel(args);
}

void add_input(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
               const std::string& symbol = "") {
  auto* vi = g->add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (d >= 0)
      dim->set_dim_value(d);
    else
      dim->set_dim_param(symbol);
  }
}

void add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& ins,
              const std::string& out, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : ins) n->add_input(i);
  n->add_output(out);
}

onnx::ModelProto new_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  m.mutable_graph()->set_name("g");
  return m;
}

// out/y = Relu(x + bias:0) over f32[2, 3]; the names need safe file names.
onnx::ModelProto relu_add(const std::string& x_symbol = "") {
  onnx::ModelProto m = new_model();
  onnx::GraphProto* g = m.mutable_graph();
  add_input(g, "x", {x_symbol.empty() ? 2 : -1, 3}, x_symbol);
  add_input(g, "bias:0", {2, 3});
  add_node(g, "Add", {"x", "bias:0"}, "s", "add");
  add_node(g, "Relu", {"s"}, "out/y", "relu");
  g->add_output()->set_name("out/y");
  return m;
}

fs::path save(const onnx::ModelProto& m, const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
  return path;
}

Tensor f32(Dims shape, const std::vector<double>& values) {
  Tensor t(DType::kF32, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set_f64(int64_t(i), values[i]);
  return t;
}

const Tensor kX = f32({2, 3}, {-1, 2, -3, 4, -5, 6});
const Tensor kBias = f32({2, 3}, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
const std::vector<double> kExpected = {0, 2.5, 0, 4.5, 0, 6.5};

TEST(Cli, HelpOnEveryCommand) {
  for (const char* cmd : {"inspect", "run", "compile", "check", "conformance", "version"}) {
    for (const char* flag : {"--help", "-h"}) {
      Result r = tessel({cmd, flag});
      EXPECT_EQ(r.code, 0) << cmd << " " << flag << ": " << r.err;
      EXPECT_EQ(r.out.rfind(std::string("usage: tessel ") + cmd, 0), 0u) << r.out;
    }
  }
  Result top = tessel({"--help"});
  EXPECT_EQ(top.code, 0);
  for (const char* cmd : {"inspect", "run", "conformance", "version"}) EXPECT_TRUE(contains(top.out, cmd));
}

TEST(Cli, NoCommandOrUnknownCommand) {
  Result none = tessel({});
  EXPECT_EQ(none.code, 2);
  EXPECT_TRUE(contains(none.err, "usage: tessel <command>")) << none.err;
  Result unknown = tessel({"compile-everything"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(contains(unknown.err, "tessel: unknown command 'compile-everything'")) << unknown.err;
}

TEST(Cli, UnknownOrIncompleteOption) {
  TempDir dir;
  fs::path model = save(relu_add(), dir / "m.onnx");
  expect_user_error(tessel({"inspect", model.string(), "--bogus"}), "unknown option --bogus (see --help)");
  expect_user_error(tessel({"run", model.string(), "--reference", "--out"}), "option --out needs a value");
  expect_user_error(tessel({"run", model.string(), "--reference", "--seed", "abc"}),
                    "option --seed expects an integer, got 'abc'");
  expect_user_error(tessel({"inspect"}), "inspect takes one model file");
  expect_user_error(tessel({"run", model.string(), "--reference", "--tir"}), "pass one of --reference and --tir");
}

TEST(Cli, MissingFile) {
  TempDir dir;
  std::string path = (dir / "absent.onnx").string();
  expect_user_error(tessel({"inspect", path}), path + ": no such file");
  expect_user_error(tessel({"run", path, "--reference"}), path + ": no such file");
}

TEST(Cli, FileThatIsNotOnnx) {
  TempDir dir;
  fs::path path = dir / "readme.onnx";
  std::ofstream(path) << "just some text\n";
  expect_user_error(tessel({"inspect", path.string()}), path.string() + ": not a valid ONNX model");
}

TEST(Cli, TruncatedModel) {
  TempDir dir;
  std::string bytes = relu_add().SerializeAsString();
  fs::path path = dir / "cut.onnx";
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expect_user_error(tessel({"inspect", path.string()}), path.string() + ": not a valid ONNX model");
}

TEST(Cli, UnknownOpsAreListedTogether) {
  TempDir dir;
  onnx::ModelProto m = new_model();
  add_input(m.mutable_graph(), "x", {2});
  add_node(m.mutable_graph(), "FooBar", {"x"}, "a", "f1");
  add_node(m.mutable_graph(), "Baz", {"a"}, "b", "z1");
  add_node(m.mutable_graph(), "FooBar", {"b"}, "y", "f2");
  m.mutable_graph()->add_output()->set_name("y");
  fs::path path = save(m, dir / "unknown.onnx");
  Result r = tessel({"inspect", path.string()});
  expect_user_error(r, "tessel: error: " + path.string() +
                           ": unsupported ops: Baz (node 'z1'); FooBar (nodes 'f1', 'f2')\n");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one message: " << r.err;
}

TEST(Cli, InspectReportsShapesOpsAndFlops) {
  TempDir dir;
  fs::path path = save(relu_add(), dir / "m.onnx");
  Result r = tessel({"inspect", path.string(), "--print"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string& part :
       {"model " + path.string() + "\n", std::string("graph g: 2 nodes\n"),
        std::string("inputs:\n  x: f32[2, 3]\n  bias:0: f32[2, 3]\noutputs:\n  out/y: f32[2, 3]\n"),
        std::string("parameters: 0"), std::string("total FLOPs: 12 "),
        std::string("%s: f32[2, 3] = Add(%x, %bias:0)  # node 'add'")}) {
    EXPECT_TRUE(contains(r.out, part)) << "'" << part << "' is not in:\n" << r.out;
  }
  std::istringstream lines(r.out.substr(r.out.find("ops:\n")));
  std::string line, add, relu;
  while (std::getline(lines, line) && !line.empty()) {
    if (contains(line, "Add")) add = line;
    if (contains(line, "Relu")) relu = line;
  }
  EXPECT_TRUE(contains(add, " 1")) << add;
  EXPECT_TRUE(contains(relu, " 1")) << relu;
}

void expect_outputs(const fs::path& out_dir, const Result& r) {
  ASSERT_EQ(r.code, 0) << r.err;
  fs::path file = out_dir / "out_y.npy";
  EXPECT_TRUE(contains(r.out, "output 'out/y' f32[2, 3] -> " + file.string())) << r.out;
  ASSERT_TRUE(fs::exists(file));
  Tensor y = driver::read_npy(file.string());
  EXPECT_EQ(y.type_str(), "f32[2, 3]");
  EXPECT_EQ(y.to_f64_vector(), kExpected);
}

TEST(Cli, RunWithNpyInputsWritesNpyOutputs) {
  TempDir dir;
  fs::path model = save(relu_add(), dir / "m.onnx");
  fs::create_directories(dir / "in");
  driver::write_npy((dir / "in" / "x.npy").string(), kX);
  driver::write_npy((dir / "in" / "bias_0.npy").string(), kBias);  // "bias:0" made safe
  fs::path out = dir / "out";
  expect_outputs(out, tessel({"run", model.string(), "--reference", "--inputs", (dir / "in").string(),
                              "--out", out.string()}));
}

TEST(Cli, RunWithPbInputsInGraphOrder) {
  TempDir dir;
  fs::path model = save(relu_add(), dir / "m.onnx");
  fs::create_directories(dir / "in");
  onnx_frontend::save_tensor_pb(kX, "x", (dir / "in" / "input_0.pb").string());
  onnx_frontend::save_tensor_pb(kBias, "bias:0", (dir / "in" / "input_1.pb").string());
  fs::path out = dir / "out";
  expect_outputs(out, tessel({"run", model.string(), "--reference", "--inputs=" + (dir / "in").string(),
                              "--out=" + out.string()}));
}

TEST(Cli, RunInputErrors) {
  TempDir dir;
  fs::path model = save(relu_add(), dir / "m.onnx");
  fs::create_directories(dir / "in");
  driver::write_npy((dir / "in" / "x.npy").string(), kX);
  std::string in = (dir / "in").string();
  expect_user_error(tessel({"run", model.string(), "--reference", "--inputs", in}),
                    "missing input 'bias:0': no file " + (dir / "in" / "bias_0.npy").string());
  driver::write_npy((dir / "in" / "bias_0.npy").string(), f32({3}, {1, 2, 3}));
  expect_user_error(tessel({"run", model.string(), "--reference", "--inputs", in}),
                    (dir / "in" / "bias_0.npy").string() + ": input 'bias:0' must have shape f32[2, 3], got [3]");
  // A header that promises 32 GiB of floats in a file of a hundred bytes.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (8589934592,), }\n";
  std::ofstream(dir / "in" / "bias_0.npy", std::ios::binary)
      << "\x93NUMPY\x01" << '\0' << char(header.size()) << '\0' << header;
  expect_user_error(tessel({"run", model.string(), "--reference", "--inputs", in}),
                    "bias_0.npy: .npy data is truncated (0 bytes, shape (8589934592,) needs 8589934592 x 4)");
  std::ofstream(dir / "in" / "bias_0.npy") << "not numpy";
  expect_user_error(tessel({"run", model.string(), "--reference", "--inputs", in}), "not a .npy file");
  expect_user_error(tessel({"run", model.string(), "--reference", "--inputs", (dir / "nope").string()}),
                    "not a folder");
  // A name the file system refuses is the user's error too, not an internal one.
  std::string too_long = (dir / std::string(300, 'a')).string();
  expect_user_error(tessel({"run", model.string(), "--reference", "--inputs", too_long}),
                    "File name too long");
  expect_user_error(tessel({"conformance", too_long}), "File name too long");
  // An input that is a FIFO would block the reader forever.
  fs::remove(dir / "in" / "bias_0.npy");
  ASSERT_EQ(::mkfifo((dir / "in" / "bias_0.npy").c_str(), 0600), 0);
  expect_user_error(tessel({"run", model.string(), "--reference", "--inputs", in}), "not a regular file");
}

TEST(Cli, RunWithRandomInputsAndSymbolicShapes) {
  TempDir dir;
  fs::path model = save(relu_add("N"), dir / "m.onnx");
  expect_user_error(tessel({"run", model.string(), "--reference"}),
                    "input 'x' has shape f32[N, 3]; bind its dimensions with --input-shape x=...");
  Result r = tessel({"run", model.string(), "--reference", "--input-shape", "x=2x3", "--seed", "7"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "output 'out/y' f32[2, 3]  min ")) << r.out;
  expect_user_error(tessel({"run", model.string(), "--reference", "--input-shape", "x=2xZ"}),
                    "--input-shape 'x=2xZ': 'Z' is not a dimension");
}

// A conformance case folder: model.onnx and one data set whose expected
// output is right or off by one.
void write_case(const fs::path& dir, bool right) {
  fs::create_directories(dir / "test_data_set_0");
  onnx::ModelProto m = new_model();
  add_input(m.mutable_graph(), "x", {2, 3});
  add_node(m.mutable_graph(), "Relu", {"x"}, "y", "relu");
  m.mutable_graph()->add_output()->set_name("y");
  save(m, dir / "model.onnx");
  onnx_frontend::save_tensor_pb(kX, "x", (dir / "test_data_set_0" / "input_0.pb").string());
  Tensor y = f32({2, 3}, {0, 2, 0, 4, 0, right ? 6.0 : 7.0});
  onnx_frontend::save_tensor_pb(y, "y", (dir / "test_data_set_0" / "output_0.pb").string());
}

TEST(Cli, ConformanceExitCodes) {
  TempDir dir;
  write_case(dir / "cases" / "test_good", true);
  Result pass = tessel({"conformance", (dir / "cases").string()});
  EXPECT_EQ(pass.code, 0) << pass.out << pass.err;
  EXPECT_TRUE(contains(pass.out, "PASS test_good\n1 passed, 0 failed\n")) << pass.out;
  write_case(dir / "cases" / "test_bad", false);
  Result fail = tessel({"conformance", (dir / "cases").string()});
  EXPECT_EQ(fail.code, 1) << fail.out << fail.err;
  EXPECT_TRUE(contains(fail.out, "FAIL test_bad: test_data_set_0 output 0: 1 of 6 elements differ"))
      << fail.out;
  EXPECT_TRUE(contains(fail.out, "1 passed, 1 failed\n")) << fail.out;
  expect_user_error(tessel({"conformance", (dir / "none").string()}),
                    (dir / "none").string() + ": not a folder");
}

// The command line is a client of the driver: everything it does, the
// Python binding can do through the same functions. ir/core (diagnostics,
// host tensors) is the vocabulary every layer shares, not a stage.
TEST(Cli, IncludesNothingBelowTheDriver) {
  namespace fs = std::filesystem;
  for (const auto& entry : fs::directory_iterator(fs::path(TESSEL_SOURCE_DIR) / "src" / "cli")) {
    if (entry.path().extension() != ".cpp" && entry.path().extension() != ".h") continue;
    std::istringstream lines(cli_test::read_file(entry.path()));
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("#include \"", 0) != 0) continue;
      std::string header = line.substr(10, line.find('"', 10) - 10);
      bool allowed = header.rfind("src/cli/", 0) == 0 || header.rfind("src/driver/", 0) == 0 ||
                     header.rfind("ir/core/", 0) == 0 || header.rfind("tessel/", 0) == 0;
      EXPECT_TRUE(allowed) << entry.path().filename() << " includes " << header;
    }
  }
}

TEST(Cli, Version) {
  Result r = tessel({"version"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("tessel 0.1.0\n", 0), 0u) << r.out;
}

}  // namespace
}  // namespace tessel
