// tessel._driver: the compiler driver for Python (pybind11). The same driver
// functions the `tessel` command calls: load_graph and compile_graph, the JIT
// model, export_shared_library, print_inspection and run_check. The Python
// side (python/tessel/driver.py) wraps these in the documented API.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>

#include "ir/core/diagnostics.h"
#include "src/driver/check_job.h"
#include "src/driver/compile_model.h"
#include "src/driver/fusion_report/report_writers.h"
#include "src/driver/inspect.h"
#include "src/driver/pipeline.h"
#include "src/driver/targets.h"
#include "src/driver/tune_session.h"
#include "tessel/error.h"

namespace py = pybind11;

namespace tessel::python {

namespace {

using Shapes = std::map<std::string, std::vector<int64_t>>;

driver::PipelineOptions pipeline_options(const Shapes& input_shapes) {
  driver::PipelineOptions o;
  for (const auto& [name, dims] : input_shapes) o.import.input_shapes[name] = Dims(dims.begin(), dims.end());
  return o;
}

driver::CompileOptions compile_options(const std::string& target, const std::string& fusion,
                                       const std::string& schedule, const std::string& tuning_log = "") {
  driver::CompileOptions o;
  o.fusion = passes::parse_fusion_policy(fusion);
  o.schedule = driver::parse_schedule_kind(schedule);
  o.target = driver::served_target(target);  // refused before any work, as the CLI does
  if (!tuning_log.empty()) {
    TESSEL_USER_CHECK(o.schedule == driver::ScheduleKind::kDefault, Span{})
        << "a tuning log replaces default schedules: it does not go with schedule='none'";
    std::ostringstream notes;
    o.tuned = std::make_shared<const driver::TunedSchedules>(driver::load_tuned_schedules(tuning_log, o.target, notes));
  }
  return o;
}

// numpy's name for a dtype; bf16 has none.
std::string numpy_dtype(DType t) {
  switch (t) {
    case DType::kF32: return "float32";
    case DType::kF16: return "float16";
    case DType::kF64: return "float64";
    case DType::kI8: return "int8";
    case DType::kU8: return "uint8";
    case DType::kI32: return "int32";
    case DType::kI64: return "int64";
    case DType::kBool: return "bool";
    case DType::kI16: return "int16";
    case DType::kU16: return "uint16";
    case DType::kU32: return "uint32";
    case DType::kU64: return "uint64";
    default: break;  // bf16 and the storage-only types
  }
  TESSEL_USER_CHECK(false, Span{}) << dtype_name(t) << " tensors have no numpy type";
  return "";
}

Tensor to_tensor(const rt::TensorSpec& spec, const py::handle& value) {
  DType dtype = DType(spec.dtype);
  py::array array = py::array::ensure(value, py::array::c_style);
  TESSEL_USER_CHECK(array, Span{}) << "input '" << spec.name << "' is not an array";
  TESSEL_USER_CHECK(array.dtype().is(py::dtype(numpy_dtype(dtype))), Span{})
      << "input '" << spec.name << "': expected dtype " << numpy_dtype(dtype) << ", got "
      << std::string(py::str(array.dtype())) << " (convert with .astype)";
  Dims shape(array.shape(), array.shape() + array.ndim());
  Tensor t(dtype, shape);
  std::memcpy(t.raw(), array.data(), t.nbytes());
  return t;
}

py::array to_array(const Tensor& t) {
  py::array array(py::dtype(numpy_dtype(t.dtype())), std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
  std::memcpy(array.mutable_data(), t.raw(), t.nbytes());
  return array;
}

py::list specs(const std::vector<rt::TensorSpec>& list) {
  py::list out;
  for (const rt::TensorSpec& s : list)
    out.append(py::make_tuple(s.name, numpy_dtype(DType(s.dtype)), py::tuple(py::cast(s.shape))));
  return out;
}

// A model compiled in this process: the graph outlives the JIT model, and
// export compiles the file again (compile_graph rewrites its graph).
class Compiled {
 public:
  Compiled(std::string path, const Shapes& shapes, const std::string& target, const std::string& fusion,
           const std::string& schedule, const std::string& tuning_log)
      : path_(std::move(path)),
        pipeline_(pipeline_options(shapes)),
        options_(compile_options(target, fusion, schedule, tuning_log)) {
    graph_ = std::make_unique<graph::Graph>(driver::load_graph(path_, pipeline_));
    model_ = std::make_unique<driver::JitModel>(driver::compile_graph(*graph_, options_));
  }

  py::list inputs() const { return specs(model_->inputs()); }
  py::list outputs() const { return specs(model_->outputs()); }

  py::dict run(const py::dict& feeds) {
    std::vector<Tensor> inputs;
    for (const rt::TensorSpec& spec : model_->inputs()) {
      TESSEL_USER_CHECK(feeds.contains(spec.name), Span{}) << "no value for input '" << spec.name << "'";
      inputs.push_back(to_tensor(spec, feeds[py::str(spec.name)]));
    }
    TESSEL_USER_CHECK(feeds.size() == inputs.size(), Span{})
        << "the model takes " << inputs.size() << " inputs, got " << feeds.size() << " (an unknown name?)";
    std::vector<Tensor> outputs;
    {
      py::gil_scoped_release release;
      outputs = model_->run(inputs);
    }
    py::dict result;
    for (size_t i = 0; i < outputs.size(); ++i) result[py::str(model_->outputs()[i].name)] = to_array(outputs[i]);
    return result;
  }

  py::list kernels() const {
    py::list out;
    for (const driver::KernelInfo& k : model_->kernels()) out.append(py::make_tuple(k.name, k.flops, k.bytes));
    return out;
  }

  void export_library(const std::string& output) {
    py::gil_scoped_release release;
    graph::Graph g = driver::load_graph(path_, pipeline_);
    driver::export_shared_library(driver::compile_graph(g, options_), output);
  }

 private:
  std::string path_;
  driver::PipelineOptions pipeline_;
  driver::CompileOptions options_;
  std::unique_ptr<graph::Graph> graph_;
  std::unique_ptr<driver::JitModel> model_;
};

std::string inspect(const std::string& path, const Shapes& shapes) {
  graph::Graph g = driver::load_graph(path, pipeline_options(shapes));
  std::ostringstream os;
  driver::print_inspection(g, os);
  return os.str();
}

// (failures, report): the report `tessel check` prints.
py::tuple check(const std::string& path, const Shapes& shapes, const std::string& target, const std::string& fusion,
                const std::string& schedule, bool per_kernel, uint64_t seed, double tolerance,
                const std::string& tuning_log) {
  driver::CheckOptions o;
  o.compile = compile_options(target, fusion, schedule, tuning_log);
  o.per_kernel = per_kernel;
  o.seed = seed;
  o.tolerance = tolerance;
  graph::Graph g = driver::load_graph(path, pipeline_options(shapes));
  std::ostringstream os;
  int failures = driver::run_check(g, o, os);
  return py::make_tuple(failures, os.str());
}

// The report as report.json holds it (a JSON text); written to output_dir
// too when it is not empty.
std::string fusion_report(const std::string& path, const Shapes& shapes, const std::string& target,
                          const std::vector<std::string>& policies, int threads, int repeat, uint64_t seed,
                          const std::string& output_dir, const std::string& tuning_log) {
  driver::FusionReportOptions o;
  o.pipeline = pipeline_options(shapes);
  o.target = driver::served_target(target);
  if (!policies.empty()) {
    o.policies.clear();
    for (const std::string& p : policies) o.policies.push_back(passes::parse_fusion_policy(p));
  }
  if (!tuning_log.empty()) {
    std::ostringstream notes;
    o.tuned = std::make_shared<const driver::TunedSchedules>(driver::load_tuned_schedules(tuning_log, o.target, notes));
    if (policies.empty()) o.policies.push_back(passes::FusionPolicy::kTuned);
  }
  TESSEL_USER_CHECK(threads >= 0 && threads <= 1024, Span{}) << "threads must be 0 (the default) to 1024";
  o.threads = threads;
  o.repeat = repeat;
  o.seed = seed;
  py::gil_scoped_release release;
  std::ostringstream progress;
  driver::FusionReport report = driver::make_fusion_report(path, o, progress);
  if (!output_dir.empty()) driver::write_fusion_report(report, output_dir);
  return driver::fusion_report_json(report).dump();
}

// `tessel tune`: progress on stderr; the summary as a dict.
py::dict tune(const std::string& path, const Shapes& shapes, const std::string& target,
              const std::string& fusion, const std::string& log, int trials, int per_round, int threads,
              uint64_t seed, bool resume, const std::string& search, const std::string& cost_model,
              const std::string& save_cost_model, const std::string& events, const std::string& layouts,
              bool model_check) {
  TESSEL_USER_CHECK(search == "model" || search == "random", Span{}) << "search is 'model' or 'random', not " << search;
  TESSEL_USER_CHECK(layouts == "search" || layouts == "default", Span{})
      << "layouts is 'search' or 'default', not " << layouts;
  TESSEL_USER_CHECK(threads >= 0 && threads <= 1024, Span{}) << "threads must be 0 (every core) to 1024";
  driver::TuneOptions o;
  o.model_path = path;
  o.pipeline = pipeline_options(shapes);
  o.compile = compile_options(target, fusion, "default");
  if (threads > 0) o.compile.target.cpu.cores = threads;
  o.measure.threads = std::max(1, o.compile.target.cpu.cores);
  int64_t l2 = o.compile.target.cpu.l2_bytes > 0 ? o.compile.target.cpu.l2_bytes : int64_t(1) << 20;
  o.measure.flush_bytes = 4 * l2;
  o.log_path = log;
  o.trials = trials;
  o.per_round = per_round;
  o.seed = seed;
  o.resume = resume;
  o.random_search = search == "random";
  o.search_layouts = layouts == "search";
  o.check_in_model = model_check;
  o.cost_model_in = cost_model;
  o.cost_model_out = save_cost_model;
  o.events_path = events;
  driver::TuneSummary summary;
  {
    py::gil_scoped_release release;
    summary = driver::run_tuning(o, std::cerr);
  }
  py::list tasks;
  for (const driver::TunedTask& t : summary.tasks) {
    py::dict d;
    d["key"] = t.key, d["name"] = t.name, d["runs"] = t.weight, d["flops"] = t.flops;
    d["default_ms"] = t.default_ms, d["best_ms"] = t.best_ms, d["applied_ms"] = t.applied_ms();
    d["trials"] = t.trials, d["errors"] = t.errors, d["alternative_only"] = t.alternative_only;
    d["left_out"] = t.left_out;
    tasks.append(d);
  }
  py::list decisions;
  for (const tune::FusionRecord& f : summary.fusion) {
    py::dict d;
    d["choice"] = f.take_alternative ? "aggressive" : "default";
    d["default_ms"] = f.base_ms, d["aggressive_ms"] = f.alternative_ms;
    d["default_ops"] = f.base_ops, d["aggressive_ops"] = f.alternative_ops;
    decisions.append(d);
  }
  py::list layout_decisions;
  for (const tune::LayoutRecord& l : summary.layouts) {
    py::list measured;
    for (const tune::LayoutOption& m : l.measured) {
      py::dict d;
      d["form"] = m.form, d["align"] = m.align, d["ms"] = m.ms;
      measured.append(d);
    }
    py::dict d;
    d["conv"] = l.conv, d["choice"] = l.choice, d["measured"] = measured;
    layout_decisions.append(d);
  }
  py::dict out;
  out["tasks"] = tasks;
  out["fusion"] = decisions;
  out["layouts"] = layout_decisions;
  out["trials"] = summary.trials;
  out["interrupted"] = summary.interrupted;
  out["seconds"] = summary.seconds;
  out["default_ms"] = summary.default_ms();
  out["tuned_ms"] = summary.tuned_ms();
  const driver::ModelCheck& c = summary.model_check;
  if (c.passes > 0) {
    py::dict check;
    check["default_ms"] = c.default_ms, check["tuned_ms"] = c.tuned_ms;
    check["checked"] = c.checked, check["left_out"] = c.left_out;
    out["in_model"] = check;
  } else {
    out["in_model"] = py::none();
  }
  out["log"] = log;
  return out;
}

}  // namespace

}  // namespace tessel::python

PYBIND11_MODULE(_driver, m) {
  using namespace tessel::python;
  m.doc() = "Tessel's compiler driver (use the tessel package's functions, not this module)";
  static py::exception<tessel::UserError> user_error(m, "UserError", PyExc_ValueError);
  static py::exception<tessel::InternalError> internal_error(m, "InternalError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tessel::UserError& e) {
      user_error(e.what());
    } catch (const tessel::InternalError& e) {
      internal_error(e.what());
    }
  });
  py::class_<Compiled>(m, "Compiled")
      .def(py::init<std::string, const Shapes&, std::string, std::string, std::string, std::string>())
      .def_property_readonly("inputs", &Compiled::inputs)
      .def_property_readonly("outputs", &Compiled::outputs)
      .def_property_readonly("kernels", &Compiled::kernels)
      .def("run", &Compiled::run)
      .def("export_library", &Compiled::export_library);
  m.def("inspect", &inspect);
  m.def("check", &check);
  m.def("fusion_report", &fusion_report);
  m.def("tune", &tune);
}
