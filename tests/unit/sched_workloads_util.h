// Workloads of the cross-cutting schedule tests: small graphs (matmul, conv2d,
// depthwise conv2d, a sum reduction, softmax, a fused conv+bias+relu) lowered
// through lower_group like the compiler does, seeded random inputs, and the
// checks: verifier clean, interpret equal to the unscheduled function, errors by name.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/graph/graph.h"
#include "ir/graph/op_registry.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "ir/tensor/structural.h"
#include "ir/tensor/verifier.h"
#include "schedules/defaults/cpu_layouts.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/schedule.h"
#include "schedules/tree_query.h"
#include "src/passes/fusion.h"
#include "src/lower/lower_group.h"

namespace tessel::sched_workloads {

enum class Workload { kMatmul, kConv2d, kDepthwise, kReduceSum, kSoftmax, kFusedConv };
constexpr Workload kAllWorkloads[] = {Workload::kMatmul,    Workload::kConv2d,  Workload::kDepthwise,
                                      Workload::kReduceSum, Workload::kSoftmax, Workload::kFusedConv};

inline const char* workload_name(Workload w) {
  switch (w) {
    case Workload::kMatmul: return "matmul";
    case Workload::kConv2d: return "conv2d";
    case Workload::kDepthwise: return "depthwise";
    case Workload::kReduceSum: return "reduce_sum";
    case Workload::kSoftmax: return "softmax";
    case Workload::kFusedConv: return "fused_conv";
  }
  return "?";
}

// The block that does the work: the matmul, the convolution, the sum (for
// softmax the sum of exponentials; its other blocks are sm_max and sm_out; the
// fused conv's epilogue block is relu_out).
inline const char* main_block(Workload w) {
  switch (w) {
    case Workload::kMatmul: return "mm";
    case Workload::kConv2d: return "conv";
    case Workload::kDepthwise: return "dw";
    case Workload::kReduceSum: return "rsum";
    case Workload::kSoftmax: return "sm_exp_sum";
    case Workload::kFusedConv: return "conv";
  }
  return "?";
}
// How many loops the main block has as lowered, and how many of them (the outer ones) are spatial.
inline size_t main_loop_count(Workload w) {
  switch (w) {
    case Workload::kMatmul: return 3;
    case Workload::kReduceSum:
    case Workload::kSoftmax: return 2;
    default: return 7;
  }
}
inline size_t main_spatial_count(Workload w) {
  switch (w) {
    case Workload::kMatmul: return 2;
    case Workload::kReduceSum:
    case Workload::kSoftmax: return 1;
    default: return 4;
  }
}

// The sizes of the workloads: the defaults are the shapes the workload tests
// use; small() shrinks them for the randomised test, which runs hundreds.
struct Shapes {
  int64_t M = 32, N = 16, K = 24;         // matmul [M, K] x [K, N]
  int64_t C = 4, H = 10, W = 32, OC = 8;  // conv2d NCHW [1, C, H, W], OC 3x3 filters, pad 1 (rows of 32: not
                                          // short, so not computed flat; Shapes::small() is)
  int64_t stride = 1;                     // of the convs, in both dimensions
  int64_t rows = 8, cols = 32;            // ReduceSum over the last axis of [rows, cols]
  int64_t sm_rows = 4, sm_cols = 16;      // Softmax over the last axis
  static Shapes small() {
    Shapes s;
    s.M = 12, s.N = 8, s.K = 6;
    s.C = 2, s.H = 6, s.W = 5, s.OC = 4;
    return s;
  }
};

// The graph of one workload; every run-time operand is a graph input (so a
// parameter of the lowered function), only the ReduceSum axes are constant.
inline void build_graph(graph::Graph& g, Workload w, const Shapes& s = {}) {
  using graph::TensorType;
  auto node = [&](const std::string& op, const std::string& name, std::vector<graph::Value*> in,
                  graph::Attrs attrs = {}) {
    graph::Node* n = g.add_node(op, name, std::move(in), {name + "_out"}, std::move(attrs));
    graph::infer_node(*n);
    return n;
  };
  auto input = [&](const std::string& name, Dims shape) {
    return g.add_input(name, TensorType(DType::kF32, std::move(shape)));
  };
  graph::Attrs conv;
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv.set("strides", std::vector<int64_t>{s.stride, s.stride});
  graph::Node* out = nullptr;
  switch (w) {
    case Workload::kMatmul:
      out = node("MatMul", "mm", {input("A", {s.M, s.K}), input("B", {s.K, s.N})});
      break;
    case Workload::kConv2d:
      out = node("Conv", "conv", {input("x", {1, s.C, s.H, s.W}), input("w", {s.OC, s.C, 3, 3})}, conv);
      break;
    case Workload::kDepthwise:
      conv.set("group", s.C);
      out = node("Conv", "dw", {input("x", {1, s.C, s.H, s.W}), input("w", {s.C, 1, 3, 3})}, conv);
      break;
    case Workload::kReduceSum: {
      graph::Attrs a;
      a.set("keepdims", int64_t(0));
      out = node("ReduceSum", "rsum",
                 {input("x", {s.rows, s.cols}), g.add_constant("axes", Tensor::from_i64({-1}))}, a);
      break;
    }
    case Workload::kSoftmax: {
      graph::Attrs a;
      a.set("axis", int64_t(-1));
      out = node("Softmax", "sm", {input("x", {s.sm_rows, s.sm_cols})}, a);
      break;
    }
    case Workload::kFusedConv: {
      graph::Node* c =
          node("Conv", "conv", {input("x", {1, s.C, s.H, s.W}), input("w", {s.OC, s.C, 3, 3})}, conv);
      graph::Node* b = node("Add", "bias_add", {c->outputs[0], input("b", {1, s.OC, 1, 1})});
      out = node("Relu", "relu", {b->outputs[0]});
      break;
    }
  }
  g.set_outputs({out->outputs[0]});
}

// A freshly lowered function of the workload (each call builds and lowers
// anew, so that a trace can be replayed on a function it has never seen). The
// fused conv is grouped by the "simple" policy, which must make it one group.
inline tir::PrimFunc lower_workload(Workload w, const Shapes& shapes = {}) {
  graph::Graph g;
  build_graph(g, w, shapes);
  std::vector<passes::NodeGroup> groups = passes::make_grouping_policy(passes::FusionPolicy::kSimple)->group(g);
  EXPECT_EQ(groups.size(), 1u) << workload_name(w) << " should lower to one group";
  return lower::lower_group(g, groups.at(0), sched::default_cpu_layouts({}));
}

// Uniform in [-1, 1), seeded: one tensor per parameter of func.
inline std::vector<Tensor> random_inputs(const tir::PrimFunc& func, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<Tensor> out;
  for (const tir::Buffer& b : func->inputs) {
    Tensor t(b->dtype, b->shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dist(rng));
    out.push_back(std::move(t));
  }
  return out;
}

// "" when got matches want elementwise within 1e-5 relative (|g - w| <= 1e-5 * (1 + |w|)),
// else what differs first.
inline std::string compare_outputs(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size())
    return "output count " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    if (got[o].shape() != want[o].shape()) return "output " + std::to_string(o) + " has another shape";
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      double g = got[o].get_f64(i), w = want[o].get_f64(i);
      if (std::abs(g - w) <= 1e-5 * (1 + std::abs(w))) continue;
      return "output " + std::to_string(o) + " element " + std::to_string(i) + " is " + std::to_string(g) +
             ", unscheduled " + std::to_string(w);
    }
  }
  return "";
}

