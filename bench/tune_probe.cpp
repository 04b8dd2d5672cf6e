// How a task's tuned schedule compares with its default one when measured
// alone, the way the tuner measures: both built once more and timed in
// alternation (default, tuned, default, ...), each in a child process, under
// several cache-flush sizes (and with the task's activations read after the
// flush, as the tuner measures), so that what the tuner's measurement says can
// be held against what the model shows (`tessel run --profile`).
//
//   build/bench/tessel_tune_probe MODEL.onnx LOG.jsonl TASK [--threads N] [--rounds R] [--log-layouts]
//
// --log-layouts: the model compiled with the log's conv layout decisions, so
// that the tasks are those of the tuned library.
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "src/driver/compile_model.h"
#include "src/driver/run_compiled.h"
#include "src/driver/tune_session.h"
#include "src/driver/tuning_tasks.h"
#include "tessel/error.h"
#include "tuner/log/tuning_log.h"
#include "tuner/measure/measure.h"
#include "tuner/search/candidate.h"

int main(int argc, char** argv) {
  using namespace tessel;
  if (argc < 4) {
    std::fprintf(
        stderr,
        "usage: tessel_tune_probe MODEL.onnx LOG.jsonl TASK [--threads N] [--rounds R] [--log-layouts]\n");
    return 2;
  }
  int threads = 1, rounds = 5;
  bool log_layouts = false;
  for (int i = 4; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--log-layouts") {
      log_layouts = true;
    } else if ((arg == "--threads" || arg == "--rounds") && i + 1 < argc) {
      (arg == "--threads" ? threads : rounds) = std::stoi(argv[++i]);
    } else {
      std::fprintf(stderr, "tessel_tune_probe: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  try {
    driver::CompileOptions options;
    options.target.cpu.cores = threads;
    if (log_layouts) {
      std::ostringstream notes;
      auto tuned = std::make_shared<driver::TunedSchedules>(
          driver::load_tuned_schedules(argv[2], options.target, notes));
      tuned->tasks.clear();  // the log's layouts only: the tasks keep their default schedules
      options.tuned = tuned;
    }
    graph::Graph g = driver::load_graph(argv[1], {});
    driver::CompiledGraph compiled = driver::compile_graph(g, options);
    sched::CpuScheduleOptions cpu = *driver::cpu_schedule_options(options);
    const driver::TuningTask* task = nullptr;
    std::vector<driver::TuningTask> tasks = driver::extract_tasks(compiled);
    for (const driver::TuningTask& t : tasks)
      if (t.key == argv[3]) task = &t;
    if (!task) {
      std::string known;
      for (const driver::TuningTask& t : tasks) known += "\n  " + t.key + "  " + t.name;
      throw std::runtime_error(std::string("no task ") + argv[3] + " in the model; its tasks:" + known);
    }
    tune::TuningLog log = tune::read_tuning_log(argv[2], driver::log_target(options.target), driver::compiler_version());
    const tune::TuningRecord* best = nullptr;
    double default_ms = 0;
    for (const tune::TuningRecord& r : log.records) {
      if (r.task != task->key || !r.ok()) continue;
      if (r.round == 0 && default_ms == 0) default_ms = r.median_ms();
      if (!best || r.time_ms(default_ms) < best->time_ms(default_ms)) best = &r;
    }
    if (!best) throw std::runtime_error("the log has no measured record of the task");
    tune::Candidate base = *tune::make_candidate(task->func, cpu, {});
    tune::Candidate tuned = *tune::make_candidate(task->func, cpu, best->knobs);
    std::vector<Tensor> inputs;
    for (const tir::Buffer& b : base.flat->inputs) {
      Tensor t(b->dtype, b->shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, is_float(b->dtype) ? double(i % 17) / 17 - 0.5 : 0);
      inputs.push_back(std::move(t));
    }
    std::printf("task %s (%s), %d thread(s); tuned knobs:", task->key.c_str(), task->name.c_str(), threads);
    for (const auto& [k, v] : best->knobs) std::printf(" %s=%lld", k.c_str(), (long long)v);
    std::printf("\n%-12s %12s %12s %8s\n", "flush KiB", "default ms", "tuned ms", "ratio");
    struct Setting {
      int64_t flush;
      bool warm;  // the task's activations read after the flush (MeasureOptions::warm_inputs)
    };
    for (Setting setting : {Setting{0, false}, Setting{int64_t(4) << 20, false},
                            Setting{int64_t(64) << 20, false}, Setting{int64_t(64) << 20, true}}) {
      int64_t flush = setting.flush;
      std::vector<double> a, b;
      tune::MeasureOptions m;
      m.threads = threads;
      m.flush_bytes = flush;
      if (setting.warm) m.warm_inputs = task->warm_inputs;
      m.repeat = 9;
      for (int r = 0; r < rounds; ++r) {
        tune::Measurement x = tune::measure_candidate(options.target, base.flat, inputs, {}, m);
        tune::Measurement y = tune::measure_candidate(options.target, tuned.flat, inputs, {}, m);
        if (!x.ok() || !y.ok()) throw std::runtime_error("a measurement failed: " + x.error + y.error);
        a.push_back(driver::median(x.times_ms));
        b.push_back(driver::median(y.times_ms));
      }
      double ma = driver::median(a), mb = driver::median(b);
      std::printf("%-12s %12.4f %12.4f %7.2fx\n",
                  (std::to_string(flush / 1024) + (setting.warm ? " warm" : "")).c_str(), ma, mb, mb / ma);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessel_tune_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
