// The tuning commands: tune and tune-report.
#include <iostream>

#include "src/cli/commands.h"
#include "src/driver/run_compiled.h"
#include "src/driver/tune_report.h"
#include "src/driver/tune_session.h"

namespace tessel::cli {

namespace {

int bounded_int(Args& args, const std::string& name, int64_t fallback, int64_t low, int64_t high) {
  int64_t n = parse_int(args.value(name).value_or(std::to_string(fallback)), name);
  TESSEL_USER_CHECK(n >= low && n <= high, Span{}) << name << " must be " << low << " to " << high;
  return int(n);
}

}  // namespace

int cmd_tune(Args& args) {
  driver::TuneOptions o;
  o.pipeline = pipeline_options(args);
  o.compile = compile_options(args, o.pipeline);
  TESSEL_USER_CHECK(!o.compile.tuned, Span{}) << "tune writes a tuning log (--log); --tuning-log is for compile";
  o.log_path = args.value("--log").value_or("");
  TESSEL_USER_CHECK(!o.log_path.empty(), Span{}) << "tune needs --log FILE: the tuning log it appends to";
  o.trials = bounded_int(args, "--trials", 1000, 1, 10000000);
  o.per_round = bounded_int(args, "--per-round", 8, 1, 1024);
  if (auto threads = args.value("--threads")) {
    int64_t n = parse_int(*threads, "--threads");
    TESSEL_USER_CHECK(n >= 1 && n <= 1024, Span{}) << "--threads must be 1 to 1024";
    o.compile.target.cpu.cores = int(n);
  }
  o.measure.threads = std::max(1, o.compile.target.cpu.cores);
  o.seed = uint64_t(parse_int(args.value("--seed").value_or("0"), "--seed"));
  o.resume = args.flag("--resume");
  std::string search = args.value("--search").value_or("model");
  TESSEL_USER_CHECK(search == "model" || search == "random", Span{}) << "--search is model or random, not " << search;
  o.random_search = search == "random";
  std::string layouts = args.value("--layouts").value_or("search");
  TESSEL_USER_CHECK(layouts == "search" || layouts == "default", Span{})
      << "--layouts is search (each conv's layouts measured) or default, not " << layouts;
  o.search_layouts = layouts == "search";
  o.check_in_model = !args.flag("--no-model-check");
  o.cost_model_in = args.value("--cost-model").value_or("");
  o.cost_model_out = args.value("--save-cost-model").value_or("");
  o.events_path = args.value("--events").value_or("");
  o.measure.timeout_s = bounded_int(args, "--timeout", 10, 1, 3600);
  o.measure.repeat = bounded_int(args, "--repeat", 5, 1, 1000);
  std::string flush = args.value("--cache-flush").value_or("l2");
  int64_t l2 = o.compile.target.cpu.l2_bytes > 0 ? o.compile.target.cpu.l2_bytes : int64_t(1) << 20;
  if (flush == "l2") {
    o.measure.flush_bytes = 4 * l2;
  } else if (flush == "memory") {
    o.measure.flush_bytes = int64_t(64) << 20;
  } else {
    TESSEL_USER_CHECK(flush == "none", Span{}) << "--cache-flush is l2, memory or none, not " << flush;
    o.measure.flush_bytes = o.measure.gpu_flush_bytes = 0;
  }
  o.model_path = single_model(args, "tune");
  driver::check_thread_environment();
  driver::TuneSummary summary = driver::run_tuning(o, std::cerr);
  driver::print_tune_summary(summary, std::cout);
  bool tuned_fusion = o.compile.fusion == passes::FusionPolicy::kTuned;
  std::cout << "log: " << o.log_path << " (tessel compile " << o.model_path << " --tuning-log " << o.log_path
            << (tuned_fusion ? " --fusion tuned" : "") << " -o model.so)\n";
  return summary.interrupted ? 130 : 0;
}

int cmd_tune_report(Args& args) {
  auto out = args.value("-o");
  std::string log = single_model(args, "tune-report");
  TESSEL_USER_CHECK(out, Span{}) << "tune-report needs -o DIR";
  driver::TuneReport report = driver::make_tune_report(log);
  driver::write_tune_report(report, *out);
  driver::print_tune_report(report, std::cout);
  std::cout << "wrote " << *out << "/tasks.csv, curve.csv, accuracy.csv, curve.svg"
            << (report.summary.fusion.empty() ? "" : ", fusion.csv")
            << (report.summary.layouts.empty() ? "" : ", layouts.csv")
            << (report.checks.empty() ? "" : ", in_model.csv") << "\n";
  return 0;
}

}  // namespace tessel::cli
