// `tessel compile`, `tessel run MODEL.so|MODEL.onnx` and `tessel check` as a
// new user meets them, through the real binary: on the bundled tiny CNN the
// library runs, times, profiles and agrees with the reference executor; every
// mistake a user can make is one message and exit code 2, never a crash.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "src/driver/npy.h"
#include "tessel/runtime.h"
#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using cli_test::Result;
using cli_test::contains;
using cli_test::expect_user_error;
using cli_test::TempDir;
using cli_test::quote;
using cli_test::run_tessel_line;

const std::string kTinyCnn = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";
// The bundled model's batch dimension is symbolic; compiling needs it bound.
const std::string kImageShape = "image=1x1x28x28";

Result tessel(const std::vector<std::string>& args) {
  return cli_test::run_tessel(args);
}

fs::path process_dir() {
  return fs::temp_directory_path() / ("tessel_compile_cli_" + std::to_string(::getpid()));
}

// The tiny CNN compiled once per process (ctest runs each test in a process of
// its own, so the tests cannot share one file across processes), with what
// `tessel compile` printed.
struct CompiledTinyCnn {
  fs::path so = process_dir() / "tiny_cnn.so";
  Result compile;
  CompiledTinyCnn() {
    fs::create_directories(process_dir());
    compile = tessel({"compile", kTinyCnn, "--input-shape", kImageShape, "-o", so.string()});
  }
  ~CompiledTinyCnn() {
    std::error_code ec;
    fs::remove_all(process_dir(), ec);
  }
};

const CompiledTinyCnn& tiny_cnn() {
  static const CompiledTinyCnn compiled;
  return compiled;
}

// The tiny CNN's library, or a failed assertion when compiling failed.
#define ASSERT_TINY_CNN_SO()                                                             \
  ASSERT_EQ(tiny_cnn().compile.code, 0) << tiny_cnn().compile.out << tiny_cnn().compile.err; \
  const std::string so = tiny_cnn().so.string()

// The number N of "...: N kernels (" in compile's summary line.
int compiled_kernels(const Result& compile) {
  std::smatch m;
  return std::regex_search(compile.out, m, std::regex(R"(: (\d+) kernels \()")) ? std::stoi(m[1]) : -1;
}

TEST(CompileCli, CompileWritesASharedLibraryAndSummarisesIt) {
  ASSERT_TINY_CNN_SO();
  const Result& r = tiny_cnn().compile;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("compiled " + kTinyCnn + " -> " + so + ": ", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, " kernels (fusion default, schedule default), target ")) << r.out;
  EXPECT_GT(compiled_kernels(r), 0) << r.out;
  EXPECT_EQ(cli_test::read_file(so).substr(0, 4), "\x7f" "ELF");
}

TEST(CompileCli, RepeatPrintsMedianMinAndMaxLatency) {
  ASSERT_TINY_CNN_SO();
  Result r = tessel({"run", so, "--repeat", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "output 'probs' f32[1, 10]  min ")) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m, std::regex(R"(latency: median ([0-9.]+) ms, min ([0-9.]+) ms, max ([0-9.]+) ms over 5 runs \(\d+ threads?\))")))
      << r.out;
  double median = std::stod(m[1]), min = std::stod(m[2]), max = std::stod(m[3]);
  EXPECT_LE(min, median);
  EXPECT_LE(median, max);
}

TEST(CompileCli, ThreadsOneRunsOnOneThread) {
  ASSERT_TINY_CNN_SO();
  Result r = tessel({"run", so, "--threads", "1", "--repeat", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, " ms over 3 runs (1 thread)\n")) << r.out;
}

