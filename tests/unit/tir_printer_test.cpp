// Tensor IR printer tests: golden text for a matmul, a padded and split convolution, a GPU
// nest with shared memory and a barrier, every loop kind and statement, expression precedence
// and literals, and the disambiguation of names.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/tensor/printer.h"
#include "tests/unit/tir_test_util.h"

namespace tessel::tir {
namespace {

Stmt block_with_regions(std::string name, std::vector<IterVar> iter_vars, std::vector<Expr> values,
                        Expr predicate, std::vector<BufferRegion> reads, std::vector<BufferRegion> writes,
                        Stmt init, Stmt body, Annotations annotations = {}) {
  return make_ref<BlockNode>(std::move(name), std::move(iter_vars), std::move(values), std::move(predicate),
                             std::move(reads), std::move(writes), std::move(init), std::move(body),
                             std::vector<Buffer>{}, std::move(annotations));
}

TEST(TirPrinter, MatmulReadsLikeTheLoopNest) {
  EXPECT_EQ(to_string(make_matmul_func(64, 16, 32)),
            "func matmul(A: f32[64, 32], B: f32[32, 16]) -> (C: f32[64, 16]) {\n"
            "  for i in 0..64:\n"
            "    for j in 0..16:\n"
            "      for k in 0..32:\n"
            "        block C(vi: spatial[64] = i, vj: spatial[16] = j, vk: reduce[32] = k):\n"
            "          reads C[vi, vj], A[vi, vk], B[vk, vj]\n"
            "          writes C[vi, vj]\n"
            "          init:\n"
            "            C[vi, vj] = 0.0f\n"
            "          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
            "}\n");
}

// Y[o] = sum_r X[2 * o + r - 1] * W[r] with zero padding of 1, o split by 3 (not exact: 5 outputs).
TEST(TirPrinter, ConvNestWithPredicateAndWindowRegion) {
  Buffer x = make_buffer("X", DType::kF32, {10});
  Buffer w = make_buffer("W", DType::kF32, {3});
  Buffer y = make_buffer("Y", DType::kF32, {5});
  Var o0 = var("o0"), o1 = var("o1"), r = var("r"), vo = var("vo"), vr = var("vr");
  Expr pos = vo * 2 + vr - 1;
  Expr in_bounds = int_imm(0) <= pos && pos < int_imm(10);
  Expr value = select(in_bounds, load(x, {pos}), float_imm(0.0));
  Stmt block = block_with_regions(
      "Y",
      {{vo, {int_imm(0), int_imm(5)}, IterKind::kSpatial}, {vr, {int_imm(0), int_imm(3)}, IterKind::kReduce}},
      {o0 * 3 + o1, r}, o0 * 3 + o1 < int_imm(5),
      {{y, {{vo, int_imm(1)}}}, {x, {{vo * 2 - 1, int_imm(3)}}}, {w, {{int_imm(0), int_imm(3)}}}},
      {{y, {{vo, int_imm(1)}}}}, make_store(y, float_imm(0.0), {vo}),
      make_store(y, load(y, {vo}) + value * load(w, {vr}), {vo}));
  Stmt nest = make_for(o0, int_imm(0), int_imm(2), ForKind::kSerial,
                       make_for(o1, int_imm(0), int_imm(3), ForKind::kSerial,
                                make_for(r, int_imm(0), int_imm(3), ForKind::kSerial, block)));
  PrimFunc f = make_prim_func("conv1d", {x, w}, {y}, make_root_block(nest, {}));
  EXPECT_EQ(
      to_string(f),
      "func conv1d(X: f32[10], W: f32[3]) -> (Y: f32[5]) {\n"
      "  for o0 in 0..2:\n"
      "    for o1 in 0..3:\n"
      "      for r in 0..3:\n"
      "        block Y(vo: spatial[5] = o0 * 3 + o1, vr: reduce[3] = r):\n"
      "          predicate o0 * 3 + o1 < 5\n"
      "          reads Y[vo], X[vo * 2 - 1:vo * 2 - 1 + 3], W[0:3]\n"
      "          writes Y[vo]\n"
      "          init:\n"
      "            Y[vo] = 0.0f\n"
      "          Y[vo] = Y[vo] + select(0 <= vo * 2 + vr - 1 && vo * 2 + vr - 1 < 10, X[vo * 2 + vr - 1], "
      "0.0f) * W[vr]\n"
      "}\n");
}

// Each thread block copies 32 elements to shared memory, then writes them back reversed.
TEST(TirPrinter, GpuNestWithBindingsSharedMemoryAndBarrier) {
  Buffer a = make_buffer("A", DType::kF32, {128});
  Buffer b = make_buffer("B", DType::kF32, {128});
  Buffer s = make_buffer("S", DType::kF32, {32}, MemScope::kShared);
  Var bx = var("bx"), tx = var("tx"), v = var("v"), u = var("u");
  Stmt stage = make_test_block("stage", {{v, {int_imm(0), int_imm(128)}, IterKind::kSpatial}}, {bx * 32 + tx},
                               {}, make_store(s, load(a, {v}), {floormod(v, 32)}));
  Stmt back = make_test_block("B", {{u, {int_imm(0), int_imm(128)}, IterKind::kSpatial}}, {bx * 32 + tx}, {},
                              make_store(b, load(s, {int_imm(31) - floormod(u, 32)}), {u}));
  Stmt threads = make_for(tx, int_imm(0), int_imm(32), ForKind::kThreadBound,
                          make_seq({stage, make_barrier(), back}), "threadIdx.x");
  Stmt blocks =
      make_for(bx, int_imm(0), int_imm(4), ForKind::kThreadBound, make_allocate(s, threads), "blockIdx.x");
  PrimFunc f = make_prim_func("reverse32", {a}, {b}, make_root_block(blocks, {}));
  EXPECT_EQ(to_string(f),
            "func reverse32(A: f32[128]) -> (B: f32[128]) {\n"
            "  for bx in 0..4 thread_bound(blockIdx.x):\n"
            "    alloc S: f32[32] shared\n"
            "    for tx in 0..32 thread_bound(threadIdx.x):\n"
            "      block stage(v: spatial[128] = bx * 32 + tx):\n"
            "        reads A[v]\n"
            "        writes S[v % 32]\n"
            "        S[v % 32] = A[v]\n"
            "      barrier()\n"
            "      block B(u: spatial[128] = bx * 32 + tx):\n"
            "        reads S[31 - u % 32]\n"
            "        writes B[u]\n"
            "        B[u] = S[31 - u % 32]\n"
            "}\n");
}

TEST(TirPrinter, LoopKindsStatementsAndBuffers) {
  Buffer a = make_buffer("A", DType::kF32, {8, 4}, MemScope::kGlobal, {1, 8});
  Buffer t = make_buffer("T", DType::kF32, {4}, MemScope::kLocal);
  Buffer u = make_buffer("U", DType::kI32, {2, 2});
  Buffer out = make_buffer("Out", DType::kF32, {8});
  Var i = var("i"), j = var("j"), k = var("k"), n = var("n");
  Stmt fill = make_for(j, int_imm(0), int_imm(4), ForKind::kVectorized, make_store(t, load(a, {i, j}), {j}));
  Stmt guarded = make_if(i < int_imm(4), make_store(out, load(t, {int_imm(0)}), {i}),
                         make_store(out, float_imm(1.5), {i}));
  Stmt unrolled = make_for(k, int_imm(2), int_imm(8), ForKind::kUnrolled,
                           make_store(u, int_imm(3, DType::kI32), {int_imm(0), int_imm(1)}), {},
                           {{"pragma_unroll_explicit", 1}, {"step", 2}});
  Stmt symbolic = make_for(n, i, int_imm(2), ForKind::kSerial, make_barrier());
  Stmt body = make_seq({make_allocate(t, make_seq({fill, guarded})), unrolled, symbolic});
  PrimFunc f =
      make_prim_func("kinds", {a}, {out},
                     make_root_block(make_for(i, int_imm(0), int_imm(8), ForKind::kParallel, body), {u}));
  EXPECT_EQ(to_string(f),
            "func kinds(A: f32[8, 4] strides=[1, 8]) -> (Out: f32[8]) {\n"
            "  alloc U: i32[2, 2]\n"
            "  for i in 0..8 parallel:\n"
            "    alloc T: f32[4] local:\n"
            "      for j in 0..4 vectorized:\n"
            "        T[j] = A[i, j]\n"
            "      if i < 4:\n"
            "        Out[i] = T[0]\n"
            "      else:\n"
            "        Out[i] = 1.5f\n"
            "    for k in 2..10 unrolled:  # pragma_unroll_explicit=1, step=2\n"
            "      U[0, 1] = 3i32\n"
            "    for n in i..i + 2:\n"
            "      barrier()\n"
            "}\n");
}

TEST(TirPrinter, BlockWithAnnotationsAndOwnAllocationsPrintsAsStatement) {
  Buffer b = make_buffer("B", DType::kF64, {2});
  Buffer tmp = make_buffer("tmp", DType::kF64, {2}, MemScope::kLocal);
  Var vi = var("vi");
  Stmt blk =
      make_ref<BlockNode>("inner", std::vector<IterVar>{{vi, {int_imm(1), int_imm(2)}, IterKind::kSpatial}},
                          std::vector<Expr>{int_imm(1)}, bool_imm(true), std::vector<BufferRegion>{},
                          std::vector<BufferRegion>{{b, {{vi - 1, int_imm(1)}}}}, Stmt{},
                          make_store(b, float_imm(2.0, DType::kF64), {vi - 1}), std::vector<Buffer>{tmp},
                          Annotations{{"meta", 7}});
  EXPECT_EQ(to_string(blk),
            "block inner(vi: spatial[1..3] = 1):  # meta=7\n"
            "  writes B[vi - 1]\n"
            "  alloc tmp: f64[2] local\n"
            "  B[vi - 1] = 2.0\n");
}

TEST(TirPrinter, ParenthesesFollowPrecedence) {
  Var a = var("a"), b = var("b"), c = var("c");
  EXPECT_EQ(to_string((a + b) * c), "(a + b) * c");
  EXPECT_EQ(to_string(a + b * c), "a + b * c");
  EXPECT_EQ(to_string(a - (b - c)), "a - (b - c)");
  EXPECT_EQ(to_string(a - b - c), "a - b - c");
  EXPECT_EQ(to_string(floordiv(a + 1, 4)), "(a + 1) // 4");
  EXPECT_EQ(to_string(floormod(a, 4) * 4), "a % 4 * 4");
  EXPECT_EQ(to_string(a * floordiv(b, 2)), "a * (b // 2)");
  EXPECT_EQ(to_string(a * -2), "a * -2");
  EXPECT_EQ(to_string(min(a, b + 1) + max(c, int_imm(0))), "min(a, b + 1) + max(c, 0)");
  EXPECT_EQ(to_string(bit_xor(bit_and(a, b), shift_left(c, int_imm(2))) + shift_right(bit_or(a, c), b)),
            "bitxor(bitand(a, b), shl(c, 2)) + shr(bitor(a, c), b)");
  Expr cmp = logical_not(a < b) || (eq(c, int_imm(0)) && ge(a, int_imm(1)));
  EXPECT_EQ(to_string(cmp), "!(a < b) || c == 0 && a >= 1");
  EXPECT_EQ(to_string(logical_and(logical_or(lt(a, b), lt(b, c)), ne(a, c))), "(a < b || b < c) && a != c");
  EXPECT_EQ(to_string(eq(lt(a, b), lt(b, c))), "(a < b) == (b < c)");
}

TEST(TirPrinter, LiteralsCastsSelectsAndCalls) {
  Var x = var("x", DType::kF32), y = var("y", DType::kF32);
  EXPECT_EQ(to_string(float_imm(0.0)), "0.0f");
  EXPECT_EQ(to_string(float_imm(0.1)), "0.1f");
  EXPECT_EQ(to_string(float_imm(1.5, DType::kF64)), "1.5");
  EXPECT_EQ(to_string(float_imm(1.5, DType::kF16)), "1.5f16");
  EXPECT_EQ(to_string(float_imm(1e20)), "1e+20f");
  EXPECT_EQ(to_string(float_imm(-INFINITY)), "f32(-inf)");
  EXPECT_EQ(to_string(float_imm(NAN, DType::kF64)), "f64(nan)");
  EXPECT_EQ(to_string(int_imm(3, DType::kI32)), "3i32");
  EXPECT_EQ(to_string(int_imm(7, DType::kU8)), "7u8");
  EXPECT_EQ(to_string(int_imm(-4)), "-4");
  EXPECT_EQ(to_string(bool_imm(false)), "false");
  EXPECT_EQ(to_string(cast(DType::kF16, x + y)), "f16(x + y)");
  EXPECT_EQ(to_string(div(x, y)), "x / y");
  EXPECT_EQ(to_string(call(Intrinsic::k_exp, {x})), "exp(x)");
  EXPECT_EQ(to_string(call(Intrinsic::k_pow, {x, y})), "pow(x, y)");
  EXPECT_EQ(to_string(select(gt(x, y), x, y * 2)), "select(x > y, x, y * 2.0f)");
}

TEST(TirPrinter, DistinctVariablesAndBuffersWithOneNameGetSuffixes) {
  Var outer = var("i"), inner = var("i"), taken = var("i_1");
  Buffer t1 = make_buffer("T", DType::kF32, {4, 4, 4});
  Buffer t2 = make_buffer("T", DType::kF32, {4, 4, 4});
  Stmt body = make_seq({make_store(t1, load(t2, {outer, inner, taken}), {inner, outer, taken})});
  Stmt nest = make_for(outer, int_imm(0), int_imm(4), ForKind::kSerial,
                       make_for(inner, int_imm(0), int_imm(4), ForKind::kSerial,
                                make_for(taken, int_imm(0), int_imm(4), ForKind::kSerial, body)));
  PrimFunc f = make_prim_func("names", {t2}, {t1}, make_root_block(nest, {}));
  std::string expected =
      "func names(T: f32[4, 4, 4]) -> (T_1: f32[4, 4, 4]) {\n"
      "  for i in 0..4:\n"
      "    for i_1 in 0..4:\n"
      "      for i_1_1 in 0..4:\n"
      "        T_1[i_1, i, i_1_1] = T[i, i_1, i_1_1]\n"
      "}\n";
  EXPECT_EQ(to_string(f), expected);
  EXPECT_EQ(to_string(f), expected);  // deterministic: a fresh namer per call
  std::ostringstream os;
  os << f;
  EXPECT_EQ(os.str(), expected);
}

}  // namespace
}  // namespace tessel::tir
