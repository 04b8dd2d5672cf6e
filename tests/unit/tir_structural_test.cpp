// Structural equality and hashing tests: functions that differ only in names are equal and
// hash alike; changing one extent, constant, dtype, loop kind, block name, stride or scope
// makes them unequal with a different hash.
#include <gtest/gtest.h>

#include "ir/tensor/structural.h"
#include "tests/unit/tir_test_util.h"

namespace tessel::tir {
namespace {

// A matmul whose every name and detail can be varied one at a time.
struct MatmulSpec {
  std::string prefix;  // prepended to every variable and buffer name
  int64_t m = 8, n = 4, k = 2;
  double init = 0.0;
  DType dtype = DType::kF32;
  ForKind inner_kind = ForKind::kSerial;
  std::string block_name = "C";
  std::string func_name = "matmul";
  std::vector<int64_t> a_strides;  // row-major when empty
  MemScope c_scope = MemScope::kGlobal;
};

PrimFunc build(const MatmulSpec& s) {
  const std::string& p = s.prefix;
  Buffer a = make_buffer(p + "A", s.dtype, {s.m, s.k}, MemScope::kGlobal, s.a_strides);
  Buffer b = make_buffer(p + "B", s.dtype, {s.k, s.n});
  Buffer c = make_buffer(p + "C", s.dtype, {s.m, s.n}, s.c_scope);
  Var i = var(p + "i"), j = var(p + "j"), k = var(p + "k");
  Var vi = var(p + "vi"), vj = var(p + "vj"), vk = var(p + "vk");
  std::vector<IterVar> iters = {{vi, {int_imm(0), int_imm(s.m)}, IterKind::kSpatial},
                                {vj, {int_imm(0), int_imm(s.n)}, IterKind::kSpatial},
                                {vk, {int_imm(0), int_imm(s.k)}, IterKind::kReduce}};
  Stmt init = make_store(c, const_of(s.dtype, s.init), {vi, vj});
  Stmt update = make_store(c, load(c, {vi, vj}) + load(a, {vi, vk}) * load(b, {vk, vj}), {vi, vj});
  Stmt block = make_test_block(s.block_name, iters, {i, j, k}, init, update);
  Stmt nest = make_for(i, int_imm(0), int_imm(s.m), ForKind::kSerial,
                       make_for(j, int_imm(0), int_imm(s.n), ForKind::kSerial,
                                make_for(k, int_imm(0), int_imm(s.k), s.inner_kind, block)));
  return make_prim_func(s.func_name, {a, b}, {c}, make_root_block(nest, {}));
}

void expect_equal(const PrimFunc& a, const PrimFunc& b) {
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_TRUE(structural_equal(b, a));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

void expect_unequal(const PrimFunc& a, const PrimFunc& b) {
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_FALSE(structural_equal(b, a));
  EXPECT_NE(structural_hash(a), structural_hash(b));
}

TEST(TirStructural, FunctionsDifferingOnlyInNamesAreEqual) {
  MatmulSpec renamed;
  renamed.prefix = "other_";
  renamed.func_name = "gemm";  // the function's name is not compared
  expect_equal(build({}), build(renamed));
  expect_equal(build({}), build({}));
  expect_equal(make_matmul_func(8, 4, 2), build({}));
  EXPECT_TRUE(structural_equal(build({})->body, build(renamed)->body));
  EXPECT_EQ(structural_hash(build({})->body), structural_hash(build(renamed)->body));
}

TEST(TirStructural, EachChangedDetailMakesFunctionsUnequal) {
  PrimFunc base = build({});
  auto changed = [](auto edit) {
    MatmulSpec s;
    edit(s);
    return build(s);
  };
  expect_unequal(base, changed([](MatmulSpec& s) { s.k = 3; }));
  expect_unequal(base, changed([](MatmulSpec& s) { s.init = 1.0; }));
  expect_unequal(base, changed([](MatmulSpec& s) { s.dtype = DType::kF16; }));
  expect_unequal(base, changed([](MatmulSpec& s) { s.inner_kind = ForKind::kUnrolled; }));
  expect_unequal(base, changed([](MatmulSpec& s) { s.block_name = "D"; }));
  expect_unequal(base, changed([](MatmulSpec& s) { s.a_strides = {1, 8}; }));
  expect_unequal(base, changed([](MatmulSpec& s) { s.c_scope = MemScope::kShared; }));
}

TEST(TirStructural, VariablesCompareByPositionOfDefinition) {
  Var a = var("a"), b = var("b"), c = var("c"), d = var("d");
  EXPECT_TRUE(structural_equal(a + b, c + d));
  EXPECT_EQ(structural_hash(a + b), structural_hash(c + d));
  EXPECT_FALSE(structural_equal(a + a, c + d));
  EXPECT_NE(structural_hash(a + a), structural_hash(c + d));
  EXPECT_TRUE(structural_equal(a + b, b + a));  // free variables are numbered by first use
  EXPECT_FALSE(structural_equal(a + b * a, c + d * d));
  EXPECT_FALSE(structural_equal(Expr(a), Expr(var("x", DType::kI32))));

  // Two sibling loops reusing one Var equal two loops with their own Vars.
  Buffer t = make_buffer("T", DType::kI64, {4});
  auto fill = [&](Var v, int64_t value) {
    return make_for(v, int_imm(0), int_imm(4), ForKind::kSerial, make_store(t, v + value, {v}));
  };
  Var i = var("i"), j = var("j");
  Stmt shared_var = make_seq({fill(i, 1), fill(i, 2)});
  Stmt own_vars = make_seq({fill(i, 1), fill(j, 2)});
  EXPECT_TRUE(structural_equal(shared_var, own_vars));
  EXPECT_EQ(structural_hash(shared_var), structural_hash(own_vars));
  EXPECT_FALSE(structural_equal(shared_var, make_seq({fill(i, 1), fill(j, 3)})));
}

TEST(TirStructural, BuffersCompareByPositionAndType) {
  Buffer x = make_buffer("X", DType::kF32, {4}), y = make_buffer("Y", DType::kF32, {4});
  Buffer x8 = make_buffer("X", DType::kF32, {8});
  Var i = var("i");
  Expr sum_xy = load(x, {i}) + load(y, {i});
  EXPECT_TRUE(structural_equal(sum_xy, load(y, {i}) + load(x, {i})));
  EXPECT_FALSE(structural_equal(sum_xy, load(x, {i}) + load(x, {i})));
  EXPECT_FALSE(structural_equal(sum_xy, load(x8, {i}) + load(y, {i})));
  EXPECT_NE(structural_hash(sum_xy), structural_hash(load(x8, {i}) + load(y, {i})));

  // Parameters in the other order are another function.
  Stmt body = make_root_block(make_store(y, load(x, {int_imm(0)}), {int_imm(0)}), {});
  PrimFunc f = make_prim_func("f", {x}, {y}, body);
  PrimFunc g = make_prim_func("f", {y}, {x}, body);
  PrimFunc h = make_prim_func("f", {x, y}, {}, body);
  EXPECT_TRUE(structural_equal(f, f));
  EXPECT_FALSE(structural_equal(f, g));
  EXPECT_FALSE(structural_equal(f, h));
  EXPECT_NE(structural_hash(f), structural_hash(h));
}

TEST(TirStructural, ThreadTagsAnnotationsAndConstantsMatter) {
  Buffer t = make_buffer("T", DType::kF32, {32});
  Var i = var("i");
  auto loop = [&](ForKind kind, std::string tag, Annotations ann, Expr value) {
    return make_for(i, int_imm(0), int_imm(32), kind, make_store(t, value, {i}), tag, ann);
  };
  Stmt base = loop(ForKind::kThreadBound, "threadIdx.x", {}, float_imm(1.0));
  EXPECT_TRUE(structural_equal(base, loop(ForKind::kThreadBound, "threadIdx.x", {}, float_imm(1.0))));
  EXPECT_FALSE(structural_equal(base, loop(ForKind::kThreadBound, "threadIdx.y", {}, float_imm(1.0))));
  EXPECT_FALSE(
      structural_equal(base, loop(ForKind::kThreadBound, "threadIdx.x", {{"u", 1}}, float_imm(1.0))));
  EXPECT_FALSE(structural_equal(base, loop(ForKind::kThreadBound, "threadIdx.x", {}, float_imm(1.5))));
  EXPECT_NE(structural_hash(base),
            structural_hash(loop(ForKind::kThreadBound, "threadIdx.x", {}, float_imm(1.5))));
  EXPECT_FALSE(structural_equal(int_imm(1), int_imm(1, DType::kI32)));
  EXPECT_FALSE(structural_equal(float_imm(1.0), float_imm(1.0, DType::kF64)));
  EXPECT_FALSE(structural_equal(Expr{}, int_imm(0)));
  EXPECT_TRUE(structural_equal(Expr{}, Expr{}));
}

}  // namespace
}  // namespace tessel::tir
