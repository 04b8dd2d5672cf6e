// Tensor IR verifier tests: valid CPU and GPU functions pass, and each check has a must-fail
// case with the message it must report. Broken nodes are built with make_ref, past the builders.
#include <gtest/gtest.h>

#include "ir/tensor/verifier.h"
#include "tessel/error.h"
#include "tests/unit/tir_test_util.h"

namespace tessel::tir {
namespace {

// The problems of a function, joined; fails the test when there are none.
std::string problems_of(const PrimFunc& f, const VerifyOptions& options = {}) {
  std::vector<std::string> problems = verify_problems(f, options);
  EXPECT_FALSE(problems.empty()) << "expected a problem";
  std::string joined;
  for (const std::string& p : problems) joined += p + "\n";
  return joined;
}

Stmt block_of(std::string name, std::vector<IterVar> iters, std::vector<Expr> values, Stmt body,
              std::vector<BufferRegion> reads, std::vector<BufferRegion> writes,
              Expr predicate = bool_imm(true)) {
  return make_ref<BlockNode>(std::move(name), std::move(iters), std::move(values), std::move(predicate),
                             std::move(reads), std::move(writes), Stmt{}, std::move(body),
                             std::vector<Buffer>{}, Annotations{});
}

Stmt loop(Var v, int64_t extent, Stmt body, ForKind kind = ForKind::kSerial, std::string tag = {}) {
  return make_ref<ForNode>(std::move(v), int_imm(0), int_imm(extent), kind, std::move(tag), Annotations{},
                           std::move(body));
}

IterVar spatial(Var v, int64_t extent) {
  return {std::move(v), {int_imm(0), int_imm(extent)}, IterKind::kSpatial};
}

// B[i] = A[i] for i in 0..n, as one block "B" under one loop of the given kind.
struct Copy {
  Buffer a = make_buffer("A", DType::kF32, {16});
  Buffer b = make_buffer("B", DType::kF32, {16});
  Var i = var("i"), vi = var("vi");

  Stmt block(Expr binding = {}, Stmt body = {}) {
    if (!body.defined()) body = make_store(b, load(a, {vi}), {vi});
    return make_test_block("B", {spatial(vi, 16)}, {binding.defined() ? binding : Expr(i)}, {}, body);
  }
  PrimFunc func(Stmt nest) { return make_prim_func("copy", {a}, {b}, make_root_block(nest, {})); }
  PrimFunc func_with_loop(ForKind kind = ForKind::kSerial, std::string tag = {}) {
    return func(loop(i, 16, block(), kind, tag));
  }
};

TEST(TirVerifier, ValidFunctionsHaveNoProblems) {
  EXPECT_TRUE(verify_problems(make_matmul_func(8, 4, 2)).empty());
  EXPECT_NO_THROW(verify(make_matmul_func(8, 4, 2)));
  Copy c;
  EXPECT_TRUE(verify_problems(c.func_with_loop(ForKind::kVectorized)).empty());
  VerifyOptions gpu;
  gpu.allow_thread_bindings = true;
  EXPECT_TRUE(verify_problems(c.func_with_loop(ForKind::kThreadBound, "threadIdx.x"), gpu).empty());
}

TEST(TirVerifier, VerifyThrowsListingTheProblems) {
  Copy c;
  try {
    verify(c.func_with_loop(ForKind::kThreadBound, "threadIdx.x"));
    ADD_FAILURE() << "verify did not throw";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("allows no thread bindings"), std::string::npos) << e.what();
  }
}

TEST(TirVerifier, VariableUsedButNotDefined) {
  Copy c;
  Var n = var("n");
  EXPECT_NE(problems_of(
                c.func(make_ref<ForNode>(c.i, int_imm(0), n, ForKind::kSerial, "", Annotations{}, c.block())))
                .find("variable 'n' is used but not defined"),
            std::string::npos);
}

TEST(TirVerifier, VariableDefinedTwiceOnOnePath) {
  Copy c;
  EXPECT_NE(
      problems_of(c.func(loop(c.i, 16, loop(c.i, 16, c.block())))).find("'i' is defined twice on one path"),
      std::string::npos);
}

TEST(TirVerifier, IndexCountMustMatchRank) {
  Copy c;
  Buffer m = make_buffer("M", DType::kF32, {4, 4});
  Expr bad = make_ref<LoadNode>(m, std::vector<Expr>{c.vi});
  Stmt block = block_of("B", {spatial(c.vi, 16)}, {c.i}, make_store(c.b, bad, {c.vi}),
                        {{m, {{c.vi, int_imm(1)}, {int_imm(0), int_imm(4)}}}}, {{c.b, {{c.vi, int_imm(1)}}}});
  PrimFunc f = make_prim_func("f", {m}, {c.b}, make_root_block(loop(c.i, 16, block), {}));
  EXPECT_NE(problems_of(f).find("load of 'M' with 1 indices, rank 2"), std::string::npos);
}

TEST(TirVerifier, DtypesMustBeConsistent) {
  Copy c;
  Stmt store_i32 = make_ref<StoreNode>(c.b, int_imm(1, DType::kI32), std::vector<Expr>{c.vi});
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, c.block({}, store_i32)))).find("store of i32 to 'B' (f32)"),
            std::string::npos);
  Expr mixed = make_ref<AddNode>(DType::kF32, load(c.a, {c.vi}), int_imm(1, DType::kI32));
  EXPECT_NE(problems_of(
                c.func(loop(c.i, 16, c.block({}, make_ref<StoreNode>(c.b, mixed, std::vector<Expr>{c.vi})))))
                .find("Add of f32 and i32"),
            std::string::npos);
  Expr float_index = make_ref<LoadNode>(c.a, std::vector<Expr>{float_imm(0.0)});
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, c.block({}, make_store(c.b, float_index, {c.vi})))))
                .find("index of 'A' is f32, not i64"),
            std::string::npos);
}

