// The commands of compiled models: compile, run of a model.so or of an ONNX
// model compiled in memory, and check.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "src/cli/commands.h"
#include "src/driver/check_job.h"
#include "src/driver/chrome_trace.h"
#include "src/driver/compile_model.h"
#include "src/driver/fusion_report/report_writers.h"
#include "src/driver/pipeline.h"
#include "src/driver/roofline.h"
#include "src/driver/run_compiled.h"
#include "src/driver/run_inputs.h"
#include "src/driver/targets.h"
#include "src/driver/tuning_tasks.h"

namespace tessel::cli {

driver::CompileOptions compile_options(Args& args, const driver::PipelineOptions& pipeline, bool* given) {
  driver::CompileOptions o;
  auto fusion = args.value("--fusion"), schedule = args.value("--schedule");
  auto target = args.value("--target"), channels_last = args.value("--channels-last");
  std::vector<std::string> mcpu = args.values("-mcpu"), mattr = args.values("-mattr");
  if (given) *given = fusion || schedule || target || channels_last || !mcpu.empty() || !mattr.empty();
  o.fusion = fusion ? passes::parse_fusion_policy(*fusion) : driver::CompileOptions{}.fusion;
  if (channels_last) {
    std::optional<passes::ChannelsLastPolicy> policy = passes::channels_last_policy_named(*channels_last);
    TESSEL_USER_CHECK(policy.has_value(), Span{})
        << "--channels-last " << *channels_last << ": expected none, depthwise or all";
    o.channels_last = *policy;
  }
  o.schedule = driver::parse_schedule_kind(schedule.value_or("default"));
  std::vector<std::string> extra;
  for (const std::string& v : mcpu) extra.push_back("-mcpu=" + v);
  for (const std::string& v : mattr) extra.push_back("-mattr=" + v);
  o.target = driver::served_target(target.value_or(codegen::default_target_spec()),
                                   extra);  // refused before any work
  o.stages = pipeline.stages;
  if (auto log = args.value("--tuning-log")) {
    if (given) *given = true;
    TESSEL_USER_CHECK(o.schedule == driver::ScheduleKind::kDefault, Span{})
        << "--tuning-log replaces default schedules: it does not go with --schedule none";
    o.tuned = std::make_shared<const driver::TunedSchedules>(driver::load_tuned_schedules(*log, o.target, std::cerr));
  }
  return o;
}

namespace {

// What the code runs on, in a word or two: the CPU, or the GPU architecture.
std::string target_name(const codegen::Target& t) {
  if (t.kind == codegen::TargetKind::kLlvm) return t.cpu.cpu;
  return t.gpu.emulated ? "cuda-emulated" : "cuda sm_" + std::to_string(t.gpu.sm);
}

bool is_library(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0;
}

// The library must not overwrite the model (or any ONNX file): `-o model.onnx`
// is a slip of the keyboard, not a request.
void check_output_path(const std::string& model, const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  bool same = fs::exists(output, ec) && fs::equivalent(model, output, ec);
  TESSEL_USER_CHECK(!same, Span{}) << "-o " << output << " is the model itself; compile writes a shared library (.so)";
  TESSEL_USER_CHECK(fs::path(output).extension() != ".onnx", Span{})
      << "-o " << output << ": compile writes a shared library, not an ONNX model (use a .so name)";
}

// --trace FILE: three traced runs as a Chrome trace.
// The file is opened before any run, so that a path that cannot be written
// fails first.
void write_trace(driver::CompiledModel& model, const std::vector<Tensor>& inputs, const std::string& path,
                 std::ofstream& out) {
  constexpr int kTracedRuns = 3;
  std::vector<driver::TracedRun> runs(kTracedRuns);
  for (driver::TracedRun& run : runs) model.run_traced(inputs, run);
  out << driver::chrome_trace(model.kernels(), runs).dump() << "\n";
  out.close();
  TESSEL_USER_CHECK(out.good(), Span{}) << "cannot write the trace " << path;
  size_t spans = 0;
  for (const driver::TracedRun& run : runs) spans += run.spans.size();
  std::cout << "wrote " << path << ": " << kTracedRuns << " runs, " << spans
            << " spans (one track per thread; open it in Perfetto or chrome://tracing)\n";
}

}  // namespace

int cmd_compile(Args& args) {
  driver::PipelineOptions pipeline = pipeline_options(args);
  driver::CompileOptions options = compile_options(args, pipeline);
  auto output = args.value("-o");
  if (!output) output = args.value("--output");
  bool print_tir = args.flag("--print-tir"), print_llvm = args.flag("--print-llvm");
  bool print_cuda = args.flag("--print-cuda");
  std::string path = single_model(args, "compile");
  bool gpu = options.target.kind == codegen::TargetKind::kCuda;
  TESSEL_USER_CHECK(!print_llvm || !gpu, Span{})
      << "--print-llvm prints an llvm target's code; for cuda, --print-cuda";
  TESSEL_USER_CHECK(!print_cuda || gpu, Span{}) << "--print-cuda needs --target cuda (or cuda-emulated)";
  // The CUDA C alone is what a GPU compile gives today (no model library for cuda yet).
  TESSEL_USER_CHECK(output || (gpu && print_cuda), Span{}) << "compile needs -o OUT.so";
  if (output) check_output_path(path, *output);
  auto start = std::chrono::steady_clock::now();
  graph::Graph g = driver::load_graph(path, pipeline);
  driver::CompiledGraph compiled = driver::compile_graph(g, options);
  if (print_tir)
    for (const driver::CompiledKernel& k : compiled.kernels)
      std::cout << "// kernel " << k.symbol << ": scheduled and flattened\n" << driver::kernel_text(k) << "\n";
  if (print_llvm || print_cuda) std::cout << compiled.module->source_text() << "\n";
  if (!output) return 0;
  if (options.fusion == passes::FusionPolicy::kTuned) driver::print_fusion_regions(compiled.fusion_regions, std::cout);
  size_t kernels = compiled.kernels.size(), tuned = compiled.tuned_kernels;
  uint64_t arena = compiled.plan.arena_bytes, weights = compiled.weights.size();
  driver::export_shared_library(std::move(compiled), *output, options.stages);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "compiled " << path << " -> " << *output << ": " << kernels << " kernels (fusion "
            << passes::fusion_policy_name(options.fusion) << ", schedule "
            << driver::schedule_kind_name(options.schedule)
            << (options.tuned ? ", " + std::to_string(tuned) + " tuned" : std::string()) << "), target "
            << target_name(options.target) << ", arena " << arena << " bytes, weights " << weights
            << " bytes, " << seconds << " s\n";
  return 0;
}

// `tessel run` of a model.so, or of an ONNX model compiled in memory.
int run_compiled(Args& args, const driver::PipelineOptions& pipeline) {
  bool compile_option_given = false;
  driver::CompileOptions options = compile_options(args, pipeline, &compile_option_given);
  auto inputs_dir = args.value("--inputs");
  auto out_dir = args.value("--out");
  uint64_t seed = uint64_t(parse_int(args.value("--seed").value_or("0"), "--seed"));
  int64_t repeat_arg = parse_int(args.value("--repeat").value_or("0"), "--repeat");
  TESSEL_USER_CHECK(repeat_arg >= 0 && repeat_arg <= 1000000, Span{}) << "--repeat must be 0 to 1000000";
  int repeat = int(repeat_arg);
  auto threads = args.value("--threads");
  bool profile = args.flag("--profile");
  auto trace_path = args.value("--trace");
  std::ofstream trace_file;
  if (trace_path) {
    trace_file.open(*trace_path);
    TESSEL_USER_CHECK(trace_file.good(), Span{}) << "cannot write the trace " << *trace_path;
  }
  driver::check_thread_environment();
  std::unique_ptr<driver::CompiledModel> model;
  std::unique_ptr<graph::Graph> graph;  // outlives a JIT-compiled model
  std::string path = single_model(args, "run");
  if (is_library(path)) {
    TESSEL_USER_CHECK(!compile_option_given, Span{})
        << "--fusion, --schedule and --target apply when compiling an ONNX model, not to " << path;
    TESSEL_USER_CHECK(pipeline.import.input_shapes.empty(), Span{})
        << "--input-shape applies when compiling an ONNX model; the shapes of " << path << " are fixed";
    model = driver::load_model_library(path);
  } else {
    graph = std::make_unique<graph::Graph>(driver::load_graph(path, pipeline));
    model = std::make_unique<driver::JitModel>(driver::compile_graph(*graph, options));
  }
  if (threads) {
    int64_t n = parse_int(*threads, "--threads");
    TESSEL_USER_CHECK(n >= 1 && n <= 1024, Span{}) << "--threads must be 1 to 1024";
    model->set_num_threads(int(n));
  }
  std::vector<Tensor> inputs =
      inputs_dir ? driver::load_inputs(model->inputs(), *inputs_dir) : driver::random_inputs(model->inputs(), seed);
  std::vector<Tensor> outputs = model->run(inputs);
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs.size(); ++i) {
    names.push_back(model->outputs()[i].name);
    print_output_summary(names.back(), outputs[i]);
  }
  if (out_dir) driver::write_outputs(names, outputs, *out_dir, std::cout);
  if (repeat > 0) driver::print_latency(driver::time_runs(*model, inputs, repeat), model->num_threads(), std::cout);
  if (profile) {
    driver::ModelProfile p = driver::profile_model(*model, inputs, std::max(repeat, 10));
    std::string device = model->device();
    if (device != "cpu") {  // the roofline is measured on CPUs only
      std::cout << "kernels on " << device << ", timed between device events; no roofline for a GPU yet\n";
      driver::print_profile(p, nullptr, std::cout);
    } else {
      driver::Roofline roof = driver::machine_roofline(driver::served_target("llvm"), false, std::cerr);
      driver::RooflinePoint at = roof.at(p.threads);
      driver::print_profile(p, &at, std::cout);
    }
  }
  if (trace_path) write_trace(*model, inputs, *trace_path, trace_file);
  return 0;
}

