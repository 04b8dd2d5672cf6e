// Functions and checks for the block-primitive tests: a two-stage function
// (B = A * 2, then C = B x W), a padded 3x3 convolution, a softmax in three
// blocks, interpret-and-compare on random data, and must-fail checks.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "ir/tensor/verifier.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/primitives/loop_primitives.h"
#include "schedules/tree_query.h"
#include "src/lower/compute.h"
#include "tests/unit/tir_test_util.h"

namespace tessel::block_test {

using namespace tir;
using lower::Combiner;
using lower::LowerContext;
using lower::TensorExpr;
using sched::ScheduleError;

// B[m, k] = A[m, k] * 2 (block "B"); C[m, n] = sum_k B[m, k] * W[k, n] (block "C", the output).
inline PrimFunc make_two_stage(int64_t M, int64_t N, int64_t K) {
  LowerContext ctx("two_stage");
  TensorExpr a = ctx.input("A", DType::kF32, {M, K}), w = ctx.input("W", DType::kF32, {K, N});
  TensorExpr b = ctx.compute("B", {M, K}, DType::kF32,
                             [&](const std::vector<Expr>& i) { return a.at(i) * float_imm(2); });
  TensorExpr c = ctx.reduce("C", {M, N}, DType::kF32, {K}, Combiner::kSum,
                            [&](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                              return b.at({s[0], r[0]}) * w.at({r[0], s[1]});
                            });
  ctx.output("C", c);
  return ctx.finish();
}

// C = A x W (block "C", an intermediate), then D = max(C, 0) (block "D", the output).
inline PrimFunc make_matmul_relu(int64_t M, int64_t N, int64_t K) {
  LowerContext ctx("matmul_relu");
  TensorExpr a = ctx.input("A", DType::kF32, {M, K}), w = ctx.input("W", DType::kF32, {K, N});
  TensorExpr c = ctx.reduce("C", {M, N}, DType::kF32, {K}, Combiner::kSum,
                            [&](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                              return a.at({s[0], r[0]}) * w.at({r[0], s[1]});
                            });
  TensorExpr d = ctx.compute("D", {M, N}, DType::kF32,
                             [&](const std::vector<Expr>& i) { return max(c.at(i), float_imm(0)); });
  ctx.output("D", d);
  return ctx.finish();
}

// pad[h, w] = X[h - 1, w - 1] inside, 0 on the border (block "pad");
// Y[h, w] = sum_{kh, kw} pad[h + kh, w + kw] * F[kh, kw] (block "Y").
inline PrimFunc make_conv(int64_t H, int64_t W) {
  LowerContext ctx("conv");
  TensorExpr x = ctx.input("X", DType::kF32, {H, W}), f = ctx.input("F", DType::kF32, {3, 3});
  TensorExpr pad = ctx.compute("pad", {H + 2, W + 2}, DType::kF32, [&](const std::vector<Expr>& i) {
    Expr inside = i[0] >= int_imm(1) && i[0] <= int_imm(H) && i[1] >= int_imm(1) && i[1] <= int_imm(W);
    return select(inside, x.at({i[0] - 1, i[1] - 1}), float_imm(0));
  });
  TensorExpr y = ctx.reduce("Y", {H, W}, DType::kF32, {3, 3}, Combiner::kSum,
                            [&](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                              return pad.at({s[0] + r[0], s[1] + r[1]}) * f.at({r[0], r[1]});
                            });
  ctx.output("Y", y);
  return ctx.finish();
}

// A flat plane read back as rows: F[c, f] = X[c, f] * 2 over C rows of
// H * width positions (block "F"); Y[c, h, w] = F[c, h * width + w] + 1 for
// the first `cols` columns of each row (block "Y", the output), as a flat
// convolution's epilogue reads its rows.
inline PrimFunc make_flat_plane(int64_t C, int64_t H, int64_t cols, int64_t width) {
  LowerContext ctx("flat_plane");
  TensorExpr x = ctx.input("X", DType::kF32, {C, H * width});
  TensorExpr f = ctx.compute("F", {C, H * width}, DType::kF32,
                             [&](const std::vector<Expr>& i) { return x.at(i) * float_imm(2); });
  TensorExpr y = ctx.compute("Y", {C, H, cols}, DType::kF32, [&](const std::vector<Expr>& i) {
    return f.at({i[0], i[1] * int_imm(width) + i[2]}) + float_imm(1);
  });
  ctx.output("Y", y);
  return ctx.finish();
}

// mx[n] = max_m X[n, m] ("mx"); sm[n] = sum_m exp(X[n, m] - mx[n]) ("sm");
// out[n, m] = exp(X[n, m] - mx[n]) / sm[n] ("out").
inline PrimFunc make_softmax(int64_t N, int64_t M) {
  LowerContext ctx("softmax");
  TensorExpr x = ctx.input("X", DType::kF32, {N, M});
  TensorExpr mx = ctx.reduce("mx", {N}, DType::kF32, {M}, Combiner::kMax,
                             [&](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                               return x.at({s[0], r[0]});
                             });
  TensorExpr sm = ctx.reduce("sm", {N}, DType::kF32, {M}, Combiner::kSum,
                             [&](const std::vector<Expr>& s, const std::vector<Expr>& r) {
                               return call(Intrinsic::k_exp, {x.at({s[0], r[0]}) - mx.at({s[0]})});
                             });
  TensorExpr out = ctx.compute("out", {N, M}, DType::kF32, [&](const std::vector<Expr>& i) {
    return div(call(Intrinsic::k_exp, {x.at(i) - mx.at({i[0]})}), sm.at({i[0]}));
  });
  ctx.output("out", out);
  return ctx.finish();
}

// T[n - 1 - v] = A[v] * 3 (block "T", not written at its plain variable); O[v] = T[v] + 1 ("O").
inline PrimFunc make_reversed(int64_t n) {
  Buffer a = make_buffer("A", DType::kF32, {n}), t = make_buffer("T", DType::kF32, {n});
  Buffer o = make_buffer("O", DType::kF32, {n});
  Var i = var("i"), j = var("j"), v = var("v"), u = var("u");
  Stmt tb = make_test_block("T", {{v, {int_imm(0), int_imm(n)}, IterKind::kSpatial}}, {i}, {},
                            make_store(t, load(a, {v}) * float_imm(3), {int_imm(n - 1) - v}));
  Stmt ob = make_test_block("O", {{u, {int_imm(0), int_imm(n)}, IterKind::kSpatial}}, {j}, {},
                            make_store(o, load(t, {u}) + float_imm(1), {u}));
  Stmt body = make_seq({make_for(i, int_imm(0), int_imm(n), ForKind::kSerial, tb),
                        make_for(j, int_imm(0), int_imm(n), ForKind::kSerial, ob)});
  return make_prim_func("reversed", {a}, {o}, make_root_block(body, {t}));
}

// The variables of the loops above a block, outermost first.
inline std::vector<const VarNode*> loops_of(const PrimFunc& func, const std::string& block) {
  std::vector<const VarNode*> out;
  for (const Stmt& s : sched::loops_above(func, sched::find_block(func, block).get()))
    out.push_back(s.as<ForNode>()->var.get());
  return out;
}

inline const BlockNode& block_of(const PrimFunc& func, const std::string& name) {
  Stmt s = sched::find_block(func, name);
  EXPECT_TRUE(s.defined()) << "no block " << name << " in\n" << func;
  return *s.as<BlockNode>();
}

// The position of `buffer` among the reads of `block`.
inline int read_index(const PrimFunc& func, const std::string& block, const std::string& buffer) {
  const BlockNode& b = block_of(func, block);
  for (size_t i = 0; i < b.reads.size(); ++i)
    if (b.reads[i].buffer->name == buffer) return int(i);
  ADD_FAILURE() << block << " does not read " << buffer;
  return -1;
}

inline std::vector<Tensor> random_inputs(const PrimFunc& func, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Tensor> out;
  for (const Buffer& b : func->inputs) {
    Tensor t(b->dtype, b->shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(int64_t(rng() % 17) - 8) / 4.0);
    out.push_back(t);
  }
  return out;
}

// The scheduled function verifies and computes what the original does on
// random data (exactly, unless a tolerance is given for reordered sums).
inline void expect_equivalent(const PrimFunc& original, const PrimFunc& scheduled, double tolerance = 0,
                              const VerifyOptions& options = {}) {
  std::vector<std::string> problems = verify_problems(scheduled, options);
  for (const std::string& p : problems) ADD_FAILURE() << p << "\n" << scheduled;
  std::vector<Tensor> inputs = random_inputs(original, 11);
  std::vector<Tensor> want = interpret(original, inputs), got = interpret(scheduled, inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(want[o].shape(), got[o].shape());
    for (int64_t i = 0; i < want[o].numel(); ++i)
      ASSERT_NEAR(want[o].get_f64(i), got[o].get_f64(i), tolerance)
          << "output " << o << " element " << i << "\n"
          << scheduled;
  }
}

// f throws ScheduleError of `kind` whose message contains `substring`.
inline void expect_error(const std::function<void()>& f, const std::string& kind,
                         const std::string& substring) {
  try {
    f();
    ADD_FAILURE() << "expected ScheduleError " << kind;
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  }
}

}  // namespace tessel::block_test