TEST(TirVerifier, ConstantIndexOutOfBounds) {
  Copy c;
  Stmt store = make_store(c.b, load(c.a, {int_imm(16)}), {c.vi});
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, c.block({}, store))))
                .find("index 16 of 'A' dimension 0 is out of bounds"),
            std::string::npos);
}

TEST(TirVerifier, BlockNamesAreUnique) {
  Copy c;
  Var j = var("j");
  Stmt second =
      make_test_block("B", {spatial(var("vj"), 16)}, {j}, {}, make_store(c.b, float_imm(0.0), {int_imm(0)}));
  EXPECT_NE(problems_of(c.func(make_seq({loop(c.i, 16, c.block()), loop(j, 16, second)})))
                .find("block name 'B' is used twice"),
            std::string::npos);
}

TEST(TirVerifier, BlockBodyUsesOnlyItsIterationVariables) {
  Copy c;
  Stmt body = make_store(c.b, load(c.a, {c.i}), {c.vi});
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, c.block({}, body))))
                .find("block 'B' uses variable 'i' from outside the block"),
            std::string::npos);
}

TEST(TirVerifier, BindingsUseOnlyLoopVariablesInScope) {
  Copy c;
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, c.block(c.vi)))).find("binding of block 'B' uses 'vi'"),
            std::string::npos);
  Stmt short_binding = block_of("B", {spatial(c.vi, 16)}, {}, make_store(c.b, load(c.a, {c.vi}), {c.vi}),
                                {{c.a, {{c.vi, int_imm(1)}}}}, {{c.b, {{c.vi, int_imm(1)}}}});
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, short_binding))).find("1 iteration variables but 0 bindings"),
            std::string::npos);
  Stmt own_predicate =
      block_of("B", {spatial(c.vi, 16)}, {c.i}, make_store(c.b, load(c.a, {c.vi}), {c.vi}),
               {{c.a, {{c.vi, int_imm(1)}}}}, {{c.b, {{c.vi, int_imm(1)}}}}, c.vi < int_imm(8));
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, own_predicate))).find("predicate of block 'B' uses 'vi'"),
            std::string::npos);
}

TEST(TirVerifier, InitOnlyInReductionBlocks) {
  Copy c;
  Stmt spatial_init =
      make_test_block("B", {spatial(c.vi, 16)}, {c.i}, make_store(c.b, float_imm(0.0), {c.vi}),
                      make_store(c.b, load(c.a, {c.vi}), {c.vi}));
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, spatial_init)))
                .find("block 'B' has an init but no reduction variable"),
            std::string::npos);
}

TEST(TirVerifier, DeclaredRegionsCoverTheAccesses) {
  Copy c;
  Stmt body = make_store(c.b, load(c.a, {c.vi}), {c.vi});
  Stmt no_reads = block_of("B", {spatial(c.vi, 16)}, {c.i}, body, {}, {{c.b, {{c.vi, int_imm(1)}}}});
  EXPECT_NE(
      problems_of(c.func(loop(c.i, 16, no_reads))).find("block 'B' reads 'A' without declaring it in reads"),
      std::string::npos);
  Stmt no_writes = block_of("B", {spatial(c.vi, 16)}, {c.i}, body, {{c.a, {{c.vi, int_imm(1)}}}}, {});
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, no_writes)))
                .find("block 'B' writes 'B' without declaring it in writes"),
            std::string::npos);
}

TEST(TirVerifier, BuffersMustBeParametersOrAllocated) {
  Copy c;
  Buffer stray = make_buffer("stray", DType::kF32, {16});
  Stmt body = make_store(c.b, load(stray, {c.vi}), {c.vi});
  EXPECT_NE(
      problems_of(c.func(loop(c.i, 16, c.block({}, body)))).find("buffer 'stray' is used but is neither"),
      std::string::npos);
}

