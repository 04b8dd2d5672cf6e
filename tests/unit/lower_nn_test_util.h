// Helpers of the nn / reduce lowering tests: one graph node over random
// inputs (or constants), lowered to a PrimFunc with LowerContext, run with the
// tensor IR interpreter and compared with the reference executor.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/graph/op_registry.h"
#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "ir/tensor/verifier.h"
#include "schedules/defaults/cpu_layouts.h"
#include "src/lower/op_lowering.h"
#include "src/reference/executor.h"

namespace tessel::lower_nn_test {

// Uniform in [-1, 1) for floats, small integers [-5, 5] (or [0, 9]) otherwise.
inline Tensor random_tensor(DType dtype, Dims shape, uint32_t seed) {
  Tensor t(dtype, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(-5, 5), unsigned_small(0, 9), coin(0, 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (is_float(dtype))
      t.set_f64(i, real(rng));
    else if (dtype == DType::kBool)
      t.set_i64(i, coin(rng));
    else
      t.set_i64(i, dtype == DType::kU8 ? unsigned_small(rng) : small(rng));
  }
  return t;
}

// One input of the node: a run-time value (random when not given) or a constant.
struct Arg {
  Tensor value;
  bool constant = false;
  bool omitted = false;
};
inline Arg rand_arg(DType dtype, Dims shape) {
  static uint32_t seed = 1;
  return {random_tensor(dtype, std::move(shape), seed++), false, false};
}
inline Arg f32_arg(Dims shape) {
  return rand_arg(DType::kF32, std::move(shape));
}
inline Arg value_arg(Tensor t) {
  return {std::move(t), false, false};
}
inline Arg const_arg(Tensor t) {
  return {std::move(t), true, false};
}
inline Arg omitted() {
  return {Tensor(), false, true};
}

// A graph of one node named `name`; every input (constants too) is also a
// parameter of the lowered function, in node order.
struct LoweredNode {
  graph::Graph g;
  graph::Node* node = nullptr;
  std::vector<Tensor> values;  // the present inputs, in order
  tir::PrimFunc func;

  // Layouts: the default CPU schedule's for 16 lanes, as the compiler has them, unless given.
  LoweredNode(const std::string& op, const std::string& name, const std::vector<Arg>& args,
              graph::Attrs attrs = {}, int outputs = 1,
              const lower::LayoutChoices& layouts = sched::default_cpu_layouts({})) {
    std::vector<graph::Value*> in;
    for (size_t i = 0; i < args.size(); ++i) {
      std::string vname = "in" + std::to_string(i);
      if (args[i].omitted) {
        in.push_back(nullptr);
        continue;
      }
      const Tensor& t = args[i].value;
      in.push_back(args[i].constant ? g.add_constant(vname, t)
                                    : g.add_input(vname, graph::TensorType(t.dtype(), t.shape())));
    }
    std::vector<std::string> names;
    for (int i = 0; i < outputs; ++i) names.push_back("out" + std::to_string(i));
    node = g.add_node(op, name, in, names, std::move(attrs));
    graph::infer_node(*node);
    lower::LowerContext ctx(name, layouts);
    std::vector<lower::TensorExpr> exprs;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].omitted) {
        exprs.emplace_back();
        continue;
      }
      const Tensor& t = args[i].value;
      exprs.push_back(ctx.input("in" + std::to_string(i), t.dtype(), t.shape()));
      values.push_back(t);
    }
    std::vector<lower::TensorExpr> outs = lower::lower_node(ctx, *node, exprs);
    EXPECT_EQ(outs.size(), node->outputs.size());
    for (size_t i = 0; i < outs.size(); ++i) ctx.output(node->outputs[i]->name, outs[i]);
    func = ctx.finish();
  }

  std::vector<Tensor> reference() const {
    std::vector<const Tensor*> ptrs;
    size_t next = 0;
    for (const graph::Value* v : node->inputs) ptrs.push_back(v ? &values[next++] : nullptr);
    return reference::evaluate_node(*node, ptrs);
  }
  std::vector<Tensor> interpreted() const { return tir::interpret(func, values); }
  std::string text() const { return tir::to_string(func); }
};

// |got - want| <= tol * (1 + |want|) elementwise, NaN matching NaN.
inline void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int failures = 0;
  for (int64_t i = 0; i < want.numel() && failures < 5; ++i) {
    double g = got.get_f64(i), w = want.get_f64(i);
    bool same = (std::isnan(g) && std::isnan(w)) || g == w || std::abs(g - w) <= tol * (1 + std::abs(w));
    if (same) continue;
    ++failures;
    ADD_FAILURE() << what << ": element " << i << " is " << g << ", the reference says " << w;
  }
}

// Lowers, verifies, interprets and compares every output with the reference.
inline LoweredNode check_op(const std::string& op, const std::string& name, const std::vector<Arg>& args,
                            graph::Attrs attrs = {}, int outputs = 1, double tol = 1e-5,
                            const lower::LayoutChoices& layouts = sched::default_cpu_layouts({})) {
  LoweredNode n(op, name, args, std::move(attrs), outputs, layouts);
  EXPECT_EQ(tir::verify_problems(n.func), std::vector<std::string>{}) << n.text();
  std::vector<Tensor> want = n.reference();
  std::vector<Tensor> got = n.interpreted();
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    expect_close(got[i], want[i], tol, op + " output " + std::to_string(i) + "\n" + n.text());
  return n;
}

// The blocks of a function in program order (the root block left out).
inline std::vector<const tir::BlockNode*> blocks_of(const tir::PrimFunc& f) {
  std::vector<const tir::BlockNode*> out;
  std::vector<const tir::StmtNode*> work = {f->body.get()};
  while (!work.empty()) {
    const tir::StmtNode* s = work.back();
    work.pop_back();
    if (s->kind == tir::StmtKind::kFor) work.push_back(static_cast<const tir::ForNode*>(s)->body.get());
    if (s->kind == tir::StmtKind::kSeq) {
      const auto& stmts = static_cast<const tir::SeqNode*>(s)->stmts;
      for (size_t i = stmts.size(); i-- > 0;) work.push_back(stmts[i].get());
    }
    if (s->kind == tir::StmtKind::kBlock) {
      const auto* b = static_cast<const tir::BlockNode*>(s);
      if (b != f->body.get()) out.push_back(b);
      work.push_back(b->body.get());
    }
  }
  return out;
}

// "name: S S S R R" for each block (S spatial, R reduce), for structure checks.
inline std::vector<std::string> block_shapes(const tir::PrimFunc& f) {
  std::vector<std::string> out;
  for (const tir::BlockNode* b : blocks_of(f)) {
    std::string s = b->name + ":";
    for (const tir::IterVar& iv : b->iter_vars) s += iv.kind == tir::IterKind::kSpatial ? " S" : " R";
    out.push_back(s);
  }
  return out;
}

inline graph::AttrValue ints(std::vector<int64_t> v) {
  return v;
}

template <typename... Kv>
graph::Attrs attrs(Kv&&... kv) {
  graph::Attrs a;
  (a.set(kv.first, kv.second), ...);
  return a;
}
inline std::pair<std::string, graph::AttrValue> kv(std::string k, graph::AttrValue v) {
  return {std::move(k), std::move(v)};
}

}  // namespace tessel::lower_nn_test
