#include "tuner/measure/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "ir/core/diagnostics.h"
#include "src/codegen/backend.h"
#include "src/runtime/gpu/gpu_runner.h"
#include "src/runtime/kernel_error.h"
#include "src/runtime/plan.h"
#include "src/runtime/runtime_symbols.h"
#include "src/runtime/thread_pool.h"
#include "tuner/measure/isolated.h"
#include "tuner/median.h"

namespace tessel::tune {

namespace {

// The child's own pool: the parent's workers do not exist in a forked child.
rt::ThreadPool* child_pool = nullptr;

void child_parallel_for(int64_t n, tessel_rt_parallel_body body, void* closure) {
  child_pool->parallel_for(n, body, closure);
}

void flush_caches(std::vector<char>& buffer) {
  if (buffer.empty()) return;
  static char value = 0;
  std::memset(buffer.data(), ++value, buffer.size());
}

volatile uint8_t warm_sink = 0;  // keeps the reads of warm_up_inputs

// Reads every cache line of the warm inputs, as the kernel that wrote them
// in a model would have left them.
void warm_up_inputs(const std::vector<Tensor>& inputs, const std::vector<bool>& warm) {
  uint8_t sum = 0;
  for (size_t i = 0; i < warm.size() && i < inputs.size(); ++i) {
    if (!warm[i]) continue;
    const auto* bytes = static_cast<const uint8_t*>(inputs[i].raw());
    for (size_t b = 0; b < inputs[i].nbytes(); b += 64) sum = uint8_t(sum + bytes[b]);
  }
  warm_sink = sum;
}

// The first element that differs by more than the tolerance, described; empty when none does.
std::string mismatch(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const MeasureOptions& o) {
  for (size_t t = 0; t < want.size(); ++t) {
    if (got[t].dtype() != want[t].dtype() || got[t].numel() != want[t].numel())
      return "output " + std::to_string(t) + " has another type or size than expected";
    for (int64_t i = 0; i < want[t].numel(); ++i) {
      double g = got[t].get_f64(i), w = want[t].get_f64(i);
      bool same = std::isnan(w) ? std::isnan(g) : std::abs(g - w) <= o.atol + o.rtol * std::abs(w);
      if (!same) {
        std::ostringstream out;
        out << "wrong output: output " << t << "[" << i << "] = " << g << ", expected " << w;
        return out.str();
      }
    }
  }
  return "";
}

// A candidate built and loaded, run on its inputs into its outputs: host
// code called directly, GPU code through its runner with the arguments kept
// on the device.
struct Loaded {
  std::unique_ptr<codegen::LoadedModule> code;
  codegen::KernelUsage usage;
  codegen::KernelFn fn = nullptr;         // host code
  std::unique_ptr<rt::ResidentCall> gpu;  // GPU code
  std::vector<Tensor> outputs;
  std::vector<void*> args;

  Loaded(const codegen::Target& target, const tir::PrimFunc& flat, const std::vector<Tensor>& inputs) {
    std::unique_ptr<codegen::Module> module = codegen::make_backend(target)->build({{"candidate", flat}});
    usage = module->usage("candidate");
    code = module->load(codegen::runtime_symbols(rt::kernel_runtime_symbols(&child_parallel_for)));
    TESSEL_USER_CHECK(inputs.size() == flat->inputs.size(), Span{})
        << "the candidate takes " << flat->inputs.size() << " inputs, " << inputs.size() << " given";
    for (const tir::Buffer& b : flat->outputs) outputs.emplace_back(b->dtype, b->shape);
    for (const Tensor& t : inputs) args.push_back(const_cast<void*>(t.raw()));
    for (Tensor& t : outputs) args.push_back(t.raw());
    if (rt::GpuRunner* runner = code->gpu_runner())
      gpu = std::make_unique<rt::ResidentCall>(*runner, runner->index("candidate"), args.data());
    else
      fn = code->lookup("candidate");
  }
  void run() {
    if (gpu) {
      gpu->enqueue();
      gpu_checked([&] { gpu->check(); });
      gpu->download_outputs(args.data());
      return;
    }
    int32_t status = fn(args.data());
    TESSEL_USER_CHECK(status == 0, Span{}) << "the candidate failed with status " << status << ": "
                                           << rt::take_kernel_error();
  }
  // Run once, its outputs checked against `expected` (none: not checked).
  void run_and_check(const std::vector<Tensor>& expected, const MeasureOptions& o) {
    run();
    std::string problem = expected.empty() ? "" : mismatch(outputs, expected, o);
    TESSEL_USER_CHECK(problem.empty(), Span{}) << problem;
  }
  // The device's errors (a failed launch, a failed run-time check) as user errors.
  template <typename Work>
  static void gpu_checked(Work work) {
    try {
      work();
    } catch (const rt::StatusError& e) {
      TESSEL_USER_ERROR(Span{}) << e.what();
    }
  }
};

// What is written between timed runs, written once already (its pages
// are faulted in then, not during the first timed run): a host buffer for
// host code, device memory for GPU code.
struct FlushBuffer {
  std::vector<char> host;
  rt::GpuDevice* gpu = nullptr;  // whose memory `device` is
  rt::DeviceBuffer device;
  uint64_t device_bytes = 0;