TEST(CompileCli, ProfileListsEveryKernelAndTheEndToEndTime) {
  ASSERT_TINY_CNN_SO();
  int kernels = compiled_kernels(tiny_cnn().compile);
  Result r = tessel({"run", so, "--profile"});
  ASSERT_EQ(r.code, 0) << r.err;
  size_t header = r.out.find("kernel ");
  ASSERT_NE(header, std::string::npos) << r.out;
  std::istringstream lines(r.out.substr(header));
  std::string line;
  std::getline(lines, line);
  EXPECT_TRUE(contains(line, "share") && contains(line, "median ms") && contains(line, "GFLOP/s")) << line;
  // One row per kernel: name, share %, median ms, MFLOP, MB, GFLOP/s, then
  // its place on the roofline (FLOP/B, % of the bound, the bound); the
  // shares are of the kernels' total, so they add up to 100%.
  std::regex row(R"(^\S+ +([0-9.]+)% +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+% +(compute|memory|-)$)");
  int rows = 0;
  double shares = 0;
  while (std::getline(lines, line) && line.rfind("end to end", 0) != 0) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, row)) << "not a kernel row: '" << line << "'";
    shares += std::stod(m[1]);
    ++rows;
  }
  EXPECT_EQ(rows, kernels) << r.out;
  EXPECT_NEAR(shares, 100.0, 0.1 * kernels) << r.out;
  EXPECT_TRUE(contains(r.out, "fused_conv1 ")) << "the first conv with its relu:\n" << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("end to end: median [0-9.]+ ms over 10 runs \\(" +
                                                  std::to_string(kernels) + " kernels, [0-9.]+ ms in kernels\\)\n")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("roofline at [0-9]+ threads?: [0-9.]+ GFLOP/s, [0-9.]+ GB/s, "
                                                  "ridge [0-9.]+ FLOP/byte \\(over 100%: bytes from cache; L2 [0-9.]+ GB/s\\)\n")))
      << r.out;
}