// Seeded inputs of a function and what the unscheduled function computes on them.
struct Reference {
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};
inline Reference reference_of(const tir::PrimFunc& original, uint64_t seed = 17) {
  Reference r{random_inputs(original, seed), {}};
  r.outputs = tir::interpret(original, r.inputs);
  return r;
}

// "" when the scheduled function verifies and computes the reference's
// outputs (in each thread order given), else the first problem.
inline std::string check_against(const Reference& ref, const tir::PrimFunc& scheduled, bool gpu,
                                 const std::vector<tir::ThreadOrder>& orders = {tir::ThreadOrder::kForward}) {
  tir::VerifyOptions vopts;
  vopts.allow_thread_bindings = gpu;
  std::vector<std::string> problems = tir::verify_problems(scheduled, vopts);
  if (!problems.empty()) return "verifier: " + problems[0];
  for (tir::ThreadOrder order : orders) {
    tir::InterpretOptions opts;
    opts.thread_order = order;
    opts.shuffle_seed = 5;
    std::string diff;
    try {
      diff = compare_outputs(tir::interpret(scheduled, ref.inputs, opts), ref.outputs);
    } catch (const tir::InterpreterError& e) {
      diff = std::string("interpreter: ") + e.what();
    }
    if (!diff.empty()) return "thread order " + std::to_string(int(order)) + ": " + diff;
  }
  return "";
}

