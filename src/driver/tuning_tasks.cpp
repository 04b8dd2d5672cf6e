#include "src/driver/tuning_tasks.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <map>
#include <numeric>

#include "ir/core/diagnostics.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/structural.h"

namespace tessel::driver {

namespace {

// Blocks renamed b0, b1, ... in program order (pre-order); the root block
// keeps its name, which is how schedules find it.
class CanonicalBlockNames : public tir::StmtMutator {
 protected:
  tir::Stmt mutate_block(const tir::BlockNode& node, const tir::Stmt& self) override {
    std::string name = node.name == "root" ? node.name : "b" + std::to_string(next_++);
    tir::Stmt mutated = tir::StmtMutator::mutate_block(node, self);
    const auto& b = static_cast<const tir::BlockNode&>(*mutated);
    return make_ref<tir::BlockNode>(name, b.iter_vars, b.iter_values, b.predicate, b.reads, b.writes, b.init, b.body,
                                    b.alloc_buffers, b.annotations);
  }

 private:
  int next_ = 0;
};

std::string shortened(const std::string& name, size_t width) {
  return name.size() <= width ? name : name.substr(0, width - 3) + "...";
}

}  // namespace

tir::PrimFunc with_canonical_block_names(const tir::PrimFunc& f) {
  CanonicalBlockNames rename;
  return tir::make_prim_func(f->name, f->inputs, f->outputs, rename.mutate(f->body));
}

std::string task_key(const tir::PrimFunc& lowered) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(tir::structural_hash(lowered)));
  return text;
}

std::vector<TuningTask> extract_tasks(const CompiledGraph& compiled) {
  const std::vector<CompiledKernel>& kernels = compiled.kernels;
  std::vector<uint64_t> calls = rt::calls_per_step(compiled.plan);
  std::vector<TuningTask> tasks;
  std::map<std::string, size_t> by_key;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const CompiledKernel& k = kernels[i];
    tir::PrimFunc canonical = with_canonical_block_names(k.group.func);
    std::string key = task_key(canonical);
    auto [it, added] = by_key.emplace(key, tasks.size());
    if (added) {
      tasks.push_back({key, k.group.group.name, canonical, {}, {}, k.flops, k.bytes, {}});
      for (const graph::Value* v : k.group.inputs) tasks.back().warm_inputs.push_back(!v->is_constant());
    }
    TuningTask& task = tasks[it->second];
    // A hash collision between different functions would merge two tasks:
    // structural equality, not the hash alone, decides.
    TESSEL_ICHECK(added || tir::structural_equal(task.func, canonical))
        << "kernels " << task.name << " and " << k.group.group.name << " share the task key " << key;
    task.kernels.push_back(i);
    task.calls.push_back(i < calls.size() ? calls[i] : 1);
  }
  return tasks;
}

void print_task_table(const std::vector<TuningTask>& tasks, const ModelProfile& profile, std::ostream& out) {
  TESSEL_ICHECK(!tasks.empty() || profile.kernels.empty()) << "a profile without tasks";
  struct Row {
    const TuningTask* task;
    double per_run_ms, total_ms;
  };
  std::vector<Row> rows;
  double in_kernels = 0;
  for (const TuningTask& t : tasks) {
    std::vector<double> times;  // per call
    double total = 0;
    for (size_t j = 0; j < t.kernels.size(); ++j) {
      double ms = profile.kernels.at(t.kernels[j]).median_ms;  // all of the kernel's calls in a run
      times.push_back(ms / double(t.calls[j]));
      total += ms;
    }
    rows.push_back({&t, median(times), total});
    in_kernels += total;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.total_ms > b.total_ms; });
  size_t kernels = 0;
  for (const TuningTask& t : tasks) kernels += t.weight();
  out << tasks.size() << " tasks for " << kernels << " kernel calls per run; default schedules, "
      << profile.threads << " thread(s), medians of the profiled runs\n";
  out << std::left << std::setw(18) << "task" << std::setw(46) << "first kernel's group" << std::right
      << std::setw(5) << "runs" << std::setw(10) << "MFLOP" << std::setw(9) << "MB" << std::setw(11) << "ms/run"
      << std::setw(9) << "GFLOP/s" << std::setw(8) << "share" << "\n";
  out << std::fixed;
  for (const Row& r : rows) {
    const TuningTask& t = *r.task;
    double gflops = r.per_run_ms > 0 ? t.flops / (r.per_run_ms * 1e6) : 0;
    out << std::left << std::setw(18) << t.key << std::setw(46) << shortened(t.name, 44) << std::right
        << std::setw(5) << t.weight() << std::setprecision(2) << std::setw(10) << t.flops / 1e6 << std::setw(9)
        << t.bytes / 1e6 << std::setprecision(4) << std::setw(11) << r.per_run_ms << std::setprecision(2)
        << std::setw(9) << gflops << std::setprecision(1) << std::setw(7)
        << (in_kernels > 0 ? 100 * r.total_ms / in_kernels : 0) << "%\n";
  }
  out << std::setprecision(3) << "in kernels: " << in_kernels << " ms of an end-to-end median of "
      << profile.end_to_end.median_ms << " ms\n"
      << std::defaultfloat << std::setprecision(6);
}

}  // namespace tessel::driver
