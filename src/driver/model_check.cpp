#include "src/driver/model_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <memory>
#include <sstream>

#include "src/driver/pipeline.h"
#include "src/driver/run_inputs.h"
#include "src/driver/targets.h"
#include "src/driver/tune_session.h"
#include "src/driver/tuned_schedules.h"
#include "src/driver/tuning_tasks.h"
#include "tuner/measure/isolated.h"
#include "tuner/median.h"

namespace tessel::driver {

namespace {

// The two libraries run in alternation one run at a time (A B, B A, ...)
// for about kCheckMs, within kMinRuns and kMaxRuns runs each; a kernel's
// time in place is the median of its runs. Runs a millisecond apart see the
// same machine: in rounds of many runs each, a shared host's drift from one
// round to the next was larger than the gains being judged, and kernels
// that measured faster there ran slower beside their default.
constexpr double kCheckMs = 3600;
constexpr int kMinRuns = 10, kMaxRuns = 400;
constexpr int kMaxPasses = 3;
constexpr double kTimeoutS = 900;

double sum_ms(const PlacedTimes& times, const std::function<bool(const PlacedKernel&)>& which,
              size_t* count) {
  double total = 0;
  *count = 0;
  for (const PlacedKernel& k : times.kernels)
    if (which(k)) {
      total += k.ms;
      ++*count;
    }
  return total;
}

bool computes(const PlacedKernel& k, const std::string& conv) {
  return std::any_of(k.convs.begin(), k.convs.end(), [&](const auto& c) { return c.first == conv; });
}

// Each conv's layout in a library (its first kernel's).
std::map<std::string, lower::ConvLayout> conv_layouts(const PlacedTimes& times) {
  std::map<std::string, lower::ConvLayout> out;
  for (const PlacedKernel& k : times.kernels)
    for (const auto& [conv, layout] : k.convs) out.emplace(conv, layout);
  return out;
}

}  // namespace

std::vector<tune::InModelRecord> judge_in_model(const PlacedTimes& by_default, const PlacedTimes& tuned,
                                                const TunedTraces& traces, std::set<std::string>& checked) {
  std::map<std::string, lower::ConvLayout> relaid, defaults = conv_layouts(by_default);
  for (const auto& [conv, layout] : conv_layouts(tuned)) {
    auto it = defaults.find(conv);
    if (it != defaults.end() && !(it->second == layout)) relaid[conv] = layout;
  }
  std::vector<tune::InModelRecord> out;
  auto judge = [&](tune::InModelRecord r, const std::function<bool(const PlacedKernel&)>& on_default_side,
                   const std::function<bool(const PlacedKernel&)>& on_tuned_side, bool same_count) {
    size_t nd = 0, nt = 0;
    r.default_ms = sum_ms(by_default, on_default_side, &nd);
    r.tuned_ms = sum_ms(tuned, on_tuned_side, &nt);
    if (nd == 0 || nt == 0 || (same_count && nd != nt) || r.default_ms <= 0 || r.tuned_ms <= 0) return;
    r.kept = r.tuned_ms < r.default_ms;
    out.push_back(std::move(r));
  };
  for (const auto& [conv, layout] : relaid) {
    std::string key = "conv " + conv;
    if (checked.count(key)) continue;
    tune::InModelRecord r;
    r.conv = conv;
    r.form = lower::conv_form_name(layout.form);
    r.align = layout.flat_align;
    auto on_either = [&conv](const PlacedKernel& k) { return computes(k, conv); };
    size_t before = out.size();
    judge(std::move(r), on_either, on_either, /*same_count=*/false);
    if (out.size() > before) checked.insert(key);
  }
  auto relays = [&relaid](const PlacedKernel& k) {
    return std::any_of(k.convs.begin(), k.convs.end(),
                       [&](const auto& c) { return relaid.count(c.first) > 0; });
  };
  for (const auto& [task, trace] : traces) {
    std::string key = "task " + task + " " + trace;
    if (checked.count(key)) continue;
    tune::InModelRecord r;
    r.task = task;
    r.trace = trace;
    size_t before = out.size();
    judge(
        std::move(r), [&task](const PlacedKernel& k) { return k.task == task; },
        [&](const PlacedKernel& k) { return k.task == task && !relays(k); }, /*same_count=*/true);
    if (out.size() > before) checked.insert(key);
  }
  return out;
}

namespace {

struct Library {
  std::unique_ptr<graph::Graph> graph;  // outlives the model compiled from it
  std::unique_ptr<JitModel> model;
  PlacedTimes placed;
};

Library compile_library(const TuneOptions& o, std::shared_ptr<const TunedSchedules> tuned) {
  Library l;
  l.graph = std::make_unique<graph::Graph>(load_graph(o.model_path, o.pipeline));
  CompileOptions c = o.compile;
  // Without the log, fusion tuned has no decisions: its default is default's groups.
  if (!tuned && c.fusion == passes::FusionPolicy::kTuned) c.fusion = passes::FusionPolicy::kDefault;
  c.tuned = std::move(tuned);
  CompiledGraph compiled = compile_graph(*l.graph, c);
  l.placed.kernels.resize(compiled.kernels.size());
  for (const TuningTask& t : extract_tasks(compiled))
    for (size_t k : t.kernels) {
      l.placed.kernels.at(k).task = t.key;
      l.placed.kernels[k].name = t.name;
    }
  for (size_t k = 0; k < compiled.kernels.size(); ++k)
    l.placed.kernels[k].convs = compiled.kernels[k].conv_layouts;
  l.model = std::make_unique<JitModel>(std::move(compiled));
  l.model->set_num_threads(o.measure.threads);
  return l;
}

std::string one_field(std::string s) {
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c == '\t' || c == '\n'; }, ' ');
  return s.empty() ? "-" : s;
}