int cmd_check(Args& args) {
  driver::PipelineOptions pipeline = pipeline_options(args);
  driver::CheckOptions o;
  o.compile = compile_options(args, pipeline);
  o.per_kernel = args.flag("--per-kernel");
  o.seed = uint64_t(parse_int(args.value("--seed").value_or("0"), "--seed"));
  if (auto t = args.value("--tolerance")) {
    char* end = nullptr;
    o.tolerance = std::strtod(t->c_str(), &end);
    TESSEL_USER_CHECK(end && *end == 0 && !t->empty() && o.tolerance >= 0, Span{})
        << "--tolerance takes a non-negative number, got '" << *t << "'";
  }
  std::string path = single_model(args, "check");
  driver::check_thread_environment();
  graph::Graph g = driver::load_graph(path, pipeline);
  std::cout << "model " << path << "\n";
  return driver::run_check(g, o, std::cout) == 0 ? 0 : 1;
}

int cmd_fusion_report(Args& args) {
  driver::PipelineOptions pipeline = pipeline_options(args);
  driver::FusionReportOptions o;
  o.pipeline = pipeline;
  o.target = driver::served_target(args.value("--target").value_or(codegen::default_target_spec()));
  auto list = args.value("--policies");
  if (list) {
    o.policies.clear();
    std::istringstream names(*list);
    for (std::string name; std::getline(names, name, ',');) o.policies.push_back(passes::parse_fusion_policy(name));
  }
  if (auto log = args.value("--tuning-log")) {
    o.tuned = std::make_shared<const driver::TunedSchedules>(driver::load_tuned_schedules(*log, o.target, std::cerr));
    if (!list) o.policies.push_back(passes::FusionPolicy::kTuned);
  }
  if (auto t = args.value("--threads")) {
    int64_t n = parse_int(*t, "--threads");
    TESSEL_USER_CHECK(n >= 1 && n <= 1024, Span{}) << "--threads must be 1 to 1024";
    o.threads = int(n);
  }
  int64_t repeat = parse_int(args.value("--repeat").value_or("30"), "--repeat");
  TESSEL_USER_CHECK(repeat >= 1 && repeat <= 100000, Span{}) << "--repeat must be 1 to 100000";
  o.repeat = int(repeat);
  o.seed = uint64_t(parse_int(args.value("--seed").value_or("0"), "--seed"));
  auto out = args.value("-o");
  std::string path = single_model(args, "fusion-report");
  TESSEL_USER_CHECK(out, Span{}) << "fusion-report needs -o DIR (it writes report.md, report.json, report.html)";
  driver::check_thread_environment();
  driver::FusionReport report = driver::make_fusion_report(path, o, std::cerr);
  driver::write_fusion_report(report, *out);
  std::string md = driver::fusion_report_markdown(report);
  std::cout << md.substr(0, md.find("\n## ")) << "\n";  // the policies and findings
  std::cout << "wrote " << *out << "/report.md, report.json, report.html\n";
  return 0;
}

