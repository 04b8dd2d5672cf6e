// partition_vector_loops: a vectorized loop split where its guards change;
// the middle reads without guard or clamp, and the whole still computes the
// same (interpreter).
#include "src/tir_passes/partition_loops.h"

#include <gtest/gtest.h>

#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"

namespace tessel {
namespace {

using namespace tir;

// P[r, i] = X[r - 1, i - 1] inside, 0 on the border: the guarded read of a
// padding stage, with its indices clamped as the conv lowering writes it.
PrimFunc pad_rows(ForKind inner_kind, int64_t width = 10) {
  Buffer x = make_buffer("X", DType::kF32, {3, width});
  Buffer p = make_buffer("P", DType::kF32, {5, width + 2});
  Var r = var("r"), i = var("i");
  Expr cond = logical_and(logical_and(r - 1 >= int_imm(0), r - 1 < int_imm(3)),
                          logical_and(i - 1 >= int_imm(0), i - 1 < int_imm(width)));
  Expr read = load(x, {max(min(r - 1, int_imm(2)), int_imm(0)), max(min(i - 1, int_imm(width - 1)), int_imm(0))});
  Stmt store = make_store(p, select(cond, read, float_imm(0.0)), {r, i});
  Stmt body = make_for(r, int_imm(0), int_imm(5), ForKind::kSerial,
                       make_for(i, int_imm(0), int_imm(width + 2), inner_kind, store));
  return make_prim_func("pad", {x}, {p}, body);
}

std::vector<Tensor> run(const PrimFunc& f, int64_t width = 10) {
  Tensor x(DType::kF32, {3, width});
  for (int64_t k = 0; k < x.numel(); ++k) x.data<float>()[k] = float(k) + 0.5f;
  return interpret(f, {x});
}

TEST(PartitionVectorLoops, TheMiddleOfAGuardedRowReadsWithoutGuardOrClamp) {
  PrimFunc f = tir_passes::partition_vector_loops(pad_rows(ForKind::kVectorized));
  std::string text = to_string(f);
  EXPECT_NE(text.find("P[r, 0] = 0.0f"), std::string::npos) << text;
  EXPECT_NE(text.find("for i in 1..11 vectorized:\n"
                      "      P[r, i] = select(r - 1 >= 0 && r - 1 < 3, X[max(min(r - 1, 2), 0), i - 1], 0.0f)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("P[r, 11] = 0.0f"), std::string::npos) << text;
  std::vector<Tensor> want = run(pad_rows(ForKind::kVectorized)), got = run(f);
  for (int64_t k = 0; k < want[0].numel(); ++k) EXPECT_EQ(got[0].data<float>()[k], want[0].data<float>()[k]) << k;
}

TEST(PartitionVectorLoops, LoopsWithoutVectorizedTestsAndShortMiddlesAreLeftWhole) {
  PrimFunc serial = pad_rows(ForKind::kSerial);
  EXPECT_EQ(to_string(tir_passes::partition_vector_loops(serial)), to_string(serial));
  PrimFunc narrow = pad_rows(ForKind::kVectorized, 3);  // a middle of 3 iterations
  EXPECT_EQ(to_string(tir_passes::partition_vector_loops(narrow, 4)), to_string(narrow));
  std::string split = to_string(tir_passes::partition_vector_loops(narrow, 3));
  EXPECT_NE(split.find("for i in 1..4 vectorized"), std::string::npos) << split;
}

// Guards the loop variable enters with coefficient -1 (a reversed read) and
// float comparisons (an activation's select) are handled or ignored soundly.
TEST(PartitionVectorLoops, ReversedIndicesAndFloatConditions) {
  Buffer x = make_buffer("X", DType::kF32, {16});
  Buffer y = make_buffer("Y", DType::kF32, {16});
  Var i = var("i");
  Expr j = int_imm(12) - i;  // in [0, 12) for i in (0, 12]
  Expr read = load(x, {max(min(j, int_imm(11)), int_imm(0))});
  Expr value = select(logical_and(j >= int_imm(0), j < int_imm(12)), read, float_imm(-1.0));
  value = select(value < float_imm(0.0), float_imm(0.0), value);
  PrimFunc f = make_prim_func(
      "rev", {x}, {y}, make_for(i, int_imm(0), int_imm(16), ForKind::kVectorized, make_store(y, value, {i})));
  PrimFunc split = tir_passes::partition_vector_loops(f);
  std::string text = to_string(split);
  EXPECT_NE(text.find("for i in 1..13 vectorized"), std::string::npos) << text;
  Tensor in(DType::kF32, {16});
  for (int k = 0; k < 16; ++k) in.data<float>()[k] = float(k % 5) - 1.5f;
  Tensor want = interpret(f, {in})[0], got = interpret(split, {in})[0];
  for (int k = 0; k < 16; ++k) EXPECT_EQ(got.data<float>()[k], want.data<float>()[k]) << k;
}

// acc[j] += select(k < 3, A[k, j], B[k - 3, j]) over k in 0..5, j vectorized:
// the k loop splits at 3, each part reading one input without a select.
TEST(PartitionVectorLoops, ASerialLoopSplitsWhereAVectorLoopInsideTestsIt) {
  Buffer a = make_buffer("A", DType::kF32, {3, 8}), b = make_buffer("B", DType::kF32, {2, 8});
  Buffer acc = make_buffer("acc", DType::kF32, {8});
  Var k = var("k"), j = var("j");
  Expr read = select(k < int_imm(3), load(a, {min(k, int_imm(2)), j}), load(b, {max(k - 3, int_imm(0)), j}));
  Stmt update = make_store(acc, load(acc, {j}) + read, {j});
  Var j0 = var("j0");
  Stmt init = make_for(j0, int_imm(0), int_imm(8), ForKind::kVectorized, make_store(acc, float_imm(0.0), {j0}));
  Stmt body = make_seq({init, make_for(k, int_imm(0), int_imm(5), ForKind::kSerial,
                                       make_for(j, int_imm(0), int_imm(8), ForKind::kVectorized, update))});
  PrimFunc f = make_prim_func("concat_sum", {a, b}, {acc}, body);
  PrimFunc split = tir_passes::partition_vector_loops(f, 2);
  std::string text = to_string(split);
  EXPECT_EQ(text.find("select"), std::string::npos) << text;
  EXPECT_NE(text.find("in 0..3:"), std::string::npos) << text;
  EXPECT_NE(text.find("in 3..5:"), std::string::npos) << text;
  Tensor ta(DType::kF32, {3, 8}), tb(DType::kF32, {2, 8});
  for (int i = 0; i < 24; ++i) ta.data<float>()[i] = float(i);
  for (int i = 0; i < 16; ++i) tb.data<float>()[i] = 100.0f - float(i);
  Tensor want = interpret(f, {ta, tb})[0], got = interpret(split, {ta, tb})[0];
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got.data<float>()[i], want.data<float>()[i]) << i;
}

// acc[j] += the k-th row of a Concat of four inputs (a select chain on k),
// k in 0..10: the k loop is cut at every input's end, four loops each
// reading one input without a select.
TEST(PartitionVectorLoops, ASerialLoopOverAConcatOfFourIsCutAtEveryInput) {
  const int64_t ends[] = {3, 5, 8, 10};
  std::vector<Buffer> in;
  for (int p = 0; p < 4; ++p)
    in.push_back(make_buffer("I" + std::to_string(p), DType::kF32, {ends[p] - (p ? ends[p - 1] : 0), 8}));
  Buffer acc = make_buffer("acc", DType::kF32, {8});
  Var k = var("k"), j = var("j"), j0 = var("j0");
  auto row = [&](int p) {
    int64_t start = p ? ends[p - 1] : 0;
    return load(in[size_t(p)], {max(min(k - start, int_imm(ends[p] - start - 1)), int_imm(0)), j});
  };
  Expr read = row(3);
  for (int p = 2; p >= 0; --p) read = select(k < int_imm(ends[p]), row(p), read);
  Stmt init =
      make_for(j0, int_imm(0), int_imm(8), ForKind::kVectorized, make_store(acc, float_imm(0.0), {j0}));
  Stmt update = make_store(acc, load(acc, {j}) + read, {j});
  Stmt body = make_seq({init, make_for(k, int_imm(0), int_imm(10), ForKind::kSerial,
                                       make_for(j, int_imm(0), int_imm(8), ForKind::kVectorized, update))});
  PrimFunc f = make_prim_func("concat4_sum", in, {acc}, body);
  PrimFunc split = tir_passes::partition_vector_loops(f, 2);
  std::string text = to_string(split);
  EXPECT_EQ(text.find("select"), std::string::npos) << text;
  for (const char* range : {"in 0..3:", "in 3..5:", "in 5..8:", "in 8..10:"})
    EXPECT_NE(text.find(range), std::string::npos) << range << "\n" << text;
  std::vector<Tensor> args;
  for (int p = 0; p < 4; ++p) {
    Tensor t(DType::kF32, in[size_t(p)]->shape);
    for (int64_t e = 0; e < t.numel(); ++e) t.data<float>()[e] = float(p * 100 + e);
    args.push_back(t);
  }
  Tensor want = interpret(f, args)[0], got = interpret(split, args)[0];
  for (int e = 0; e < 8; ++e) EXPECT_EQ(got.data<float>()[e], want.data<float>()[e]) << e;
}

// The stride-phase copy of a padded row, P[p, i] = X[2 * i + p - 1] (zero
// outside X), the phase p a loop around the vector loop: the tests hold for
// every phase where 1 <= i < 8, so that is the middle, read unguarded.
TEST(PartitionVectorLoops, AStridedGuardSplitsWhereItHoldsForEveryValueOfTheLoopsAround) {
  const int64_t width = 16;
  Buffer x = make_buffer("X", DType::kF32, {width});
  Buffer p = make_buffer("P", DType::kF32, {2, width / 2 + 1});
  Var ph = var("p"), i = var("i");
  Expr at = i * 2 + ph - 1;
  Expr read = load(x, {max(min(at, int_imm(width - 1)), int_imm(0))});
  Expr value = select(logical_and(at >= int_imm(0), at < int_imm(width)), read, float_imm(0.0));
  Stmt body = make_for(
      ph, int_imm(0), int_imm(2), ForKind::kSerial,
      make_for(i, int_imm(0), int_imm(width / 2 + 1), ForKind::kVectorized, make_store(p, value, {ph, i})));
  PrimFunc f = make_prim_func("phases", {x}, {p}, body);
  PrimFunc split = tir_passes::partition_vector_loops(f);
  std::string text = to_string(split);
  EXPECT_NE(text.find("for i in 1..8 vectorized:\n      P[p, i] = X[i * 2 + p - 1]"), std::string::npos)
      << text;
  Tensor in(DType::kF32, {width});
  for (int k = 0; k < width; ++k) in.data<float>()[k] = float(k) + 0.25f;
  Tensor want = interpret(f, {in})[0], got = interpret(split, {in})[0];
  for (int64_t k = 0; k < want.numel(); ++k) EXPECT_EQ(got.data<float>()[k], want.data<float>()[k]) << k;
}

}  // namespace
}  // namespace tessel
