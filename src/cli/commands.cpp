// Implementations of the subcommands.
#include "src/cli/commands.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "src/driver/conformance.h"
#include "src/driver/inspect.h"
#include "src/driver/lower_job.h"
#include "src/driver/pipeline.h"
#include "src/driver/roofline.h"
#include "src/driver/run_inputs.h"
#include "src/driver/targets.h"
#include "src/driver/tir_runner.h"

namespace tessel::cli {

std::string single_model(Args& args, const char* command) {
  std::vector<std::string> pos = args.positionals();
  TESSEL_USER_CHECK(pos.size() == 1, Span{})
      << command << " takes one model file (see tessel " << command << " --help)";
  return pos[0];
}

driver::StageOptions stage_options(Args& args) {
  driver::StageOptions o;
  if (args.flag("--verify")) o.verify = true;
  for (const std::string& list : args.values("--print-after")) {
    std::istringstream names(list);
    for (std::string name; std::getline(names, name, ',');) o.print_after.insert(name);
  }
  if (args.flag("--print-after-all")) o.print_after.insert("all");
  driver::check_stage_names(o.print_after);
  if (!o.print_after.empty()) o.print_to = &std::cout;
  if (args.flag("--time-passes")) o.time_to = &std::cerr;
  return o;
}

driver::PipelineOptions pipeline_options(Args& args) {
  driver::PipelineOptions o;
  for (const std::string& spec : args.values("--input-shape")) {
    auto [name, dims] = driver::parse_input_shape(spec);
    o.import.input_shapes[name] = dims;
  }
  for (const std::string& spec : args.values("--sequence-length")) {
    size_t eq = spec.rfind('=');
    int64_t n = -1;
    if (eq != std::string::npos && eq > 0) {
      auto [end, ec] = std::from_chars(spec.data() + eq + 1, spec.data() + spec.size(), n);
      if (ec != std::errc() || end != spec.data() + spec.size()) n = -1;
    }
    TESSEL_USER_CHECK(n >= 0, Span{}) << "--sequence-length " << spec << ": expected NAME=N, N >= 0";
    o.import.sequence_lengths[spec.substr(0, eq)] = n;
  }
  for (const std::string& name : args.values("--empty-optional")) o.import.empty_optionals.insert(name);
  if (auto qdq = args.value("--qdq")) {
    TESSEL_USER_CHECK(*qdq == "float" || *qdq == "integer", Span{})
        << "--qdq " << *qdq << ": expected float or integer";
    o.import.fold_qdq = *qdq == "integer";
  }
  o.stages = stage_options(args);
  return o;
}

void print_output_summary(const std::string& name, const Tensor& t) {
  std::cout << "output '" << name << "' " << t.type_str();
  if (t.numel() > 0) {
    double lo = t.get_f64(0), hi = lo, sum = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      double v = t.get_f64(i);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    std::cout << "  min " << lo << "  max " << hi << "  mean " << sum / double(t.numel());
  }
  std::cout << "\n";
}

int cmd_inspect(Args& args) {
  driver::PipelineOptions options = pipeline_options(args);
  bool print = args.flag("--print");
  std::string path = single_model(args, "inspect");
  graph::Graph g = driver::load_graph(path, options);
  std::cout << "model " << path << "\n";
  driver::print_inspection(g, std::cout);
  if (print) std::cout << "\n" << driver::graph_text(g);
  return 0;
}

int cmd_run(Args& args) {
  driver::PipelineOptions options = pipeline_options(args);
  bool reference = args.flag("--reference");
  bool tir = args.flag("--tir");
  if (!reference && !tir) return run_compiled(args, options);
  std::optional<std::string> fusion = args.value("--fusion");
  passes::FusionPolicy policy = passes::parse_fusion_policy(fusion.value_or("none"));
  auto inputs_dir = args.value("--inputs");
  auto out_dir = args.value("--out");
  uint64_t seed = uint64_t(parse_int(args.value("--seed").value_or("0"), "--seed"));
  std::string path = single_model(args, "run");
  TESSEL_USER_CHECK(reference != tir, Span{}) << "pass one of --reference and --tir";
  TESSEL_USER_CHECK(tir || !fusion, Span{}) << "--fusion applies to --tir and compiled runs only";
  graph::Graph g = driver::load_graph(path, options);
  std::vector<Tensor> inputs =
      inputs_dir ? driver::load_inputs(g, *inputs_dir) : driver::random_inputs(g, seed);
  std::vector<Tensor> outputs;
  if (tir) {
    driver::bind_shape_inputs(g, inputs);  // shape parameters given as inputs become constants
    outputs = driver::TirExecutor(g, policy).run(inputs);
  } else {
    outputs = driver::run_reference(g, inputs);
  }
  for (size_t i = 0; i < outputs.size(); ++i) print_output_summary(g.outputs()[i]->name, outputs[i]);
  if (out_dir) driver::write_outputs(g, outputs, *out_dir, std::cout);
  return 0;
}

int cmd_conformance(Args& args) {
  driver::ConformanceOptions o;
  o.list_file = args.value("--list").value_or("");
  o.target = args.value("--target").value_or("reference");
  o.fusion = passes::parse_fusion_policy(args.value("--fusion").value_or("none"));
  if (auto t = args.value("--timeout")) {
    int64_t seconds = parse_int(*t, "--timeout");
    TESSEL_USER_CHECK(seconds >= 1 && seconds <= 86400, Span{}) << "--timeout must be 1 to 86400 seconds";
    o.case_timeout_s = double(seconds);
  }
  if (auto seed = args.value("--sample-knobs")) {
    TESSEL_USER_CHECK(o.target == "llvm" || o.target == "cuda" || o.target == "cuda-emulated", Span{})
        << "--sample-knobs samples the default schedules' knobs: it needs --target llvm, cuda or "
           "cuda-emulated";
    o.knob_seed = uint64_t(parse_int(*seed, "--sample-knobs"));
  }
  std::vector<std::string> pos = args.positionals();
  TESSEL_USER_CHECK(pos.size() == 1, Span{}) << "conformance takes one folder of cases (see --help)";
  o.dir = pos[0];
  return driver::run_conformance(o, std::cout) == 0 ? 0 : 1;
}

int cmd_lower(Args& args) {
  driver::PipelineOptions options = pipeline_options(args);
  driver::LowerJobOptions o;
  o.fusion = passes::parse_fusion_policy(args.value("--fusion").value_or("none"));
  o.node = args.value("--node").value_or("");
  o.print = args.flag("--print");
  std::string path = single_model(args, "lower");
  graph::Graph g = driver::load_graph(path, options);
  std::ostringstream report;  // nothing on stdout when lowering fails
  driver::run_lower_job(g, o, report);
  std::cout << "model " << path << "\n" << report.str();
  return 0;
}

int cmd_version(Args& args) {
  args.positionals();
  std::cout << driver::version_report();
  return 0;
}

int cmd_ops(Args& args) {
  TESSEL_USER_CHECK(args.positionals().empty(), Span{}) << "ops takes no arguments";
  std::cout << driver::supported_ops_report();
  return 0;
}

int cmd_target(Args& args) {
  std::vector<std::string> pos = args.positionals();
  TESSEL_USER_CHECK(pos.size() <= 1, Span{}) << "target takes one spec in quotes, e.g. tessel target \"llvm -mcpu=znver3\"";
  std::cout << driver::target_report(pos.empty() ? codegen::default_target_spec() : pos[0]);
  return 0;
}

int cmd_roofline(Args& args) {
  std::string spec = args.value("--target").value_or(codegen::default_target_spec());
  bool remeasure = args.flag("--remeasure");
  TESSEL_USER_CHECK(args.positionals().empty(), Span{}) << "roofline takes no model (see --help)";
  driver::Roofline r = driver::machine_roofline(driver::served_target(spec), remeasure, std::cerr);
  driver::print_roofline(r, std::cout);
  return 0;
}

}  // namespace tessel::cli
