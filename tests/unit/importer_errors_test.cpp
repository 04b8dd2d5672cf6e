// Must-fail tests of the ONNX importer: every bad input gives one UserError
// whose message starts with the file and names the node, never a crash, an
// abort, a hang or a huge allocation. Models are written to a fresh folder.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "src/frontend/onnx/importer.h"

namespace tessel::onnx_frontend {
namespace {

namespace fs = std::filesystem;

// A folder of its own for each test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / ("tessel_errors_" + std::to_string(::getpid()) + "_" +
                                         info->test_suite_name() + "_" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& file) const { return path_ / file; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// A model of one graph built field by field; dims < 0 leave a dimension unknown.
struct Model {
  onnx::ModelProto proto;
  onnx::GraphProto* g;

  explicit Model(int opset = 17, int ir_version = 8) {
    proto.set_ir_version(ir_version);
    auto* op = proto.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    g = proto.mutable_graph();
    g->set_name("g");
  }
  static void typed(onnx::ValueInfoProto* vi, const std::string& name, const Dims& dims, int type) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
    }
  }
  void input(const std::string& name, const Dims& dims, int type = onnx::TensorProto::FLOAT) {
    typed(g->add_input(), name, dims, type);
  }
  void output(const std::string& name) { g->add_output()->set_name(name); }
  void output(const std::string& name, const Dims& dims, int type = onnx::TensorProto::FLOAT) {
    typed(g->add_output(), name, dims, type);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                        const std::string& name) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return n;
  }
  onnx::TensorProto* initializer(const std::string& name, const Dims& dims, std::vector<float> values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return t;
  }
  std::string bytes() const { return proto.SerializeAsString(); }
  fs::path save(const fs::path& path) const {
    write_file(path, bytes());
    return path;
  }
};

onnx::AttributeProto* attr(onnx::NodeProto* n, const std::string& name,
                           onnx::AttributeProto::AttributeType type) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

void external(onnx::TensorProto* t, const std::vector<std::pair<std::string, std::string>>& entries) {
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [k, v] : entries) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
}