TEST(TirVerifier, LoopKindsFollowTheTarget) {
  Copy c;
  EXPECT_NE(problems_of(c.func_with_loop(ForKind::kThreadBound, "threadIdx.x"))
                .find("loop 'i' is bound to threadIdx.x, but the target allows no thread bindings"),
            std::string::npos);
  VerifyOptions serial_only;
  serial_only.allow_parallel = false;
  EXPECT_NE(problems_of(c.func_with_loop(ForKind::kParallel), serial_only)
                .find("parallel loop 'i' where the target allows no parallel loops"),
            std::string::npos);
  Var n = var("n");
  Stmt vectorized =
      make_ref<ForNode>(c.i, int_imm(0), n + 16, ForKind::kVectorized, "", Annotations{}, c.block());
  EXPECT_NE(problems_of(c.func(loop(n, 1, vectorized))).find("vectorized loop 'i' has a non-constant extent"),
            std::string::npos);
}

TEST(TirVerifier, ThreadTagBoundTwiceOnOnePathWithOtherExtent) {
  Copy c;
  VerifyOptions gpu;
  gpu.allow_thread_bindings = true;
  Var outer = var("tx");
  Stmt nest = loop(outer, 4, loop(c.i, 16, c.block(), ForKind::kThreadBound, "threadIdx.x"),
                   ForKind::kThreadBound, "threadIdx.x");
  EXPECT_NE(
      problems_of(c.func(nest), gpu).find("threadIdx.x is bound twice on one path, with extents 4 and 16"),
      std::string::npos);
}

TEST(TirVerifier, BarrierUnderThreadDependentCondition) {
  Copy c;
  VerifyOptions gpu;
  gpu.allow_thread_bindings = true;
  Stmt guarded = make_if(c.i < int_imm(8), make_seq({c.block(), make_barrier()}));
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, guarded, ForKind::kThreadBound, "threadIdx.x")), gpu)
                .find("barrier under a thread-dependent condition 'i < 8'"),
            std::string::npos);
  // The same condition on a blockIdx loop is uniform across the threads of a block.
  EXPECT_TRUE(
      verify_problems(c.func(loop(c.i, 16, guarded, ForKind::kThreadBound, "blockIdx.x")), gpu).empty());
}

TEST(TirVerifier, BarrierUnderThreadDependentLoopBoundsOrPredicate) {
  Copy c;
  VerifyOptions gpu;
  gpu.allow_thread_bindings = true;
  Var tx = var("tx");
  Stmt ragged = make_ref<ForNode>(c.i, int_imm(0), tx + 1, ForKind::kSerial, "", Annotations{},
                                  make_seq({c.block(), make_barrier()}));
  EXPECT_NE(problems_of(c.func(loop(tx, 4, ragged, ForKind::kThreadBound, "threadIdx.x")), gpu)
                .find("loop 'i' contains a barrier but its bounds depend on the thread"),
            std::string::npos);
  Var vo = var("vo");
  Stmt inner = make_seq({make_store(c.b, float_imm(0.0), {vo}), make_barrier()});
  Stmt guarded =
      block_of("G", {spatial(vo, 16)}, {c.i}, inner, {}, {{c.b, {{vo, int_imm(1)}}}}, c.i < int_imm(8));
  EXPECT_NE(problems_of(c.func(loop(c.i, 16, guarded, ForKind::kThreadBound, "threadIdx.x")), gpu)
                .find("block 'G' contains a barrier under a thread-dependent predicate"),
            std::string::npos);
}

TEST(TirVerifier, ShapesOfLoopsRegionsAndParameters) {
  Copy c;
  Stmt negative =
      make_ref<ForNode>(c.i, int_imm(0), int_imm(-1), ForKind::kSerial, "", Annotations{}, c.block());
  EXPECT_NE(problems_of(c.func(negative)).find("loop 'i' has negative extent -1"), std::string::npos);
  Stmt flat_region = block_of("B", {spatial(c.vi, 16)}, {c.i}, make_store(c.b, load(c.a, {c.vi}), {c.vi}),
                              {{c.a, {}}}, {{c.b, {{c.vi, int_imm(1)}}}});
  EXPECT_NE(
      problems_of(c.func(loop(c.i, 16, flat_region))).find("region of 'A' in block 'B' has 0 dimensions"),
      std::string::npos);
  PrimFunc twice = make_prim_func("twice", {c.a, c.a}, {c.b}, make_root_block(loop(c.i, 16, c.block()), {}));
  EXPECT_NE(problems_of(twice).find("buffer 'A' is a parameter twice"), std::string::npos);
}

}  // namespace
}  // namespace tessel::tir