  FlushBuffer(Loaded& code, const codegen::Target& target, const MeasureOptions& o) {
    if (!code.gpu) {
      host.resize(size_t(std::max<int64_t>(o.flush_bytes, 0)));
      flush_caches(host);
      return;
    }
    // The emulator's device memory is this CPU's, behind its caches.
    device_bytes = uint64_t(std::max<int64_t>(target.gpu.emulated ? o.flush_bytes : o.gpu_flush_bytes, 0));
    if (device_bytes == 0) return;
    gpu = &code.code->gpu_runner()->device();
    Loaded::gpu_checked([&] {
      device = rt::DeviceBuffer(*gpu, device_bytes);
      write();
    });
  }
  // Written, and waited for: the run timed next may be queued on another
  // device object's stream (two candidates compared in one process).
  void write() {
    gpu->zero(device.get(), device_bytes);
    gpu->synchronize();
  }
};

// A user error for options no measurement can use; the warm-input flags must match the inputs.
void check_options(const MeasureOptions& o, const std::vector<Tensor>& inputs) {
  TESSEL_USER_CHECK(o.repeat >= 1 && o.threads >= 1 && o.timeout_s > 0, Span{})
      << "a measurement needs at least one run, one thread and a positive timeout";
  TESSEL_ICHECK(o.warm_inputs.empty() || o.warm_inputs.size() == inputs.size())
      << o.warm_inputs.size() << " warm-input flags for " << inputs.size() << " inputs";
}

// One timed run after the flush and warm reads a model run starts from, in
// ms: host code by the clock, GPU code by the device's events (after an L2
// flush; its inputs are not warmed: the GPU's L2 is flushed whole).
double timed_run(Loaded& code, FlushBuffer& flush, const std::vector<Tensor>& inputs,
                 const MeasureOptions& o) {
  if (code.gpu) {
    double seconds = 0;
    Loaded::gpu_checked([&] {
      if (flush.gpu) flush.write();
      seconds = code.gpu->timed_run();
    });
    return seconds * 1e3;
  }
  flush_caches(flush.host);
  warm_up_inputs(inputs, o.warm_inputs);
  auto start = std::chrono::steady_clock::now();
  code.fn(code.args.data());
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// After timed runs: a GPU's failed run-time check (host code reports its own at once).
void check_timed_runs(Loaded& code) {
  if (code.gpu) Loaded::gpu_checked([&] { code.gpu->check(); });
}

// In the child: build, run once and check, then time; the times as text.
std::string build_check_and_time(const codegen::Target& target, const tir::PrimFunc& flat,
                                 const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected,
                                 const MeasureOptions& o) {
  rt::ThreadPool pool(o.threads);
  child_pool = &pool;
  Loaded candidate(target, flat, inputs);
  FlushBuffer flush(candidate, target, o);
  candidate.run_and_check(expected, o);
  for (int r = 0; r < o.warmup; ++r) timed_run(candidate, flush, inputs, o);
  // The kernels' registers and spilled bytes, then the times.
  std::ostringstream times;
  times << candidate.usage.max_registers << " " << candidate.usage.spill_bytes << " ";
  for (int r = 0; r < o.repeat; ++r) times << timed_run(candidate, flush, inputs, o) << " ";
  check_timed_runs(candidate);
  return times.str();
}

// In the child: both built, checked and warmed up, then timed in pairs, the
// order swapped every pair; each pair's candidate / baseline as text.
std::string compare_in_child(const codegen::Target& target, const tir::PrimFunc& baseline,
                             const tir::PrimFunc& candidate, const std::vector<Tensor>& inputs,
                             const std::vector<Tensor>& expected, const MeasureOptions& o) {
  rt::ThreadPool pool(o.threads);
  child_pool = &pool;
  Loaded code[2] = {Loaded(target, baseline, inputs), Loaded(target, candidate, inputs)};
  FlushBuffer flush(code[0], target, o);
  for (Loaded& c : code) c.run_and_check(expected, o);
  for (int r = 0; r < o.warmup; ++r)
    for (Loaded& c : code) timed_run(c, flush, inputs, o);
  std::ostringstream ratios;
  for (int r = 0; r < o.repeat; ++r) {
    double ms[2];
    for (int k = 0; k < 2; ++k) {
      int which = (r + k) % 2;
      ms[which] = timed_run(code[which], flush, inputs, o);
    }
    ratios << std::max(ms[1], 1e-9) / std::max(ms[0], 1e-9) << " ";
  }
  for (Loaded& c : code) check_timed_runs(c);
  return ratios.str();
}

}  // namespace

Comparison compare_with_baseline(const codegen::Target& target, const tir::PrimFunc& baseline,
                                 const tir::PrimFunc& candidate, const std::vector<Tensor>& inputs,
                                 const std::vector<Tensor>& expected, const MeasureOptions& options) {
  check_options(options, inputs);
  IsolatedResult r =
      run_isolated([&] { return compare_in_child(target, baseline, candidate, inputs, expected, options); },
                   2 * options.timeout_s);
  Comparison c;
  if (!r.ok) {
    c.error = r.error;
    return c;
  }
  std::vector<double> ratios;
  std::istringstream text(r.output);
  for (double x; text >> x;) ratios.push_back(x);
  if (ratios.empty()) {
    c.error = "no times came back";
    return c;
  }
  c.ratio = median(std::move(ratios));
  return c;
}

Measurement measure_candidate(const codegen::Target& target, const tir::PrimFunc& flat,
                              const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected,
                              const MeasureOptions& options) {
  check_options(options, inputs);
  IsolatedResult r = run_isolated([&] { return build_check_and_time(target, flat, inputs, expected, options); },
                                  options.timeout_s);
  Measurement m;
  if (!r.ok) {
    m.error = r.error;
    return m;
  }
  std::istringstream times(r.output);
  times >> m.usage.max_registers >> m.usage.spill_bytes;
  for (double t; times >> t;) m.times_ms.push_back(std::max(t, 1e-6));
  if (m.times_ms.empty()) m.error = "no times came back";
  return m;
}

std::vector<Tensor> run_once(const codegen::Target& target, const tir::PrimFunc& flat,
                             const std::vector<Tensor>& inputs, double timeout_s) {
  auto run = [&] {
    rt::ThreadPool pool(1);
    child_pool = &pool;
    Loaded candidate(target, flat, inputs);
    candidate.run();
    child_pool = nullptr;
    return std::move(candidate.outputs);
  };
  if (target.kind != codegen::TargetKind::kCuda) return run();
  IsolatedResult r = run_isolated(
      [&] {
        std::string bytes;
        for (const Tensor& t : run()) bytes.append(static_cast<const char*>(t.raw()), t.nbytes());
        return bytes;
      },
      timeout_s);
  TESSEL_USER_CHECK(r.ok, Span{}) << "the default schedule of the task did not run: " << r.error;
  std::vector<Tensor> outputs;
  size_t offset = 0;
  for (const tir::Buffer& b : flat->outputs) {
    Tensor t(b->dtype, b->shape);
    TESSEL_ICHECK(offset + t.nbytes() <= r.output.size())
        << "the child returned " << r.output.size() << " bytes";
    std::memcpy(t.raw(), r.output.data() + offset, t.nbytes());
    offset += t.nbytes();
    outputs.push_back(std::move(t));
  }
  TESSEL_ICHECK(offset == r.output.size()) << "the child returned " << r.output.size() << " bytes";
  return outputs;
}

std::vector<Tensor> random_task_inputs(const tir::PrimFunc& f, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<Tensor> out;
  for (const tir::Buffer& b : f->inputs) {
    Tensor t(b->dtype, b->shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, is_float(b->dtype) ? uniform(rng) : 0.0);
    out.push_back(std::move(t));
  }
  return out;
}

MeasureOptions checked_against(const std::vector<Tensor>& expected, MeasureOptions options) {
  double largest = 0;
  for (const Tensor& t : expected)
    for (int64_t i = 0; i < t.numel(); ++i)
      if (std::isfinite(t.get_f64(i))) largest = std::max(largest, std::abs(t.get_f64(i)));
  options.rtol = 1e-3;
  options.atol = 1e-3 * largest + 1e-6;
  return options;
}

}  // namespace tessel::tune