// The message of the UserError that importing `path` throws. Any other
// exception escapes and fails the test; so does an import that succeeds.
std::string import_error(const fs::path& path, const ImportOptions& options = {}) {
  try {
    import_model(path.string(), options);
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "importing " << path << " succeeded";
  return "";
}

// The message starts with the file and holds every part.
void expect_error(const std::string& message, const fs::path& path, const std::vector<std::string>& parts) {
  EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << "does not start with the file: " << message;
  for (const std::string& p : parts)
    EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' is not in: " << message;
}

// A valid model: y = Relu(x + w), w an initializer.
Model relu_add_model() {
  Model m;
  m.input("x", {2, 3});
  m.initializer("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  m.node("Add", {"x", "w"}, {"s"}, "add");
  m.node("Relu", {"s"}, {"y"}, "relu");
  m.output("y", {2, 3});
  return m;
}

TEST(ImporterErrors, MissingFile) {
  TempDir dir;
  fs::path path = dir / "absent.onnx";
  expect_error(import_error(path), path, {"no such file"});
}

TEST(ImporterErrors, FolderOrEmptyFileIsNotAModel) {
  TempDir dir;
  fs::create_directories(dir / "folder.onnx");
  expect_error(import_error(dir / "folder.onnx"), dir / "folder.onnx", {"not a regular file"});
  write_file(dir / "empty.onnx", "");
  expect_error(import_error(dir / "empty.onnx"), dir / "empty.onnx", {"the file is empty"});
}

TEST(ImporterErrors, FileThatIsNotOnnx) {
  TempDir dir;
  fs::path text = dir / "notes.onnx";
  write_file(text, "This is a text file, not a model.\n");
  expect_error(import_error(text), text, {"not a valid ONNX model"});
  // Bytes that parse as a protobuf (ir_version = 5) but hold no graph.
  fs::path bare = dir / "bare.onnx";
  write_file(bare, std::string("\x08\x05", 2));
  expect_error(import_error(bare), bare, {"not an ONNX model (no IR version or no graph)"});
}

TEST(ImporterErrors, TruncatedFile) {
  TempDir dir;
  std::string bytes = relu_add_model().bytes();
  fs::path path = dir / "cut.onnx";
  write_file(path, bytes.substr(0, bytes.size() / 2));
  expect_error(import_error(path), path, {"not a valid ONNX model", "truncated"});
}

TEST(ImporterErrors, EveryTruncationIsAUserError) {
  TempDir dir;
  std::string bytes = relu_add_model().bytes();
  fs::path path = dir / "cut.onnx";
  for (size_t n = 1; n < bytes.size(); ++n) {
    write_file(path, bytes.substr(0, n));
    std::string message = import_error(path);  // any other exception fails the test
    ASSERT_EQ(message.rfind(path.string() + ": ", 0), 0u) << "cut at " << n << ": " << message;
  }
  write_file(path, bytes);
  EXPECT_NO_THROW(import_model(path.string()));  // the whole model imports
}

TEST(ImporterErrors, UnsupportedIrVersion) {
  TempDir dir;
  for (int v : {2, 99}) {
    Model m = relu_add_model();
    m.proto.set_ir_version(v);
    fs::path path = m.save(dir / "ir.onnx");
    expect_error(import_error(path), path,
                 {"IR version " + std::to_string(v) + " is not supported (supported: 3 to 13)"});
  }
}

TEST(ImporterErrors, UnsupportedOpset) {
  TempDir dir;
  Model future = relu_add_model();
  future.proto.mutable_opset_import(0)->set_version(99);
  fs::path path = future.save(dir / "opset.onnx");
  expect_error(import_error(path), path, {"opset 99 is not supported (supported: 7 to 27)"});
  // Before opset 7 a model is read as opset 7 only where its ops did not change since.
  Model old = relu_add_model();
  old.proto.mutable_opset_import(0)->set_version(6);
  path = old.save(dir / "opset6.onnx");
  expect_error(
      import_error(path), path,
      {"node 'add' (Add): opset 6 is before the supported ones (7 to 27), and Add there is version 6, "
       "which changed by opset 7: convert the model"});
  Model m = relu_add_model();
  m.proto.mutable_opset_import(0)->set_domain("com.example");
  path = m.save(dir / "no_default.onnx");
  expect_error(import_error(path), path, {"imports no opset of the default ONNX domain"});
}

TEST(ImporterErrors, AModelBeforeOpset7WhoseOpsAreUnchangedImports) {
  TempDir dir;
  Model m;
  m.input("x", {2, 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y", {2, 3});
  m.proto.mutable_opset_import(0)->set_version(6);
  fs::path path = m.save(dir / "relu6.onnx");
  graph::Graph g = onnx_frontend::import_model(path.string());
  EXPECT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->op, "Relu");
}

TEST(ImporterErrors, UnknownOpsAreListedInOneMessage) {
  TempDir dir;
  Model m;
  m.input("x", {2});
  m.node("FooBar", {"x"}, {"a"}, "f1");
  m.node("Relu", {"a"}, {"b"}, "r");
  m.node("FooBar", {"b"}, {"c"}, "f2");
  m.node("Baz", {"c"}, {"d"}, "b1");
  m.node("Relu", {"d"}, {"e"}, "c1")->set_domain("com.acme");
  m.node("FooBar", {"e"}, {"y"}, "");  // unnamed: reported by its index
  m.output("y");
  fs::path path = m.save(dir / "unknown.onnx");
  EXPECT_EQ(import_error(path), path.string() +
                                    ": unsupported ops: Baz (node 'b1'); FooBar (nodes 'f1', 'f2', '#5'); "
                                    "com.acme.Relu (node 'c1')");
}

TEST(ImporterErrors, ManyNodesOfAnUnknownOpAreCounted) {
  TempDir dir;
  Model m;
  m.input("x", {2});
  std::string prev = "x";
  for (int i = 0; i < 11; ++i) {
    std::string out = i == 10 ? "y" : "t" + std::to_string(i);
    m.node("FooBar", {prev}, {out}, "n" + std::to_string(i));
    prev = out;
  }
  m.output("y");
  fs::path path = m.save(dir / "many.onnx");
  expect_error(import_error(path), path, {"FooBar (nodes 'n0', 'n1'", "'n7', and 3 more)"});
}

TEST(ImporterErrors, MissingRequiredAttribute) {
  TempDir dir;
  Model m;
  m.input("x", {2});
  m.node("Concat", {"x", "x"}, {"y"}, "cat");  // Concat's axis has no default
  m.output("y");
  fs::path path = m.save(dir / "concat.onnx");
  expect_error(import_error(path), path, {"node 'cat' (Concat): missing required attribute 'axis'"});
}

TEST(ImporterErrors, IllTypedAttribute) {
  TempDir dir;
  Model m;
  m.input("x", {2});
  attr(m.node("LeakyRelu", {"x"}, {"y"}, "lr"), "alpha", onnx::AttributeProto::STRING)->set_s("0.1");
  m.output("y");
  fs::path path = m.save(dir / "leaky.onnx");
  expect_error(import_error(path), path,
               {"node 'lr' (LeakyRelu): attribute 'alpha' must be of type float, got string"});
}

// Attributes that opset adapters read: their types are checked against ONNX's
// schema before the adapter runs (these used to end in std::bad_variant_access).
TEST(ImporterErrors, IllTypedAttributeThatAnAdapterReads) {
  TempDir dir;
  Model m(11);
  m.input("x", {2, 3});
  attr(m.node("Softmax", {"x"}, {"y"}, "sm"), "axis", onnx::AttributeProto::FLOAT)->set_f(1.5f);
  m.output("y");
  fs::path path = m.save(dir / "softmax.onnx");
  expect_error(import_error(path), path,
               {"node 'sm' (Softmax): attribute 'axis' must be of type int, got float"});
}

// BatchNormalization-7's per-activation adapter reads all five inputs.
TEST(ImporterErrors, MissingOrOmittedRequiredInput) {
  TempDir dir;
  for (bool omitted : {false, true}) {
    Model m(7);
    m.input("x", {1, 2, 2});
    std::vector<std::string> ins = {"x"};
    for (const char* p : {"s", "b", "m"}) {
      m.initializer(p, {2}, {1, 1});
      ins.push_back(p);
    }
    if (omitted) ins.push_back("");
    attr(m.node("BatchNormalization", ins, {"y"}, "bn"), "spatial", onnx::AttributeProto::INT)->set_i(0);
    m.output("y");
    fs::path path = m.save(dir / "bn.onnx");
    expect_error(import_error(path), path,
                 {"node 'bn' (BatchNormalization): ",
                  omitted ? "required input 4 ('var') is missing" : "expects 5 inputs, got 4"});
  }
}

TEST(ImporterErrors, NodeWithoutItsOutput) {
  TempDir dir;
  Model m;
  m.input("x", {2});
  m.node("Relu", {"x"}, {}, "r");
  m.output("x");
  fs::path path = m.save(dir / "no_output.onnx");
  expect_error(import_error(path), path, {"node 'r' (Relu): expects 1 outputs, got 0"});
}

TEST(ImporterErrors, UseOfAnUndefinedValue) {
  TempDir dir;
  Model m;
  m.input("x", {2});
  m.node("Add", {"x", "q"}, {"y"}, "add");
  m.output("y");
  fs::path path = m.save(dir / "undefined.onnx");
  expect_error(import_error(path), path,
               {"node 'add': uses 'q', which no earlier node, input or initializer defines"});
}

// Found by the fuzzer: a node with no outputs at all (here a
// BatchNormalization, whose adapter read its first output's name) is an
// error naming the node at every opset, also at one newer than Debian's ONNX
// schemas (18), where their count check does not run; it crashed there.
TEST(ImporterErrors, ANodeWithoutOutputs) {
  TempDir dir;
  for (int opset : {15, 17, 18}) {
    SCOPED_TRACE(opset);
    Model m(opset);
    m.input("x", {1, 2, 3});
    for (const char* stat : {"s", "b", "mean", "var"}) m.input(stat, {2});
    m.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {}, "bn");
    m.output("x");
    fs::path path = m.save(dir / ("no_outputs_" + std::to_string(opset) + ".onnx"));
    expect_error(import_error(path), path, {"node 'bn' (BatchNormalization): expects ", " got 0"});
  }
}

TEST(ImporterErrors, ShapeMismatchBetweenInputs) {
  TempDir dir;
  Model m;
  m.input("x", {2, 3});
  m.input("w", {4, 5});
  m.node("MatMul", {"x", "w"}, {"y"}, "mm");
  m.output("y");
  fs::path path = m.save(dir / "matmul.onnx");
  expect_error(import_error(path), path, {"node 'mm' (MatMul): "});
  Model add;
  add.input("x", {2, 3});
  add.input("w", {4, 5});
  add.node("Add", {"x", "w"}, {"y"}, "add");
  add.output("y");
  path = add.save(dir / "add.onnx");
  expect_error(import_error(path), path, {"node 'add' (Add): ", "broadcast"});
}

TEST(ImporterErrors, DeclaredOutputDisagreesWithTheGraph) {
  TempDir dir;
  Model m = relu_add_model();
  m.g->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(7);
  fs::path path = m.save(dir / "shape.onnx");
  expect_error(import_error(path), path,
               {"shape mismatch: output 'y' is declared f32[7, 3] but node 'relu' produces f32[2, 3]"});
  m = relu_add_model();
  m.g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  path = m.save(dir / "dtype.onnx");
  expect_error(import_error(path), path,
               {"output 'y' is declared i64[2, 3] but node 'relu' produces f32[2, 3]"});
}

TEST(ImporterErrors, InputShapeOptionDisagreesWithTheModel) {
  TempDir dir;
  fs::path path = relu_add_model().save(dir / "m.onnx");
  ImportOptions rank;
  rank.input_shapes["x"] = {2, 3, 1};
  expect_error(import_error(path, rank), path, {"input 'x'", "--input-shape gives rank 3"});
  ImportOptions dim;
  dim.input_shapes["x"] = {5, 3};
  expect_error(import_error(path, dim), path,
               {"--input-shape gives [5, 3] but the model declares f32[2, 3]"});
  ImportOptions name;
  name.input_shapes["nope"] = {1};
  expect_error(import_error(path, name), path, {"--input-shape names 'nope', which is not a graph input"});
}

// dims promising far more data than the file holds are refused before any
// allocation: [2^38] floats would be a 1 TiB buffer (std::bad_alloc before).
TEST(ImporterErrors, TensorDimsThatPromiseMoreThanTheFileHolds) {
  TempDir dir;
  for (bool raw : {false, true}) {
    Model m;
    auto* w = m.initializer("w", {int64_t(1) << 38}, {1, 2});
    if (raw) {
      w->clear_float_data();
      w->set_raw_data(std::string(8, '\0'));
    }
    m.output("w");
    fs::path path = m.save(dir / "huge.onnx");
    auto start = std::chrono::steady_clock::now();
    expect_error(import_error(path), path,
                 {"tensor 'w'", raw ? "has 8 bytes of data, shape [274877906944] needs 1099511627776"
                                    : "has 2 values for shape [274877906944]"});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  }
}

TEST(ImporterErrors, TensorDimsWhoseProductOverflows) {
  TempDir dir;
  Model m;
  m.initializer("w", {int64_t(1) << 40, int64_t(1) << 40, int64_t(1) << 40}, {});
  m.output("w");
  fs::path path = m.save(dir / "overflow.onnx");
  expect_error(import_error(path), path, {"tensor 'w'", "is too large"});
}

TEST(ImporterErrors, MalformedTensors) {
  TempDir dir;
  struct Case {
    std::function<void(onnx::TensorProto*)> spoil;
    std::string message;
  };
  std::vector<Case> cases = {
      {[](onnx::TensorProto* t) { t->set_dims(0, -1); }, "has a negative dimension -1"},
      {[](onnx::TensorProto* t) { t->set_data_type(onnx::TensorProto::STRING); },
       "unsupported element type STRING"},
      {[](onnx::TensorProto* t) { t->add_float_data(7); }, "has 3 values for shape [2]"},
      {[](onnx::TensorProto* t) { t->set_raw_data("abc"); }, "has 3 bytes of data, shape [2] needs 8"},
  };
  for (const Case& c : cases) {
    Model m;
    c.spoil(m.initializer("w", {2}, {1, 2}));
    m.output("w");
    fs::path path = m.save(dir / "tensor.onnx");
    expect_error(import_error(path), path, {"tensor 'w'", c.message});
  }
}

// Bytes other than 0 and 1 are not valid C++ bools: they are read as true.
TEST(ImporterErrors, RawBoolBytesBecomeValidBools) {
  TempDir dir;
  Model m;
  auto* t = m.g->add_initializer();
  t->set_name("b");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_dims(3);
  t->set_raw_data(std::string("\x00\x02\xff", 3));
  m.output("b");
  graph::Graph g = import_model(m.save(dir / "bool.onnx").string());
  ASSERT_TRUE(g.outputs()[0]->is_constant());
  EXPECT_EQ(g.outputs()[0]->constant->to_i64_vector(), (std::vector<int64_t>{0, 1, 1}));
}

TEST(ImporterErrors, UnsupportedAttributeKinds) {
  TempDir dir;
  Model m;
  m.input("x", {2});
  attr(m.node("Relu", {"x"}, {"y"}, "r"), "body", onnx::AttributeProto::GRAPH)->mutable_g()->set_name("sub");
  m.output("y");
  fs::path path = m.save(dir / "graph_attr.onnx");
  expect_error(import_error(path), path, {"node 'r' (Relu): attribute 'body' has an unsupported type GRAPH"});
  Model ref;
  ref.input("x", {2});
  attr(ref.node("LeakyRelu", {"x"}, {"y"}, "lr"), "alpha", onnx::AttributeProto::FLOAT)
      ->set_ref_attr_name("a");
  ref.output("y");
  path = ref.save(dir / "ref_attr.onnx");
  expect_error(import_error(path), path,
               {"node 'lr' (LeakyRelu): attribute 'alpha' refers to a function attribute"});
}

TEST(ImporterErrors, MalformedConstantNodes) {
  TempDir dir;
  Model none;
  none.node("Constant", {}, {"y"}, "c");
  none.output("y");
  fs::path path = none.save(dir / "c0.onnx");
  expect_error(import_error(path), path,
               {"node 'c' (Constant): a Constant needs exactly one output and one value attribute"});
  Model str;
  attr(str.node("Constant", {}, {"y"}, "c"), "value_string", onnx::AttributeProto::STRING)->set_s("hi");
  str.output("y");
  path = str.save(dir / "c1.onnx");
  expect_error(import_error(path), path, {"node 'c' (Constant): unsupported attribute 'value_string'"});
  Model untyped;
  attr(untyped.node("Constant", {}, {"y"}, "c"), "value", onnx::AttributeProto::INT)->set_i(3);
  untyped.output("y");
  path = untyped.save(dir / "c2.onnx");
  expect_error(import_error(path), path, {"node 'c' (Constant): attribute 'value' must hold a tensor"});
}

TEST(ImporterErrors, UnsupportedGraphFeatures) {
  TempDir dir;
  Model sparse = relu_add_model();
  sparse.g->add_sparse_initializer()->mutable_values()->set_name("sp");
  fs::path path = sparse.save(dir / "sparse.onnx");
  expect_error(import_error(path), path, {"sparse initializers are not supported"});
  Model map;
  auto* in = map.g->add_input();
  in->set_name("m");
  auto* map_type = in->mutable_type()->mutable_map_type();
  map_type->set_key_type(onnx::TensorProto::INT64);
  map_type->mutable_value_type()->mutable_tensor_type()->set_elem_type(1);
  map.node("Identity", {"m"}, {"y"}, "id");
  map.output("y");
  path = map.save(dir / "map.onnx");
  expect_error(import_error(path), path,
               {"value 'm'", "only tensor-typed graph inputs and outputs are supported"});
  Model seq;
  in = seq.g->add_input();
  in->set_name("s");
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  seq.node("Identity", {"s"}, {"y"}, "id");
  seq.output("y");
  path = seq.save(dir / "sequence.onnx");
  expect_error(import_error(path), path, {"input 's' is a sequence", "(--sequence-length s=N)"});
  Model strings;
  strings.input("x", {2}, onnx::TensorProto::STRING);
  strings.node("Relu", {"x"}, {"y"}, "r");
  strings.output("y");
  path = strings.save(dir / "strings.onnx");
  expect_error(import_error(path), path, {"value 'x'", "unsupported element type STRING"});
}

// The tensor `w` of relu_add_model, stored in an external file.
Model external_model(const std::vector<std::pair<std::string, std::string>>& entries) {
  Model m = relu_add_model();
  external(m.g->mutable_initializer(0), entries);
  return m;
}

void write_floats(const fs::path& path, size_t count) {
  std::vector<float> v(count, 1.0f);
  write_file(path, std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}

TEST(ImporterErrors, ExternalDataInsideTheFolderLoads) {
  TempDir dir;
  write_floats(dir / "w.bin", 6);
  fs::path path = external_model({{"location", "w.bin"}}).save(dir / "m.onnx");
  EXPECT_NO_THROW(import_model(path.string()));
}

// ../x.bin, an absolute path and a symlink inside the folder that points
// outside are all refused, though each names a file that exists and fits.
TEST(ImporterErrors, ExternalDataOutsideTheModelFolderIsRefused) {
  TempDir dir;
  fs::create_directories(dir / "model");
  write_floats(dir / "x.bin", 6);
  fs::create_symlink(dir / "x.bin", dir / "model" / "link.bin");
  struct Case {
    std::string location, message;
  };
  std::vector<Case> cases = {
      {"../x.bin", "external data location '../x.bin' escapes the model's folder"},
      {"sub/../../x.bin", "external data location 'sub/../../x.bin' escapes the model's folder"},
      {(dir / "x.bin").string(), "must be a relative path inside the model's folder"},
      {"link.bin", "external data location 'link.bin' escapes the model's folder"},
  };
  for (const Case& c : cases) {
    fs::path path = external_model({{"location", c.location}}).save(dir / "model" / "m.onnx");
    expect_error(import_error(path), path, {"tensor 'w'", c.message});
  }
}

TEST(ImporterErrors, CorruptExternalData) {
  TempDir dir;
  write_floats(dir / "short.bin", 5);  // 20 bytes: the tensor needs 24
  write_floats(dir / "w.bin", 6);
  fs::create_directories(dir / "folder.bin");
  ASSERT_EQ(::mkfifo((dir / "fifo.bin").c_str(), 0600), 0);  // opening it would block forever
  struct Case {
    std::vector<std::pair<std::string, std::string>> entries;
    std::string message;
  };
  std::vector<Case> cases = {
      {{{"location", "short.bin"}}, "(offset 0, length 24, file size 20) does not hold the 24 bytes"},
      {{{"location", "w.bin"}, {"offset", "4"}}, "(offset 4, length 24, file size 24) does not hold"},
      {{{"location", "w.bin"}, {"offset", "9223372036854775807"}}, "(offset 9223372036854775807, length 24"},
      {{{"location", "w.bin"}, {"offset", "-8"}}, "(offset -8, length 24"},
      {{{"location", "w.bin"}, {"length", "12"}}, "length 12, file size 24) does not hold the 24 bytes"},
      {{{"location", "w.bin"}, {"offset", "four"}}, "external data offset 'four' is not an integer"},
      {{{"location", "absent.bin"}}, "does not exist or is not a regular file"},
      {{{"location", "folder.bin"}}, "does not exist or is not a regular file"},
      {{{"location", "fifo.bin"}}, "does not exist or is not a regular file"},
      {{}, "external data location '' must be a relative path"},
  };
  for (const Case& c : cases) {
    fs::path path = external_model(c.entries).save(dir / "m.onnx");
    expect_error(import_error(path), path, {"tensor 'w'", c.message});
  }
}

// Folding creates data that the file does not hold: a 200-byte model of Tile
// nodes asked for six 512 MiB constants. Nodes over the per-node cap stay
// nodes (computed at run time); small ones still fold.
TEST(ImporterErrors, ConstantFoldingIsBounded) {
  TempDir dir;
  auto tiles = [&](int64_t repeats) {
    Model m;
    auto* w = m.g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::DOUBLE);
    w->add_dims(1);
    w->add_double_data(1.0);
    for (auto [name, value] : {std::pair{"r", repeats}, {"one", int64_t(1)}}) {
      auto* t = m.g->add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::INT64);
      t->add_dims(1);
      t->add_int64_data(value);
    }
    m.node("Tile", {"w", "r"}, {"t0"}, "tile0");
    for (int i = 1; i < 6; ++i)
      m.node("Tile", {"t" + std::to_string(i - 1), "one"}, {"t" + std::to_string(i)},
             "tile" + std::to_string(i));
    m.output("t5");
    return import_model(m.save(dir / "tiles.onnx").string());
  };
  auto start = std::chrono::steady_clock::now();
  graph::Graph big = tiles(int64_t(1) << 26);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(big.num_nodes(), 6u);
  EXPECT_EQ(big.outputs()[0]->type.str(), "f64[67108864]");
  graph::Graph small = tiles(16);
  EXPECT_EQ(small.num_nodes(), 0u);
  ASSERT_TRUE(small.outputs()[0]->is_constant());
  EXPECT_EQ(small.outputs()[0]->constant->numel(), 16);
}

// An empty initializer whose other dimensions multiply past 64 bits (found
// by the fuzzer: w[0, 2^40, 2^40, 46] + w) folds to an empty constant; its
// strides index nothing. The same dimensions without the zero are refused.
TEST(ImporterErrors, EmptyTensorsWithHugeDimensionsFold) {
  TempDir dir;
  Model m;
  auto* w = m.g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {int64_t(0), int64_t(1) << 40, int64_t(1) << 40, int64_t(46)}) w->add_dims(d);
  m.node("Add", {"w", "w"}, {"y"}, "add");
  m.output("y");
  graph::Graph g = import_model(m.save(dir / "empty.onnx").string());
  ASSERT_TRUE(g.outputs()[0]->is_constant());
  EXPECT_EQ(g.outputs()[0]->constant->numel(), 0);
  EXPECT_THROW(contiguous_strides({2, int64_t(1) << 40, int64_t(1) << 40, 46}), UserError);
}

