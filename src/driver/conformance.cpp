// The conformance runner. Cases run in forked children so that one crashing
// or hanging case cannot take the whole run down.
#include "src/driver/conformance.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "src/driver/compile_model.h"
#include "src/driver/pipeline.h"
#include "src/driver/targets.h"
#include "src/driver/tir_runner.h"
#include "src/frontend/onnx/test_data.h"
#include "src/reference/executor.h"

namespace tessel::driver {

namespace fs = std::filesystem;

namespace {

// Cases whose expected outputs need a looser tolerance than the ONNX
// backend's default, with the reason.
const std::map<std::string, Tolerance>& looser_tolerances() {
  // The inverse DFTs' expected outputs come from numpy's float32 FFT, which
  // leaves rounding noise (a few 1e-7 where the exact value is 0, in outputs
  // up to 54) above the default absolute tolerance of 1e-7.
  static const std::map<std::string, Tolerance> table = {
      {"test_dft_inverse", {.rtol = 1e-3, .atol = 1e-6}},
      {"test_dft_inverse_opset19", {.rtol = 1e-3, .atol = 1e-6}},
  };
  return table;
}

std::vector<std::string> case_names(const ConformanceOptions& o) {
  std::vector<std::string> names;
  if (!o.list_file.empty()) {
    std::ifstream in(o.list_file);
    TESSEL_USER_CHECK(in.good(), Span{}) << o.list_file << ": cannot open case list";
    std::string line;
    while (std::getline(in, line)) {
      line.erase(0, line.find_first_not_of(" \t"));
      line.erase(line.find_last_not_of(" \t\r") + 1);
      if (!line.empty() && line[0] != '#') names.push_back(line);
    }
    return names;
  }
  for (const auto& e : fs::directory_iterator(o.dir))
    if (fs::exists(e.path() / "model.onnx")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Runs fn in a child process; returns the text it returned ("ok" becomes
// ""), or why it gave none (a crash, the timeout).
std::string run_in_child(const std::function<std::string()>& fn, double timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) return "cannot create a pipe";
  pid_t pid = fork();
  if (pid < 0) return "cannot fork";
  if (pid == 0) {
    close(fds[0]);
    std::string verdict;
    try {
      verdict = fn();
    } catch (const std::exception& e) {
      verdict = e.what();
    }
    if (verdict.empty()) verdict = "ok";
    ssize_t ignored = write(fds[1], verdict.data(), verdict.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[4096];
  while (true) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      text = "timed out after " + std::to_string(int(timeout_s)) + " s";
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, int(left.count())) <= 0) continue;
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, size_t(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (text.empty() && WIFSIGNALED(status)) return "crashed with signal " + std::to_string(WTERMSIG(status));
  return text == "ok" ? "" : text;
}

// Runs the case in a child; returns its verdict text ("" = pass).
std::string run_isolated(const std::string& case_dir, const ConformanceOptions& o, bool cuda_on_gpu) {
  return run_in_child(
      [&] { return run_conformance_case(case_dir, o.target, o.fusion, o.knob_seed, cuda_on_gpu); },
      o.case_timeout_s);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out.empty() ? "none" : out;
}

// The outputs of one test data set on the chosen target. The graph is
// loaded for each set, since the tir target specialises it on the inputs.
std::vector<Tensor> run_on_target(const fs::path& model, const onnx_frontend::TestDataSet& data,
                                  const std::string& target, passes::FusionPolicy fusion,
                                  std::optional<uint64_t> knob_seed, bool cuda_on_gpu) {
  PipelineOptions options;
  options.stages.verify = true;  // every case doubles as a test of the passes' invariants
  options.import.input_values = data.inputs;  // Resize's scales and OneHot's depth are inputs in the cases
  options.import.sequence_lengths = data.sequence_lengths;
  options.import.empty_optionals = data.empty_optionals;
  graph::Graph g = load_graph(model.string(), options);
  std::vector<std::string> names;
  for (size_t j = 0; j < g.num_user_outputs(); ++j) names.push_back(g.outputs()[j]->name);
  TESSEL_USER_CHECK(names == data.expected_names, Span{})
      << "the compiled outputs are " << join(names) << ", the test expects " << join(data.expected_names);
  const std::vector<Tensor>& inputs = data.inputs;
  if (target == "reference") return reference::Executor(g).run(inputs);
  bind_shape_inputs(g, inputs);
  if (target == "tir") return TirExecutor(g, fusion).run(inputs);
  CompileOptions compile;
  compile.fusion = fusion;
  compile.stages.verify = true;
  compile.knob_seed = knob_seed;
  if (target == "llvm") return JitModel(compile_graph(g, compile)).run(inputs);
  compile.target = codegen::parse_target(target);
  CompiledGraph compiled = compile_graph(g, compile);  // cuda: NVRTC compiles every kernel
  if (target == "cuda-emulated" || cuda_on_gpu) return JitModel(std::move(compiled)).run(inputs);
  std::vector<lower::LoweredGroup> scheduled;
  for (const CompiledKernel& k : compiled.kernels)
    scheduled.push_back({k.group.group, k.flat, k.group.inputs, k.group.outputs});
  return TirExecutor(g, std::move(scheduled)).run(inputs);
}

void check_target(const std::string& target) {
  TESSEL_USER_CHECK(target == "reference" || target == "tir" || target == "llvm" || target == "cuda" ||
                        target == "cuda-emulated",
                    Span{})
      << "unknown conformance target '" << target
      << "' (available: reference, tir, llvm, cuda, cuda-emulated)";
}

}  // namespace

std::string compare_tensors(const Tensor& got, const Tensor& want, Tolerance tol) {
  std::ostringstream os;
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    os << "got " << got.type_str() << ", expected " << want.type_str();
    return os.str();
  }
  bool exact = !is_float(want.dtype());
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    bool ok;
    if (exact) {
      ok = got.get_i64(i) == want.get_i64(i);
    } else {
      double a = got.get_f64(i), b = want.get_f64(i);
      ok = (std::isnan(a) && std::isnan(b)) || a == b ||
           (std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b));
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  os << bad << " of " << want.numel() << " elements differ; first at " << first << ": got "
     << got.get_f64(first) << ", expected " << want.get_f64(first);
  return os.str();
}

std::string run_conformance_case(const std::string& case_dir, const std::string& target,
                                 passes::FusionPolicy fusion, std::optional<uint64_t> knob_seed,
                                 bool cuda_on_gpu) {
  check_target(target);
  fs::path dir(case_dir);
  Tolerance tol;
  if (auto it = looser_tolerances().find(dir.filename().string()); it != looser_tolerances().end())
    tol = it->second;
  int sets = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_directory() || e.path().filename().string().rfind("test_data_set_", 0) != 0) continue;
    ++sets;
    onnx_frontend::TestDataSet data =
        onnx_frontend::load_test_data_set((dir / "model.onnx").string(), e.path().string());
    const std::vector<Tensor>& expected = data.expected;
    std::vector<Tensor> outputs =
        run_on_target(dir / "model.onnx", data, target, fusion, knob_seed, cuda_on_gpu);
    if (outputs.size() != expected.size())
      return "produced " + std::to_string(outputs.size()) + " outputs, expected " +
             std::to_string(expected.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string diff = compare_tensors(outputs[i], expected[i], tol);
      if (!diff.empty()) return e.path().filename().string() + " output " + std::to_string(i) + ": " + diff;
    }
  }
  return sets == 0 ? "no test_data_set_* folder" : "";
}

int run_conformance(const ConformanceOptions& o, std::ostream& out) {
  TESSEL_USER_CHECK(fs::is_directory(o.dir), Span{}) << o.dir << ": not a folder";
  check_target(o.target);
  bool cuda_on_gpu = false;
  if (o.target == "cuda") {
    std::string why = gpu_unavailable_reason();
    cuda_on_gpu = why.empty();
    out << (cuda_on_gpu ? "target cuda: each case runs on the GPU\n"
                        : "target cuda: no GPU here (" + why + "); each case is compiled by NVRTC and its " +
                              "scheduled tensor IR runs on the interpreter\n");
  }
  int passed = 0, failed = 0;
  for (const std::string& name : case_names(o)) {
    fs::path case_dir = fs::path(o.dir) / name;
    std::string verdict =
        fs::is_directory(case_dir) ? run_isolated(case_dir.string(), o, cuda_on_gpu) : "no such case folder";
    if (verdict.empty()) {
      ++passed;
      out << "PASS " << name << "\n";
    } else {
      ++failed;
      std::replace(verdict.begin(), verdict.end(), '\n', ' ');
      out << "FAIL " << name << ": " << verdict << "\n";
    }
    out.flush();
  }
  out << passed << " passed, " << failed << " failed\n";
  return failed;
}

}  // namespace tessel::driver
