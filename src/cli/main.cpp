// The `tessel` command: subcommands over the driver. User errors exit with
// code 2, internal errors with code 3.
#include <filesystem>
#include <iostream>
#include <map>

#include "src/cli/args.h"
#include "src/cli/commands.h"
#include "src/cli/tune_help.h"
#include "tessel/error.h"

namespace tessel::cli {
namespace {

constexpr const char* kUsage = R"(tessel - a tensor-program compiler with a learned autotuner

usage: tessel <command> [options]

commands:
  inspect      ops, shapes, parameters and FLOPs of an ONNX model
  compile      compile an ONNX model to a shared library (model.so) for this CPU
  run          run a compiled model (model.so, or an ONNX model compiled in memory),
               or an ONNX model on the reference executor or the tensor IR interpreter
  check        compare a compiled model with the reference executor, per output and kernel
  conformance  run ONNX operator conformance cases
  lower        group a model's nodes and lower them to the tensor IR
  target       the parsed target: CPU, features, vector width, caches; or GPU limits
  roofline     this machine's peak GFLOP/s and memory bandwidth, 1 thread and all
  fusion-report  compare fusion policies: kernels, dispatch, bytes, roofline, time (md, json, html)
  tasks        the tuner's tasks: distinct fused groups, runs, FLOPs, default-schedule time, share
  tune         tune the model's kernels: cost-model-guided search, measured candidates, a log
  tune-report  a tuning log's per-task results, cost model accuracy and tuning curves (CSV, SVG)
  version      versions of Tessel and its compiler libraries, and the host CPU

`tessel <command> --help` describes each command.
)";

struct Command {
  int (*run)(Args&);
  const char* help;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table = {
      {"inspect", {cmd_inspect, kInspectHelp}},
      {"run", {cmd_run, kRunHelp}},
      {"compile", {cmd_compile, kCompileHelp}},
      {"check", {cmd_check, kCheckHelp}},
      {"conformance", {cmd_conformance, kConformanceHelp}},
      {"lower", {cmd_lower, kLowerHelp}},
      {"target", {cmd_target, kTargetHelp}},
      {"roofline", {cmd_roofline, kRooflineHelp}},
      {"fusion-report", {cmd_fusion_report, kFusionReportHelp}},
      {"tasks", {cmd_tasks, kTasksHelp}},
      {"tune", {cmd_tune, kTuneHelp}},
      {"tune-report", {cmd_tune_report, kTuneReportHelp}},
      {"version", {cmd_version, kVersionHelp}},
      {"ops", {cmd_ops, kOpsHelp}},
  };
  return table;
}

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (name == "--version") name = "version";
  auto it = commands().find(name);
  if (it == commands().end()) {
    std::cerr << "tessel: unknown command '" << name << "'\n\n" << kUsage;
    return 2;
  }
  Args args(argc, argv, 2);
  if (args.flag("--help") || args.flag("-h")) {
    std::cout << it->second.help;
    return 0;
  }
  return it->second.run(args);
}

}  // namespace
}  // namespace tessel::cli

int main(int argc, char** argv) {
  try {
    return tessel::cli::dispatch(argc, argv);
  } catch (const tessel::UserError& e) {
    std::cerr << "tessel: error: " << e.what() << "\n";
    return 2;
  } catch (const tessel::InternalError& e) {
    std::cerr << "tessel: " << e.what() << "\n";
    return 3;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that the system refuses (too long, unreadable, ...).
    std::cerr << "tessel: error: " << e.path1().string() << ": " << e.code().message() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "tessel: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tessel: internal error, please report: " << e.what() << "\n";
    return 3;
  }
}