int cmd_tasks(Args& args) {
  driver::PipelineOptions pipeline = pipeline_options(args);
  driver::CompileOptions options = compile_options(args, pipeline);
  int64_t repeat = parse_int(args.value("--repeat").value_or("20"), "--repeat");
  TESSEL_USER_CHECK(repeat >= 1 && repeat <= 100000, Span{}) << "--repeat must be 1 to 100000";
  uint64_t seed = uint64_t(parse_int(args.value("--seed").value_or("0"), "--seed"));
  auto threads = args.value("--threads");
  std::string path = single_model(args, "tasks");
  driver::check_thread_environment();
  graph::Graph g = driver::load_graph(path, pipeline);
  driver::CompiledGraph compiled = driver::compile_graph(g, options);
  std::vector<driver::TuningTask> tasks = driver::extract_tasks(compiled);
  driver::JitModel model(std::move(compiled));
  if (threads) {
    int64_t n = parse_int(*threads, "--threads");
    TESSEL_USER_CHECK(n >= 1 && n <= 1024, Span{}) << "--threads must be 1 to 1024";
    model.set_num_threads(int(n));
  }
  std::vector<Tensor> inputs = driver::random_inputs(model.inputs(), seed);
  driver::ModelProfile profile = driver::profile_model(model, inputs, int(repeat));
  std::cout << "model " << path << " (fusion " << passes::fusion_policy_name(options.fusion) << ", target "
            << target_name(options.target) << ")\n";
  driver::print_task_table(tasks, profile, std::cout);
  return 0;
}

}  // namespace tessel::cli
