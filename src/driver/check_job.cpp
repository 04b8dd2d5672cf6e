// run_check: compile, run both, compare.
#include "src/driver/check_job.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "ir/core/diagnostics.h"
#include "src/driver/run_inputs.h"
#include "src/reference/executor.h"

namespace tessel::driver {

ErrorStats error_stats(const Tensor& got, const Tensor& want) {
  TESSEL_ICHECK(got.numel() == want.numel()) << "comparing tensors of different sizes";
  double max_abs = 0, max_ref = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double a = got.get_f64(i), b = want.get_f64(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (std::isnan(a) != std::isnan(b)) return {std::numeric_limits<double>::quiet_NaN(),
                                                std::numeric_limits<double>::quiet_NaN()};
    if (a == b) {
      if (std::isfinite(b)) max_ref = std::max(max_ref, std::fabs(b));
      continue;
    }
    max_abs = std::max(max_abs, std::fabs(a - b));
    if (std::isfinite(b)) max_ref = std::max(max_ref, std::fabs(b));
  }
  double rel = max_abs == 0 ? 0 : max_ref == 0 ? std::numeric_limits<double>::infinity() : max_abs / max_ref;
  return {max_abs, rel};
}

namespace {

bool passes(const Tensor& got, const Tensor& want, const ErrorStats& e, double tolerance) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) return false;
  if (!is_float(want.dtype())) return e.max_abs == 0;
  return e.max_rel <= tolerance;  // false for NaN
}

void print_line(std::ostream& out, const std::string& what, const Tensor& got, const Tensor& want,
                const ErrorStats& e, bool ok) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  max abs err %.3e  max rel err %.3e  ", e.max_abs, e.max_rel);
  out << what << " " << want.type_str() << buf << (ok ? "ok" : "MISMATCH");
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) out << " (got " << got.type_str() << ")";
  out << "\n";
}

// Every value's reference tensor: graph inputs, constants and node outputs.
std::unordered_map<const graph::Value*, Tensor> reference_values(const graph::Graph& g,
                                                                 const std::vector<Tensor>& inputs) {
  std::unordered_map<const graph::Value*, Tensor> env;
  for (size_t i = 0; i < inputs.size(); ++i) env[g.inputs()[i]] = inputs[i];
  reference::Executor(g).run(inputs, [&](const graph::Node& n, const std::vector<Tensor>& outs) {
    for (size_t i = 0; i < outs.size() && i < n.outputs.size(); ++i)
      if (n.outputs[i]) env[n.outputs[i]] = outs[i];
  });
  return env;
}

// A kernel's output as the value it is: stored in another order, put back.
Tensor stored_back(const Tensor& result, const graph::Value& v, const Dims& shape) {
  if (v.storage.empty()) return result.reshaped(shape);
  Dims inverse(v.storage.size());
  for (size_t k = 0; k < v.storage.size(); ++k) inverse[size_t(v.storage[k])] = int64_t(k);
  return result.reshaped(graph::stored_dims(v)).permuted(inverse);
}

int check_kernels(const JitModel& model, const std::unordered_map<const graph::Value*, Tensor>& env,
                  double tolerance, std::ostream& out) {
  int failures = 0;
  const std::vector<CompiledKernel>& kernels = model.compiled_kernels();
  for (size_t k = 0; k < kernels.size(); ++k) {
    const lower::LoweredGroup& group = kernels[k].group;
    std::vector<Tensor> args;
    for (const graph::Value* v : group.inputs) {
      auto it = env.find(v);
      const Tensor& value = it != env.end() ? it->second : *v->constant;
      args.push_back(v->storage.empty() ? value : value.permuted(v->storage));  // as the kernel stores it
    }
    std::vector<Tensor> results = model.run_kernel(k, args);
    for (size_t o = 0; o < results.size(); ++o) {
      const graph::Value* v = group.outputs[o];
      const Tensor& want = env.at(v);
      Tensor got = stored_back(results[o], *v, want.shape());
      ErrorStats e = error_stats(got, want);
      bool ok = passes(got, want, e, tolerance);
      print_line(out, "kernel " + std::to_string(k) + " " + group.group.name + " -> '" + group.outputs[o]->name + "'",
                 got, want, e, ok);
      if (!ok && failures++ == 0)
        out << "  first diverging kernel: " << kernels[k].symbol << " (nodes of group " << group.group.name << ")\n";
    }
  }
  return failures;
}

}  // namespace

int run_check(graph::Graph& g, const CheckOptions& options, std::ostream& out) {
  std::vector<Tensor> inputs = random_inputs(g, options.seed);
  JitModel model(compile_graph(g, options.compile));
  out << "compiled " << model.compiled_kernels().size() << " kernels (fusion "
      << passes::fusion_policy_name(options.compile.fusion) << ", schedule "
      << schedule_kind_name(options.compile.schedule) << "); inputs seeded with " << options.seed << "\n";
  std::unordered_map<const graph::Value*, Tensor> env = reference_values(g, inputs);
  std::vector<Tensor> got = model.run(inputs);
  std::vector<Tensor> computed;
  for (const graph::Value* v : g.outputs()) {
    auto it = env.find(v);
    computed.push_back(it != env.end() ? it->second : *v->constant);
  }
  std::vector<Tensor> wanted = reference::user_outputs(g, std::move(computed));
  int failures = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const graph::Value* v = g.outputs()[i];
    const Tensor& want = wanted[i];
    ErrorStats e = error_stats(got[i], want);
    bool ok = passes(got[i], want, e, options.tolerance);
    failures += !ok;
    print_line(out, "output '" + v->name + "'", got[i], want, e, ok);
  }
  if (options.per_kernel) failures += check_kernels(model, env, options.tolerance, out);
  out << (failures == 0 ? "check passed" : "check FAILED") << " (tolerance " << options.tolerance
      << " on max|ours - reference| / max|reference|)\n";
  return failures;
}

}  // namespace tessel::driver
