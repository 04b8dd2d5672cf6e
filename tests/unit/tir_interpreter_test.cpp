// The tensor IR interpreter on CPU-style functions: elementwise, a matmul
// reduction block against a plain C++ loop, block predicates, strided buffers,
// C semantics of expressions, and the errors it must report.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/tensor/functor.h"
#include "ir/tensor/interpreter.h"
#include "tests/unit/tir_test_util.h"

namespace tessel::tir {
namespace {

Tensor random_f32(Dims shape, uint32_t seed) {
  Tensor t(DType::kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// A block over one spatial variable bound to `value`, guarded by `predicate`.
Stmt make_guarded_block(std::string name, Var v, int64_t extent, Expr value, Expr predicate, Stmt body) {
  AccessRegions regions = detect_access_regions(Stmt{}, body);
  return make_ref<BlockNode>(std::move(name),
                             std::vector<IterVar>{{v, {int_imm(0), int_imm(extent)}, IterKind::kSpatial}},
                             std::vector<Expr>{std::move(value)}, std::move(predicate), regions.reads,
                             regions.writes, Stmt{}, std::move(body), std::vector<Buffer>{}, Annotations{});
}

// B[i] = f(A[i]) over a 1-d f32 buffer of n elements, one block per element.
PrimFunc unary_func(int64_t n, Expr (*f)(Expr)) {
  Buffer a = make_buffer("A", DType::kF32, {n}), b = make_buffer("B", DType::kF32, {n});
  Var i = var("i"), vi = var("vi");
  Stmt block = make_test_block("B", {{vi, {int_imm(0), int_imm(n)}, IterKind::kSpatial}}, {i}, Stmt{},
                               make_store(b, f(load(a, {vi})), {vi}));
  return make_prim_func("unary", {a}, {b},
                        make_root_block(make_for(i, int_imm(0), int_imm(n), ForKind::kSerial, block), {}));
}

// Evaluates a scalar expression of no inputs by storing it to a 1-element output.
Tensor eval_scalar(Expr e) {
  Buffer out = make_buffer("out", e->dtype, {1});
  PrimFunc f = make_prim_func("scalar", {}, {out}, make_root_block(make_store(out, e, {int_imm(0)}), {}));
  return interpret(f, {})[0];
}
int64_t eval_i64(Expr e) {
  return eval_scalar(std::move(e)).get_i64(0);
}
double eval_f64(Expr e) {
  return eval_scalar(std::move(e)).get_f64(0);
}

std::string error_of(const PrimFunc& f, const std::vector<Tensor>& inputs, InterpretOptions options = {}) {
  try {
    interpret(f, inputs, options);
  } catch (const InterpreterError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TirInterpreter, ElementwiseBlock) {
  PrimFunc f = unary_func(37, [](Expr x) { return x * float_imm(2.0) + float_imm(1.0); });
  Tensor a = random_f32({37}, 1);
  Tensor b = interpret(f, {a})[0];
  ASSERT_EQ(b.shape(), (Dims{37}));
  for (int64_t i = 0; i < 37; ++i) EXPECT_EQ(b.data<float>()[i], a.data<float>()[i] * 2.0f + 1.0f);
}

TEST(TirInterpreter, MatmulReductionMatchesPlainLoop) {
  const int64_t M = 5, N = 7, K = 9;
  Tensor a = random_f32({M, K}, 2), b = random_f32({K, N}, 3);
  Tensor c = interpret(make_matmul_func(M, N, K), {a, b})[0];
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0.0f;  // f32 accumulation in the block's order: bit-exact
      for (int64_t k = 0; k < K; ++k) acc += a.data<float>()[i * K + k] * b.data<float>()[k * N + j];
      EXPECT_EQ(c.data<float>()[i * N + j], acc) << i << ", " << j;
    }
}

TEST(TirInterpreter, PredicateGuardsNonExactSplit) {
  // for io in 0..3, ii in 0..4: block B(vi = io * 4 + ii) where vi < 10: B[vi] = A[vi] + 1
  Buffer a = make_buffer("A", DType::kF32, {10}), b = make_buffer("B", DType::kF32, {10});
  Var io = var("io"), ii = var("ii"), vi = var("vi");
  auto make = [&](Expr predicate) {
    Stmt block = make_guarded_block("B", vi, 10, io * 4 + ii, std::move(predicate),
                                    make_store(b, load(a, {vi}) + float_imm(1.0), {vi}));
    Stmt nest = make_for(io, int_imm(0), int_imm(3), ForKind::kSerial,
                         make_for(ii, int_imm(0), int_imm(4), ForKind::kSerial, block));
    return make_prim_func("split", {a}, {b}, make_root_block(nest, {}));
  };
  Tensor in = random_f32({10}, 4);
  Tensor out = interpret(make(io * 4 + ii < int_imm(10)), {in})[0];
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(out.data<float>()[i], in.data<float>()[i] + 1.0f);
  // Without the predicate the last iterations run off the end of A.
  EXPECT_NE(error_of(make(bool_imm(true)), {in}).find("out-of-bounds load of A[10]"), std::string::npos);
}

TEST(TirInterpreter, OutOfBoundsStoreNamesBufferIndicesAndShape) {
  Buffer b = make_buffer("B", DType::kI32, {4, 3});
  Var i = var("i");
  Stmt body = make_for(i, int_imm(0), int_imm(5), ForKind::kSerial,
                       make_store(b, int_imm(7, DType::kI32), {i, int_imm(2)}));
  std::string message = error_of(make_prim_func("oob", {}, {b}, make_root_block(body, {})), {});
  EXPECT_NE(message.find("out-of-bounds store to B[4, 2]"), std::string::npos) << message;
  EXPECT_NE(message.find("[4, 3]"), std::string::npos) << message;
}

TEST(TirInterpreter, ReadOfUninitialisedScratchAndOutputIsReported) {
  // T is written for i < 3 only, then read for all 4 elements.
  Buffer t = make_buffer("T", DType::kI64, {2, 4}), out = make_buffer("out", DType::kI64, {4});
  Var i = var("i"), j = var("j");
  Stmt fill = make_for(i, int_imm(0), int_imm(3), ForKind::kSerial, make_store(t, i, {int_imm(1), i}));
  Stmt read =
      make_for(j, int_imm(0), int_imm(4), ForKind::kSerial, make_store(out, load(t, {int_imm(1), j}), {j}));
  PrimFunc f = make_prim_func("uninit", {}, {out}, make_root_block(make_seq({fill, read}), {t}));
  EXPECT_NE(error_of(f, {}).find("read of uninitialised T[1, 3]"), std::string::npos) << error_of(f, {});
  // The matmul update without its init reads C before writing it.
  struct DropInit : StmtMutator {
    Stmt mutate_block(const BlockNode& b, const Stmt& self) override {
      if (!b.init.defined()) return StmtMutator::mutate_block(b, self);
      return make_ref<BlockNode>(b.name, b.iter_vars, b.iter_values, b.predicate, b.reads, b.writes, Stmt{},
                                 b.body, b.alloc_buffers, b.annotations);
    }
  } drop;
  PrimFunc mm = make_matmul_func(2, 2, 2);
  PrimFunc broken = with_body(*mm, drop.mutate(mm->body));
  std::string message = error_of(broken, {random_f32({2, 2}, 5), random_f32({2, 2}, 6)});
  EXPECT_NE(message.find("read of uninitialised C[0, 0]"), std::string::npos) << message;
  EXPECT_NE(message.find("in block C"), std::string::npos) << message;
}

TEST(TirInterpreter, StridedBuffersUseTheirStrides) {
  // A and the scratch T have padded rows (storage_align); B = T + 1 with T = A * 2.
  Buffer a = make_buffer("A", DType::kF32, {3, 4}, MemScope::kGlobal, {5, 1});
  Buffer t = make_buffer("T", DType::kF32, {3, 4}, MemScope::kGlobal, {8, 1});
  Buffer b = make_buffer("B", DType::kF32, {3, 4});
  EXPECT_EQ(t->storage_elements(), 20);
  Var i = var("i"), j = var("j"), k = var("k"), l = var("l");
  auto nest = [](Var x, Var y, Stmt body) {
    return make_for(x, int_imm(0), int_imm(3), ForKind::kSerial,
                    make_for(y, int_imm(0), int_imm(4), ForKind::kSerial, std::move(body)));
  };
  Stmt s1 = nest(i, j, make_store(t, load(a, {i, j}) * float_imm(2.0), {i, j}));
  Stmt s2 = nest(k, l, make_store(b, load(t, {k, l}) + float_imm(1.0), {k, l}));
  PrimFunc f = make_prim_func("strided", {a}, {b}, make_root_block(make_seq({s1, s2}), {t}));
  Tensor in = random_f32({3, 4}, 7);
  Tensor out = interpret(f, {in})[0];
  for (int64_t e = 0; e < 12; ++e) EXPECT_EQ(out.data<float>()[e], in.data<float>()[e] * 2.0f + 1.0f);
}

TEST(TirInterpreter, InputsAreCheckedForDtypeShapeAndCount) {
  PrimFunc f = unary_func(4, [](Expr x) { return x; });
  EXPECT_NE(error_of(f, {Tensor(DType::kF32, {5})}).find("input A is f32[4]"), std::string::npos);
  EXPECT_NE(error_of(f, {Tensor(DType::kF64, {4})}).find("f64[4]"), std::string::npos);
  EXPECT_NE(error_of(f, {}).find("takes 1 inputs"), std::string::npos);
}

TEST(TirInterpreter, IntegerSemanticsAreCs) {
  EXPECT_EQ(eval_i64(div(int_imm(-7), int_imm(2))), -3);
  EXPECT_EQ(eval_i64(floordiv(int_imm(-7), int_imm(2))), -4);
  EXPECT_EQ(eval_i64(floormod(int_imm(-7), int_imm(2))), 1);
  EXPECT_EQ(eval_i64(floormod(int_imm(7), int_imm(-2))), -1);
  EXPECT_EQ(eval_i64(add(int_imm(100, DType::kI8), int_imm(100, DType::kI8))), -56);
  EXPECT_EQ(eval_i64(mul(int_imm(200, DType::kU8), int_imm(2, DType::kU8))), 144);
  EXPECT_EQ(eval_i64(add(int_imm(INT32_MAX, DType::kI32), int_imm(1, DType::kI32))), INT32_MIN);
  EXPECT_EQ(eval_i64(cast(DType::kI32, float_imm(-2.7))), -2);
  EXPECT_EQ(eval_i64(cast(DType::kBool, float_imm(0.25))), 1);
  EXPECT_EQ(eval_i64(cast(DType::kU8, int_imm(-1))), 255);
}

TEST(TirInterpreter, DivisionByZeroIsAnError) {
  Buffer out = make_buffer("out", DType::kI64, {1});
  Var i = var("i");
  Stmt body = make_for(i, int_imm(0), int_imm(2), ForKind::kSerial,
                       make_store(out, floordiv(int_imm(5), i), {int_imm(0)}));
  EXPECT_NE(error_of(make_prim_func("dz", {}, {out}, make_root_block(body, {})), {}).find("division by zero"),
            std::string::npos);
}

TEST(TirInterpreter, FloatSemantics) {
  // f32 arithmetic happens in float: 1e8 + 1 rounds back to 1e8.
  EXPECT_EQ(eval_f64(sub(add(float_imm(1e8), float_imm(1.0)), float_imm(1e8))), 0.0);
  EXPECT_EQ(eval_f64(sub(add(float_imm(1e8, DType::kF64), float_imm(1.0, DType::kF64)),
                         float_imm(1e8, DType::kF64))),
            1.0);
  EXPECT_EQ(eval_f64(call(Intrinsic::k_round, {float_imm(2.5)})), 2.0);  // half to even
  EXPECT_EQ(eval_f64(call(Intrinsic::k_round, {float_imm(-3.5)})), -4.0);
  EXPECT_FLOAT_EQ(float(eval_f64(call(Intrinsic::k_sigmoid, {float_imm(0.5)}))),
                  1.0f / (1.0f + std::exp(-0.5f)));
  EXPECT_FLOAT_EQ(float(eval_f64(call(Intrinsic::k_rsqrt, {float_imm(4.0)}))), 0.5f);
  EXPECT_EQ(eval_i64(call(Intrinsic::k_isnan, {div(float_imm(0.0), float_imm(0.0))})), 1);
  // f16 is rounded when stored: 1 + 2^-11 is not representable and rounds to 1.
  EXPECT_EQ(eval_f64(add(float_imm(1.0, DType::kF16), float_imm(1.0 / 2048, DType::kF16))), 1.0);
  // Select evaluates only the chosen side (a guarded load stays in bounds).
  Buffer a = make_buffer("A", DType::kF32, {2}), b = make_buffer("B", DType::kF32, {4});
  Var i = var("i");
  Expr guarded = select(i < int_imm(2), load(a, {i}), float_imm(-1.0));
  PrimFunc pad = make_prim_func(
      "pad", {a}, {b},
      make_root_block(make_for(i, int_imm(0), int_imm(4), ForKind::kSerial, make_store(b, guarded, {i})),
                      {}));
  Tensor in = random_f32({2}, 8);
  Tensor out = interpret(pad, {in})[0];
  EXPECT_EQ(out.data<float>()[1], in.data<float>()[1]);
  EXPECT_EQ(out.data<float>()[3], -1.0f);
}

TEST(TirInterpreter, ParallelLoopsRunReversedToExposeDependences) {
  // B[0] = 0; parallel i in 1..4: B[i] = B[i - 1] + 1 -- a loop-carried dependence.
  Buffer b = make_buffer("B", DType::kI64, {4});
  Var i = var("i");
  Stmt body = make_seq(
      {make_store(b, int_imm(0), {int_imm(0)}),
       make_for(i, int_imm(1), int_imm(3), ForKind::kParallel, make_store(b, load(b, {i - 1}) + 1, {i}))});
  PrimFunc f = make_prim_func("carried", {}, {b}, make_root_block(body, {}));
  EXPECT_EQ(interpret(f, {})[0].to_i64_vector(), (std::vector<int64_t>{0, 1, 2, 3}));
  InterpretOptions reverse{ThreadOrder::kReverse};
  EXPECT_NE(error_of(f, {}, reverse).find("read of uninitialised B[2]"), std::string::npos);
}

TEST(TirInterpreter, VariableOutsideItsScopeIsReported) {
  Buffer b = make_buffer("B", DType::kI64, {4});
  Var i = var("i");
  PrimFunc f = make_prim_func("scope", {}, {b}, make_root_block(make_store(b, i, {int_imm(0)}), {}));
  EXPECT_NE(error_of(f, {}).find("variable i"), std::string::npos);
  // A buffer that is neither a parameter nor allocated (a different node named B).
  Buffer other = make_buffer("B", DType::kI64, {4});
  PrimFunc g =
      make_prim_func("scope", {}, {b}, make_root_block(make_store(other, int_imm(1), {int_imm(0)}), {}));
  EXPECT_NE(error_of(g, {}).find("buffer B is used"), std::string::npos);
}

}  // namespace
}  // namespace tessel::tir