// In the child: both libraries compiled and run in alternation; per library
// a line "end <ms>", then a line per kernel: ms, task, name and its convs,
// tab-separated.
std::string time_in_child(const TuneOptions& o, std::shared_ptr<const TunedSchedules> tuned) {
  Library libs[2] = {compile_library(o, nullptr), compile_library(o, std::move(tuned))};
  std::vector<Tensor> inputs = random_inputs(libs[0].model->inputs(), o.seed);
  auto start = std::chrono::steady_clock::now();
  for (Library& l : libs) l.model->run(inputs);
  double both_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  int runs = std::clamp(int(std::ceil(kCheckMs / std::max(both_ms, 1e-3))), kMinRuns, kMaxRuns);
  std::vector<std::vector<double>> samples[2];  // per library, per kernel: ms of each run
  std::vector<double> totals[2];
  for (int r = 0; r < runs; ++r)
    for (int i = 0; i < 2; ++i) {
      int which = (r + i) % 2;
      std::vector<double> seconds;
      auto begin = std::chrono::steady_clock::now();
      libs[which].model->run(inputs, &seconds);
      totals[which].push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count());
      samples[which].resize(seconds.size());
      for (size_t k = 0; k < seconds.size(); ++k) samples[which][k].push_back(seconds[k] * 1e3);
    }
  std::vector<double> in_place[2];
  double end_to_end[2] = {tune::median(totals[0]), tune::median(totals[1])};
  for (int which = 0; which < 2; ++which)
    for (const std::vector<double>& kernel : samples[which]) in_place[which].push_back(tune::median(kernel));
  std::ostringstream text;
  text << std::setprecision(9);
  for (int which = 0; which < 2; ++which) {
    const PlacedTimes& placed = libs[which].placed;
    TESSEL_ICHECK(placed.kernels.size() == in_place[which].size())
        << "a profile's kernels are not the compiled ones";
    text << "end " << end_to_end[which] << "\n";
    for (size_t k = 0; k < placed.kernels.size(); ++k) {
      const PlacedKernel& pk = placed.kernels[k];
      text << in_place[which][k] << "\t" << one_field(pk.task) << "\t" << one_field(pk.name);
      for (const auto& [conv, layout] : pk.convs)
        text << "\t" << one_field(conv) << "\t" << lower::conv_form_name(layout.form) << "\t"
             << layout.flat_align;
      text << "\n";
    }
  }
  return text.str();
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, '\t');) out.push_back(field);
  return out;
}