// ---- Helpers of the tests that schedule through sched::Schedule

using sched::BlockRV;
using sched::LoopRV;
using sched::Schedule;
using sched::ScheduleError;

const std::vector<tir::ThreadOrder> kAllOrders = {tir::ThreadOrder::kForward, tir::ThreadOrder::kReverse,
                                                  tir::ThreadOrder::kShuffled};

// The reference of a workload at its default shapes, computed once.
inline const Reference& reference(Workload w) {
  static std::map<Workload, Reference> cache;
  auto it = cache.find(w);
  if (it == cache.end()) it = cache.emplace(w, reference_of(lower_workload(w))).first;
  return it->second;
}

// The names of the blocks of a function in program order (the root left out).
inline std::vector<std::string> block_names(const tir::PrimFunc& f) {
  std::vector<std::string> out;
  for (const tir::Stmt& b : sched::all_blocks(f))
    if (b.get() != f->body.get()) out.push_back(b.as<tir::BlockNode>()->name);
  return out;
}

// Whether `loop` binds only spatial iteration variables of `block` (or none).
inline bool loop_is_spatial(const Schedule& sch, BlockRV block, LoopRV loop) {
  tir::Stmt b_stmt = sched::find_block(sch.func(), sch.block_name(block));
  const auto& b = *b_stmt.as<tir::BlockNode>();
  const tir::VarNode* v = sch.loop(loop).var.get();
  for (size_t i = 0; i < b.iter_vars.size(); ++i) {
    if (b.iter_vars[i].kind == tir::IterKind::kSpatial) continue;
    bool uses = false;
    tir::walk_exprs(b.iter_values[i], [&](const tir::Expr& e) { uses = uses || e.get() == v; });
    if (uses) return false;
  }
  return true;
}

inline void expect_valid(const Schedule& sch, bool gpu = false) {
  tir::VerifyOptions options;
  options.allow_thread_bindings = gpu;
  for (const std::string& p : tir::verify_problems(sch.func(), options))
    ADD_FAILURE() << "verifier: " << p << "\n" << sch.func() << "\ntrace " << sch.trace().to_json();
}

// Schedules a fresh lowering of w and checks the result against the
// unscheduled function (in each thread order). Returns the schedule.
inline Schedule expect_preserved(Workload w, const std::function<void(Schedule&)>& schedule, bool gpu = false,
                                 const std::vector<tir::ThreadOrder>& orders = {tir::ThreadOrder::kForward}) {
  Schedule sch(lower_workload(w));
  try {
    schedule(sch);
  } catch (const ScheduleError& e) {
    ADD_FAILURE() << workload_name(w) << ": unexpected " << e.what() << "\n"
                  << sch.func() << "\ntrace " << sch.trace().to_json();
    return sch;
  }
  std::string problem = check_against(reference(w), sch.func(), gpu, orders);
  EXPECT_EQ(problem, "") << workload_name(w) << "\n" << sch.func() << "\ntrace " << sch.trace().to_json();
  return sch;
}

// The last primitive `schedule` applies must throw ScheduleError of `kind`
// whose message contains `substring`.
inline void expect_rejected(Workload w, const std::function<void(Schedule&)>& schedule,
                            const std::string& kind, const std::string& substring) {
  Schedule sch(lower_workload(w));
  try {
    schedule(sch);
    ADD_FAILURE() << workload_name(w) << ": expected ScheduleError " << kind << "\n" << sch.func();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), kind) << workload_name(w) << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos)
        << workload_name(w) << ": '" << substring << "' not in: " << e.what();
  }
  // The steps before the rejected one (the schedule keeps them) still compute the same.
  EXPECT_EQ(check_against(reference(w), sch.func(), true), "") << sch.func();
}

}  // namespace tessel::sched_workloads