// As ONNX Runtime: a pool's explicit pads must be smaller than its kernel on
// both sides (a window could lie wholly in the padding); the dilated extent
// does not count. Accepted before.
TEST(ImporterErrors, PoolPadsAsLargeAsTheKernel) {
  TempDir dir;
  auto pool = [&](const std::string& op, std::vector<int64_t> pads, int64_t dilation) {
    Model m;
    m.input("x", {1, 1, 6, 6});
    onnx::NodeProto* n = m.node(op, {"x"}, {"y"}, "pool1");
    auto* k = attr(n, "kernel_shape", onnx::AttributeProto::INTS);
    for (int64_t v : {2, 3}) k->add_ints(v);
    auto* p = attr(n, "pads", onnx::AttributeProto::INTS);
    for (int64_t v : pads) p->add_ints(v);
    if (dilation > 1) {
      auto* d = attr(n, "dilations", onnx::AttributeProto::INTS);
      for (int i = 0; i < 2; ++i) d->add_ints(dilation);
    }
    m.output("y");
    return m.save(dir / (op + ".onnx"));
  };
  fs::path path = pool("MaxPool", {2, 0, 0, 0}, 1);
  expect_error(import_error(path), path,
               {"node 'pool1' (MaxPool): ",
                "'pads' (2, 0) of spatial dimension 0 must be smaller than its kernel size 2"});
  path = pool("MaxPool", {1, 1, 1, 3}, 2);  // dilated extent 5, kernel 3
  expect_error(import_error(path), path,
               {"node 'pool1' (MaxPool): ", "'pads' (1, 3) of spatial dimension 1"});
  path = pool("AveragePool", {0, 3, 0, 0}, 1);
  expect_error(import_error(path), path, {"node 'pool1' (AveragePool): ", "kernel size 3"});
  EXPECT_EQ(import_model(pool("MaxPool", {1, 2, 1, 2}, 1).string()).num_nodes(), 1u);
}

}  // namespace
}  // namespace tessel::onnx_frontend