// The child's text back into the two libraries' times (the default's first).
void parse_times(const std::string& text, PlacedTimes (&times)[2]) {
  std::istringstream in(text);
  int which = -1;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("end ", 0) == 0) {
      TESSEL_ICHECK(++which < 2) << "the check's child returned more than two libraries";
      times[which].end_to_end_ms = std::stod(line.substr(4));
      continue;
    }
    std::vector<std::string> f = split_tabs(line);
    TESSEL_ICHECK(which >= 0 && f.size() >= 3 && (f.size() - 3) % 3 == 0)
        << "a malformed kernel line: " << line;
    PlacedKernel k{f[1], f[2], {}, std::stod(f[0])};
    for (size_t i = 3; i < f.size(); i += 3) {
      std::optional<lower::ConvForm> form = lower::conv_form_named(f[i + 1]);
      TESSEL_ICHECK(form.has_value()) << "an unknown conv form " << f[i + 1];
      k.convs.push_back({f[i], lower::ConvLayout{*form, std::stoll(f[i + 2])}});
    }
    times[which].kernels.push_back(std::move(k));
  }
  TESSEL_ICHECK(which == 1) << "the check's child returned " << which + 1 << " libraries";
}

std::string kernel_name(const PlacedTimes& times, const tune::InModelRecord& r) {
  for (const PlacedKernel& k : times.kernels)
    if (r.is_layout() ? computes(k, r.conv) : k.task == r.task) return k.name;
  return "";
}

void print_pass(int pass, const PlacedTimes (&times)[2], const std::vector<tune::InModelRecord>& records,
                std::ostream& out) {
  size_t left_out =
      size_t(std::count_if(records.begin(), records.end(), [](const auto& r) { return !r.kept; }));
  out << std::fixed << std::setprecision(3) << "in the model, pass " << pass << ": default "
      << times[0].end_to_end_ms << " ms, tuned " << times[1].end_to_end_ms << " ms (" << std::setprecision(2)
      << times[0].end_to_end_ms / times[1].end_to_end_ms << "x); " << records.size() << " decisions checked, "
      << left_out << " left out\n"
      << std::setprecision(4);
  for (const tune::InModelRecord& r : records) {
    if (r.kept) continue;
    out << "  " << (r.is_layout() ? r.conv + " " + r.form : "task " + r.task) << " ("
        << kernel_name(times[1], r) << "): " << r.tuned_ms << " ms in place, default " << r.default_ms
        << " ms: left out\n";
  }
  out << std::defaultfloat << std::setprecision(6) << std::flush;
}

}  // namespace

ModelCheck check_decisions_in_model(const TuneOptions& o, tune::TuningLogWriter& log, std::ostream& out) {
  ModelCheck result;
  std::set<std::string> checked;
  for (int pass = 1; pass <= kMaxPasses; ++pass) {
    std::ostringstream notes;
    auto tuned =
        std::make_shared<const TunedSchedules>(load_tuned_schedules(o.log_path, o.compile.target, notes));
    TunedTraces traces;
    for (const auto& [task, schedule] : tuned->tasks)
      if (schedule.tuned) traces[task] = schedule.trace;
    tune::IsolatedResult child = tune::run_isolated([&] { return time_in_child(o, tuned); }, kTimeoutS);
    if (!child.ok) {
      result.error = child.error;
      out << "in the model, pass " << pass << ": not measured (" << child.error << "); the decisions stay\n";
      return result;
    }
    PlacedTimes times[2];
    parse_times(child.output, times);
    std::vector<tune::InModelRecord> records = judge_in_model(times[0], times[1], traces, checked);
    size_t left_out = 0;
    for (tune::InModelRecord& r : records) {
      r.target = log_target(o.compile.target);
      r.compiler_version = compiler_version();
      log.append(r);
      left_out += !r.kept;
    }
    print_pass(pass, times, records, out);
    result.passes = pass;
    result.default_ms = times[0].end_to_end_ms;
    result.tuned_ms = times[1].end_to_end_ms;
    result.checked += records.size();
    result.left_out += left_out;
    if (left_out == 0) break;  // what was measured is what the log compiles now
  }
  return result;
}

}  // namespace tessel::driver
