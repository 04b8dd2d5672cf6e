// Tests of compute_inline and reverse_compute_inline.
#include "tests/unit/sched_block_test_util.h"

namespace tessel::block_test {
namespace {

using sched::compute_inline;
using sched::reverse_compute_inline;

// B = A * 2, then D = B + 1 (the output); with `transpose`, D[n, m] = B[m, n] + 1;
// with `extra_reader`, also E = B * 3 (a second output).
PrimFunc make_chain(int64_t M, int64_t N, bool transpose, bool extra_reader = false) {
  LowerContext ctx("chain");
  TensorExpr a = ctx.input("A", DType::kF32, {M, N});
  TensorExpr b = ctx.compute("B", {M, N}, DType::kF32,
                             [&](const std::vector<Expr>& i) { return a.at(i) * float_imm(2); });
  std::vector<int64_t> shape = transpose ? std::vector<int64_t>{N, M} : std::vector<int64_t>{M, N};
  TensorExpr d = ctx.compute("D", shape, DType::kF32, [&](const std::vector<Expr>& i) {
    return b.at(transpose ? std::vector<Expr>{i[1], i[0]} : i) + float_imm(1);
  });
  ctx.output("D", d);
  if (extra_reader) {
    TensorExpr e = ctx.compute("E", {M, N}, DType::kF32,
                               [&](const std::vector<Expr>& i) { return b.at(i) * float_imm(3); });
    ctx.output("E", e);
  }
  return ctx.finish();
}

bool has_alloc(const PrimFunc& f, const std::string& name) {
  for (const Buffer& b : sched::root_block(f)->alloc_buffers)
    if (b->name == name) return true;
  return false;
}

TEST(SchedBlockInline, ElementwiseProducerIntoAReduction) {
  PrimFunc f = make_two_stage(6, 5, 4);
  PrimFunc g = compute_inline(f, "B");
  EXPECT_FALSE(sched::find_block(g, "B").defined());
  EXPECT_FALSE(has_alloc(g, "B"));
  const BlockNode& c = block_of(g, "C");
  for (const BufferRegion& r : c.reads) EXPECT_NE(r.buffer->name, "B");
  expect_equivalent(f, g);
}

TEST(SchedBlockInline, PaddingSelectIntoTheConvolution) {
  PrimFunc f = make_conv(5, 4);
  PrimFunc g = compute_inline(f, "pad");
  EXPECT_FALSE(sched::find_block(g, "pad").defined());
  expect_equivalent(f, g);
}

TEST(SchedBlockInline, IntoEveryConsumer) {
  PrimFunc f = make_chain(3, 4, false, true);
  PrimFunc g = compute_inline(f, "B");
  EXPECT_FALSE(has_alloc(g, "B"));
  expect_equivalent(f, g);
}

TEST(SchedBlockInline, Rejections) {
  PrimFunc f = make_two_stage(6, 5, 4);
  expect_error([&] { compute_inline(f, "C"); }, "compute_inline.not_complete", "block 'C' is a reduction");
  PrimFunc s = make_softmax(3, 4);
  expect_error([&] { compute_inline(s, "mx"); }, "compute_inline.not_complete", "reduction");
  expect_error([&] { compute_inline(s, "out"); }, "compute_inline.output_block", "not an intermediate");
  PrimFunc r = make_reversed(5);
  expect_error([&] { compute_inline(r, "T"); }, "compute_inline.not_injective",
               "distinct iteration variables");
  PrimFunc d = sched::decompose_reduction(f, "C", loops_of(f, "C")[0]).func;
  expect_error([&] { compute_inline(d, "C_init"); }, "compute_inline.output_block", "'C'");
}

TEST(SchedBlockReverseInline, ConsumerIntoItsProducer) {
  PrimFunc f = make_chain(3, 4, false);
  PrimFunc g = reverse_compute_inline(f, "D");
  EXPECT_FALSE(sched::find_block(g, "D").defined());
  EXPECT_FALSE(has_alloc(g, "B"));
  EXPECT_EQ(block_of(g, "B").writes[0].buffer->name, "D");
  expect_equivalent(f, g);
  PrimFunc t = make_chain(3, 4, true);
  expect_equivalent(t, reverse_compute_inline(t, "D"));
  // The producer stores at T[n - 1 - v]: O's element becomes O[n - 1 - v].
  PrimFunc r = make_reversed(5);
  expect_equivalent(r, reverse_compute_inline(r, "O"));
}

TEST(SchedBlockReverseInline, Rejections) {
  PrimFunc relu = make_matmul_relu(3, 4, 2);
  expect_error([&] { reverse_compute_inline(relu, "D"); }, "reverse_compute_inline.producer_not_complete",
               "producer 'C' is not a complete block");
  PrimFunc s = make_softmax(3, 4);
  expect_error([&] { reverse_compute_inline(s, "out"); }, "reverse_compute_inline.producer_count",
               "reads 2 buffers");
  PrimFunc two = make_chain(3, 4, false, true);
  expect_error([&] { reverse_compute_inline(two, "D"); }, "reverse_compute_inline.other_consumers",
               "read by blocks other than 'D'");
  PrimFunc f = make_two_stage(6, 5, 4);
  expect_error([&] { reverse_compute_inline(f, "C"); }, "reverse_compute_inline.not_complete", "reduction");
  expect_error([&] { reverse_compute_inline(f, "B"); }, "reverse_compute_inline.producer_count",
               "reads 0 buffers");
  // D reads only rows 0..1 of B: the producer would write D outside its shape.
  LowerContext ctx("slice");
  TensorExpr a = ctx.input("A", DType::kF32, {3, 4});
  TensorExpr b = ctx.compute("B", {3, 4}, DType::kF32,
                             [&](const std::vector<Expr>& i) { return a.at(i) + float_imm(1); });
  TensorExpr d = ctx.compute("D", {2, 4}, DType::kF32, [&](const std::vector<Expr>& i) { return b.at(i); });
  ctx.output("D", d);
  PrimFunc slice = ctx.finish();
  expect_error([&] { reverse_compute_inline(slice, "D"); }, "reverse_compute_inline.partial_read",
               "only part");
}

}  // namespace
}  // namespace tessel::block_test