// Each .npy output of `dir`, by file name.
std::vector<std::pair<std::string, Tensor>> read_outputs(const fs::path& dir) {
  std::vector<std::pair<std::string, Tensor>> outputs;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    outputs.emplace_back(e.path().filename().string(), driver::read_npy(e.path().string()));
  std::sort(outputs.begin(), outputs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return outputs;
}

// max|got - want| / max|want|, the measure `tessel check` uses.
double relative_error(const Tensor& got, const Tensor& want) {
  std::vector<double> g = got.to_f64_vector(), w = want.to_f64_vector();
  double diff = 0, scale = 0;
  for (size_t i = 0; i < g.size() && i < w.size(); ++i) {
    diff = std::max(diff, std::abs(g[i] - w[i]));
    scale = std::max(scale, std::abs(w[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

TEST(CompileCli, LibraryAndInMemoryOutputsEqualTheReferenceForTheSameSeed) {
  ASSERT_TINY_CNN_SO();
  TempDir dir;
  std::string ref = (dir / "reference").string(), lib = (dir / "library").string(), jit = (dir / "jit").string();
  Result r = tessel({"run", kTinyCnn, "--input-shape", kImageShape, "--reference", "--seed", "5", "--out", ref});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "output 'probs' f32[1, 10] -> " + ref + "/probs.npy\n")) << r.out;
  r = tessel({"run", so, "--seed", "5", "--out", lib});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "output 'probs' f32[1, 10] -> " + lib + "/probs.npy\n")) << r.out;
  r = tessel({"run", kTinyCnn, "--input-shape", kImageShape, "--seed", "5", "--out", jit});
  ASSERT_EQ(r.code, 0) << r.err;

  auto want = read_outputs(ref);
  ASSERT_FALSE(want.empty());
  for (const std::string& folder : {lib, jit}) {
    auto got = read_outputs(folder);
    ASSERT_EQ(got.size(), want.size()) << folder;
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(folder + "/" + got[i].first);
      EXPECT_EQ(got[i].first, want[i].first);
      EXPECT_EQ(got[i].second.type_str(), want[i].second.type_str());
      EXPECT_LE(relative_error(got[i].second, want[i].second), 1e-4);
    }
  }
  // Another seed gives other inputs, so the agreement above is not by chance.
  std::string other = (dir / "other_seed").string();
  ASSERT_EQ(tessel({"run", so, "--seed", "6", "--out", other}).code, 0);
  EXPECT_GT(relative_error(read_outputs(other)[0].second, want[0].second), 1e-3);
}

TEST(CompileCli, CheckPerKernelPasses) {
  Result r = tessel({"check", kTinyCnn, "--input-shape", kImageShape, "--per-kernel"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(contains(r.out, "output 'probs' f32[1, 10]  max abs err ")) << r.out;
  EXPECT_TRUE(contains(r.out, "kernel 0 ")) << r.out;
  EXPECT_TRUE(contains(r.out, "check passed (tolerance 0.0001")) << r.out;
}

TEST(CompileCli, CheckRefusesANegativeTolerance) {
  for (const char* t : {"-1", "abc"})
    expect_user_error(tessel({"check", kTinyCnn, "--input-shape", kImageShape, "--tolerance", t}),
                      std::string("--tolerance takes a non-negative number, got '") + t + "'");
}

// --channels-last takes a policy; each one compiles and passes the check.
TEST(CompileCli, ChannelsLastTakesAPolicy) {
  expect_user_error(tessel({"check", kTinyCnn, "--input-shape", kImageShape, "--channels-last", "nhwc"}),
                    "--channels-last nhwc: expected none, depthwise or all");
  for (const char* policy : {"none", "depthwise", "all"}) {
    Result r =
        tessel({"check", kTinyCnn, "--input-shape", kImageShape, "--channels-last", policy, "--per-kernel"});
    EXPECT_EQ(r.code, 0) << policy << ": " << r.out << r.err;
  }
}

TEST(CompileCli, PrintTirShowsEachKernel) {
  TempDir dir;
  Result r = tessel({"compile", kTinyCnn, "--input-shape", kImageShape, "-o", (dir / "m.so").string(), "--print-tir"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("// kernel tessel_k0", 0), 0u) << r.out.substr(0, 200);
  size_t headers = 0;
  for (size_t at = 0; (at = r.out.find("// kernel tessel_k", at)) != std::string::npos; ++at) ++headers;
  EXPECT_EQ(int(headers), compiled_kernels(r)) << "one tensor IR listing per kernel";
}

TEST(CompileCli, CompileWithoutOutputIsAUserError) {
  expect_user_error(tessel({"compile", kTinyCnn, "--input-shape", kImageShape}), "compile needs -o OUT.so");
}

// The model is never overwritten by its library.
TEST(CompileCli, CompileRefusesToWriteOverTheModelOrAnOnnxFile) {
  TempDir dir;
  fs::path model = dir / "m.onnx";
  fs::copy_file(kTinyCnn, model);
  uintmax_t size = fs::file_size(model);
  expect_user_error(tessel({"compile", model.string(), "--input-shape", kImageShape, "-o", model.string()}),
                    "is the model itself");
  EXPECT_EQ(fs::file_size(model), size) << "the model was overwritten";
  expect_user_error(tessel({"compile", model.string(), "--input-shape", kImageShape, "-o", (dir / "x.onnx").string()}),
                    "not an ONNX model");
  EXPECT_FALSE(fs::exists(dir / "x.onnx"));
}

// -o takes the next argument whatever it looks like (as getopt does): "-lfoo.so"
// was passed to the linker as a library to link ("--library=foo.so" written,
// "-lfoo.so" reported), "-mcpu=x.so" was taken as the CPU option.
TEST(CompileCli, AnOutputNameThatLooksLikeAnOptionIsTheOutput) {
  TempDir dir;
  fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  for (std::string out : {"-lfoo.so", "-mcpu=x.so", "--print-llvm"}) {
    Result r = tessel({"compile", kTinyCnn, "-o", out, "--input-shape", kImageShape});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, " -> " + out + ": ")) << r.out;
    EXPECT_TRUE(fs::is_regular_file(dir / out)) << out;
  }
  std::vector<std::string> written;
  for (const fs::directory_entry& e : fs::directory_iterator(dir.path()))
    written.push_back(e.path().filename());
  std::sort(written.begin(), written.end());
  EXPECT_EQ(written, (std::vector<std::string>{"--print-llvm", "-lfoo.so", "-mcpu=x.so"}));
  fs::current_path(cwd);
}

// Builds `source` into a shared library with the C compiler `tessel compile` links with.
fs::path build_c_library(const TempDir& dir, const std::string& name, const std::string& source) {
  fs::path c = dir / (name + ".c"), so = dir / (name + ".so");
  std::ofstream(c) << source;
  const char* cc = std::getenv("CC");
  std::string cmd = std::string(cc && *cc ? cc : "cc") + " -shared -fPIC -o " + cli_test::quote(so.string()) + " " +
                    cli_test::quote(c.string());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return so;
}

TEST(CompileCli, RunOfASharedLibraryThatIsNotATesselModel) {
  TempDir dir;
  fs::path text = dir / "notes.so";
  std::ofstream(text) << "a text file renamed .so\n";
  expect_user_error(tessel({"run", text.string()}), text.string() + " is not a loadable shared library");

  fs::path plain = build_c_library(dir, "plain", "int answer(void) { return 42; }\n");
  expect_user_error(tessel({"run", plain.string()}),
                    plain.string() + " is not a Tessel model library: it lacks tessel_abi_version");
  // A library from another Tessel version is told apart from one that is no model at all.
  fs::path future = build_c_library(dir, "future", "unsigned tessel_abi_version(void) { return 99; }\n");
  expect_user_error(
      tessel({"run", future.string()}),
      "has Tessel ABI version 99; this tessel reads version " + std::to_string(TESSEL_ABI_VERSION));
  fs::path partial = build_c_library(
      dir, "partial",
      "unsigned tessel_abi_version(void) { return " + std::to_string(TESSEL_ABI_VERSION) + "; }\n");
  expect_user_error(tessel({"run", partial.string()}), "is not a Tessel model library: it lacks tessel_last_error");
  expect_user_error(tessel({"run", (dir / "absent.so").string()}), (dir / "absent.so").string() + ": no such file");
}

// Writes `t` as DIR/image.npy and returns DIR.
std::string inputs_folder(const TempDir& dir, const std::string& name, const Tensor& t) {
  fs::create_directories(dir / name);
  driver::write_npy((dir / name / "image.npy").string(), t);
  return (dir / name).string();
}

TEST(CompileCli, InputFilesThatDoNotFitTheModel) {
  ASSERT_TINY_CNN_SO();
  TempDir dir;
  std::string right = inputs_folder(dir, "right", Tensor(DType::kF32, {1, 1, 28, 28}));
  EXPECT_EQ(tessel({"run", so, "--inputs", right}).code, 0);
  std::string shape = inputs_folder(dir, "shape", Tensor(DType::kF32, {1, 1, 28, 27}));
  expect_user_error(tessel({"run", so, "--inputs", shape}),
                    shape + "/image.npy: input 'image': the model takes f32[1, 1, 28, 28], the file holds f32[1, 1, 28, 27]");
  std::string dtype = inputs_folder(dir, "dtype", Tensor(DType::kF64, {1, 1, 28, 28}));
  expect_user_error(tessel({"run", so, "--inputs", dtype}),
                    "input 'image': the model takes f32[1, 1, 28, 28], the file holds f64[1, 1, 28, 28]");
  fs::create_directories(dir / "empty");
  expect_user_error(tessel({"run", so, "--inputs", (dir / "empty").string()}),
                    "missing input 'image': no file " + (dir / "empty" / "image.npy").string());
}

TEST(CompileCli, CompileOptionsDoNotApplyToALibrary) {
  ASSERT_TINY_CNN_SO();
  for (const std::vector<std::string>& option : {std::vector<std::string>{"--fusion", "none"},
                                                 std::vector<std::string>{"--schedule", "none"}}) {
    expect_user_error(tessel({"run", so, option[0], option[1]}),
                      "--fusion, --schedule and --target apply when compiling an ONNX model, not to " + so);
  }
}

TEST(CompileCli, ThreadsOutsideOneTo1024AreUserErrors) {
  ASSERT_TINY_CNN_SO();
  for (const char* n : {"0", "-2", "1025"})
    expect_user_error(tessel({"run", so, "--threads", n}), "--threads must be 1 to 1024");
  expect_user_error(tessel({"run", kTinyCnn, "--input-shape", kImageShape, "--threads", "0"}),
                    "--threads must be 1 to 1024");
  expect_user_error(tessel({"run", so, "--repeat", "-2"}), "--repeat must be 0 to 1000000");
  expect_user_error(tessel({"run", so, "--input-shape", "image=2x1x28x28"}),
                    "--input-shape applies when compiling an ONNX model");
}

// The in-process pool of `run MODEL.onnx` and `check` would start with its default.
TEST(CompileCli, AnInvalidThreadEnvironmentIsAUserErrorInProcessToo) {
  for (const char* command : {"run", "check"})
    expect_user_error(run_tessel_line(std::string(command) + " " + quote(kTinyCnn) + " --input-shape " + kImageShape,
                                      "TESSEL_NUM_THREADS=lots"),
                      "TESSEL_NUM_THREADS='lots' is not a thread count");
}

TEST(CompileCli, UnknownTargetsAndTargetOptions) {
  TempDir dir;
  std::vector<std::string> compile = {"compile", kTinyCnn, "--input-shape", kImageShape, "-o",
                                      (dir / "m.so").string()};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = compile;
    args.insert(args.end(), extra.begin(), extra.end());
    return tessel(args);
  };
  expect_user_error(with({"--target", "opencl"}),
                    "unknown target 'opencl' (available: llvm, cuda, cuda-emulated)");
  expect_user_error(with({"-mattr", "avx2"}), "-mattr takes +feature or -feature items, got 'avx2'");
  expect_user_error(with({"--target", "llvm -mattr=+avx2,sse4.2"}),
                    "-mattr takes +feature or -feature items, got 'sse4.2'");
  expect_user_error(with({"--target", "llvm -O3"}),
                    "unknown option '-O3' for target llvm (available: -mcpu=, -mattr=, -fmas-in-flight=, "
                    "-parallel-cycles=)");
  // Names LLVM does not know: it would only warn, then abort (a CPU) or ignore them (a feature).
  expect_user_error(with({"-mcpu=nosuchcpu"}), "unknown CPU 'nosuchcpu'");
  expect_user_error(with({"--target", "llvm -mcpu=nosuchcpu"}), "unknown CPU 'nosuchcpu'");
  expect_user_error(with({"-mattr=+notafeature"}), "unknown CPU feature 'notafeature'");
  expect_user_error(with({"-mattr="}), "-mattr= needs a list of +feature or -feature items");
  EXPECT_FALSE(fs::exists(dir / "m.so")) << "nothing is written when the options are wrong";
}

// x: f32[4] -> RandomNormalLike(x) -> values, an op Tessel does not support (a compiled model is deterministic).
onnx::ModelProto model_with_unsupported_op() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("RandomNormalLike");
  n->set_name("noise");
  n->add_input("x");
  n->add_output("values");
  g->add_output()->set_name("values");
  return m;
}

TEST(CompileCli, CompileOfAnUnsupportedOpNamesTheOpAndTheNode) {
  TempDir dir;
  fs::path model = dir / "unsupported.onnx";
  {
    std::ofstream out(model, std::ios::binary);
    model_with_unsupported_op().SerializeToOstream(&out);
  }
  expect_user_error(tessel({"compile", model.string(), "-o", (dir / "m.so").string()}),
                    model.string() + ": unsupported ops: RandomNormalLike (node 'noise')");
  expect_user_error(tessel({"run", model.string()}), "unsupported ops: RandomNormalLike (node 'noise')");
  expect_user_error(tessel({"check", model.string()}), "unsupported ops: RandomNormalLike (node 'noise')");
}

}  // namespace
}  // namespace tessel
