// Helpers of the elementwise/movement lowering tests: a small graph lowered
// node by node into one LowerContext, run with the tensor IR interpreter and
// compared with the reference executor; random tensors; attribute lists.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/graph/graph.h"
#include "ir/graph/op_registry.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/interpreter.h"
#include "ir/tensor/verifier.h"
#include "schedules/defaults/cpu_layouts.h"
#include "src/lower/op_lowering.h"
#include "src/reference/executor.h"

namespace tessel::lower_elem_test {

// Uniform in [lo, hi] (integers: whole numbers; bool: a coin flip).
inline Tensor random_tensor(DType dtype, const Dims& shape, double lo = -3, double hi = 3,
                            uint32_t seed = 1) {
  std::mt19937 rng(seed * 7919u + uint32_t(shape.size()));
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::kBool)
      t.set_i64(i, rng() & 1);
    else if (is_float(dtype))
      t.set_f64(i, std::uniform_real_distribution<double>(lo, hi)(rng));
    else
      t.set_i64(i, std::uniform_int_distribution<int64_t>(int64_t(lo), int64_t(hi))(rng));
  }
  return t;
}

inline Tensor values_of(DType dtype, const Dims& shape, const std::vector<double>& v) {
  Tensor t(dtype, shape);
  EXPECT_EQ(size_t(t.numel()), v.size()) << "literal of the wrong size";
  for (size_t i = 0; i < v.size() && int64_t(i) < t.numel(); ++i) t.set_f64(int64_t(i), v[i]);
  return t;
}

inline Tensor ints(const std::vector<int64_t>& v) {
  return Tensor::from_i64(v);
}

inline graph::Attrs attrs_of(std::initializer_list<std::pair<const char*, graph::AttrValue>> list) {
  graph::Attrs a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}

// One operand of a test node: a run-time input, a constant, or omitted.
struct Arg {
  std::optional<Tensor> value;
  bool constant = false;
};
inline Arg in(Tensor t) {
  return {std::move(t), false};
}
inline Arg constant(Tensor t) {
  return {std::move(t), true};
}
inline Arg omitted() {
  return {};
}

struct Lowered {
  tir::PrimFunc func;
  std::vector<Tensor> args;  // the interpreter's inputs, in func->inputs order
};

// Lowers every node of g into one function: graph inputs and constants become
// parameters (in that order), graph outputs are named out0, out1, ...
// With constants_as_params false, constants reach the lowerings only through
// the node (their TensorExpr is empty). Layouts: the default CPU schedule's
// for 16 lanes, as the compiler has them, unless given.
inline Lowered lower_graph(const graph::Graph& g, const std::vector<Tensor>& inputs,
                           bool constants_as_params = true,
                           const lower::LayoutChoices& layouts = sched::default_cpu_layouts({})) {
  lower::LowerContext ctx("f", layouts);
  std::map<const graph::Value*, lower::TensorExpr> env;
  Lowered out;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const graph::Value* v = g.inputs()[i];
    env[v] = ctx.input(v->name, v->type.dtype, v->type.static_dims());
    out.args.push_back(inputs[i]);
  }
  for (const graph::Value* c : g.constants()) {
    if (!constants_as_params) continue;
    env[c] = ctx.input(c->name, c->constant->dtype(), c->constant->shape());
    out.args.push_back(*c->constant);
  }
  for (const graph::Node* n : g.nodes()) {
    std::vector<lower::TensorExpr> ins;
    for (const graph::Value* v : n->inputs) ins.push_back(v && env.count(v) ? env[v] : lower::TensorExpr{});
    std::vector<lower::TensorExpr> outs = lower::lower_node(ctx, *n, ins);
    for (size_t k = 0; k < outs.size(); ++k) env[n->outputs[k]] = outs[k];
  }
  for (size_t k = 0; k < g.outputs().size(); ++k)
    ctx.output("out" + std::to_string(k), env.at(g.outputs()[k]));
  out.func = ctx.finish();
  return out;
}

// Blocks of the function other than the root.
inline int count_blocks(const tir::PrimFunc& f) {
  int n = 0;
  tir::walk(f->body, [&n](const tir::Stmt& s) {
    if (s->kind == tir::StmtKind::kBlock && s.as<tir::BlockNode>()->name != "root") ++n;
    return true;
  });
  return n;
}

// Exact for integers and bool; floats within rel (relative, with the same
// floor as absolute) and NaN matching NaN.
inline void expect_same(const Tensor& want, const Tensor& got, double rel, const std::string& what) {
  ASSERT_EQ(dtype_name(want.dtype()), dtype_name(got.dtype())) << what;
  ASSERT_EQ(dims_str(want.shape()), dims_str(got.shape())) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (!is_float(want.dtype())) {
      ASSERT_EQ(want.get_i64(i), got.get_i64(i)) << what << " element " << i;
      continue;
    }
    double a = want.get_f64(i), b = got.get_f64(i);
    if (std::isnan(a) || std::isnan(b)) {
      ASSERT_EQ(std::isnan(a), std::isnan(b)) << what << " element " << i << ": " << a << " vs " << b;
      continue;
    }
    if (std::isinf(a) || rel == 0) {
      ASSERT_EQ(a, b) << what << " element " << i;
      continue;
    }
    ASSERT_LE(std::fabs(a - b), rel * std::max(1e-3, std::fabs(a)))
        << what << " element " << i << ": " << a << " vs " << b;
  }
}

// The run of a whole graph: interpreter against reference executor.
inline void check_graph(const graph::Graph& g, const std::vector<Tensor>& inputs, double rel,
                        const std::string& what, bool constants_as_params = true) {
  std::vector<Tensor> want = reference::Executor(g).run(inputs);
  Lowered l = lower_graph(g, inputs, constants_as_params);
  std::vector<std::string> problems = tir::verify_problems(l.func);
  EXPECT_TRUE(problems.empty()) << what << ": " << problems.front();
  std::vector<Tensor> got = tir::interpret(l.func, l.args);
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t k = 0; k < want.size(); ++k)
    expect_same(want[k], got[k], rel, what + " output " + std::to_string(k));
}

// One node `op` over args, with `outputs` outputs, lowered and compared.
// rel: 0 for exact (movement, integers), else the relative tolerance.
struct OneNode {
  graph::Graph g;
  graph::Node* node = nullptr;
  std::vector<Tensor> inputs;

  OneNode(const std::string& op, const std::vector<Arg>& args, graph::Attrs attrs = {}, int outputs = 1) {
    std::vector<graph::Value*> values;
    for (size_t i = 0; i < args.size(); ++i) {
      const Arg& a = args[i];
      std::string name = "x" + std::to_string(i);
      if (!a.value) {
        values.push_back(nullptr);
      } else if (a.constant) {
        values.push_back(g.add_constant(name, *a.value));
      } else {
        values.push_back(g.add_input(name, graph::TensorType(a.value->dtype(), a.value->shape())));
        inputs.push_back(*a.value);
      }
    }
    std::vector<std::string> names;
    for (int k = 0; k < outputs; ++k) names.push_back("y" + std::to_string(k));
    node = g.add_node(op, "n_" + op, values, names, std::move(attrs));
    graph::infer_node(*node);
    g.set_outputs(node->outputs);
  }
};

inline void check_op(const std::string& op, const std::vector<Arg>& args, graph::Attrs attrs = {},
                     double rel = 0, int outputs = 1, bool constants_as_params = true) {
  OneNode one(op, args, std::move(attrs), outputs);
  check_graph(one.g, one.inputs, rel, op, constants_as_params);
}

}  // namespace tessel::lower_elem_test
