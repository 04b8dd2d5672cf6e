// Tests of the prefetch primitive: the next weight panel is asked for in
// equal parts over the loops that stream it, the function computes the same,
// the trace replays it, and requests it cannot serve fail with their reason.
#include "schedules/schedule.h"
#include "schedules/trace.h"
#include "tests/unit/sched_block_test_util.h"

namespace tessel::block_test {
namespace {

// C[m, n] = sum_k A[m, k] * W[n // 4, k, n % 4]: W packed in panels of 4 columns.
PrimFunc make_panel_matmul(int64_t M, int64_t N, int64_t K) {
  LowerContext ctx("panel_matmul");
  TensorExpr a = ctx.input("A", DType::kF32, {M, K}), w = ctx.input("W", DType::kF32, {N / 4, K, 4});
  TensorExpr c = ctx.reduce(
      "C", {M, N}, DType::kF32, {K}, Combiner::kSum,
      [&](const std::vector<Expr>& s, const std::vector<Expr>& r) {
        return a.at({s[0], r[0]}) * w.at({floordiv(s[1], int_imm(4)), r[0], floormod(s[1], int_imm(4))});
      });
  ctx.output("C", c);
  return ctx.finish();
}

// Loops [n0 (panels), m, k, n1]: each panel is read by every row.
struct PanelSchedule {
  sched::Schedule sch;
  sched::BlockRV block;
  std::vector<sched::LoopRV> loops;  // n0, m, k, n1
};

PanelSchedule panels_outside(const PrimFunc& f) {
  PanelSchedule p{sched::Schedule(f), {}, {}};
  p.block = p.sch.get_block("C");
  std::vector<sched::LoopRV> l = p.sch.get_loops(p.block);  // m, n, k
  std::vector<sched::LoopRV> n = p.sch.split(l[1], {sched::Factor(-1), sched::Factor(4)}, true);
  p.sch.reorder({n[0], l[0], l[2], n[1]});
  p.loops = {n[0], l[0], l[2], n[1]};
  return p;
}

TEST(SchedPrefetch, StreamsTheNextPanelOverTheRowsAndTheReduction) {
  // A panel of W is 64 x 4 floats = 16 lines; the stream (m, k) has 3 x 64
  // steps: each asks for one line, 12 steps in a row for the same one, and
  // none past the next panel.
  PrimFunc f = make_panel_matmul(3, 16, 64);
  PanelSchedule p = panels_outside(f);
  p.sch.prefetch(p.block, read_index(f, "C", "W"), p.loops[2]);
  std::string text = to_string(p.sch.func());
  EXPECT_NE(text.find("prefetch(W, min(i1_0 + 1, 3) * 256 + (i0 * 64 + k2) // 12 * 16, 1 line)"),
            std::string::npos)
      << text;
  expect_equivalent(f, p.sch.func());
  // Replayed from its trace (through JSON), the schedule is the same function.
  sched::Schedule again(f);
  sched::Trace::from_json(p.sch.trace().to_json()).apply(again);
  EXPECT_EQ(to_string(again.func()), text);
}

TEST(SchedPrefetch, FewStepsAskForSeveralLinesEach) {
  // 16 lines of the next panel over the 8 steps of k alone (one row): 2 per step.
  PrimFunc f = make_panel_matmul(1, 8, 64);
  PanelSchedule p = panels_outside(f);
  std::vector<sched::LoopRV> k = p.sch.split(p.loops[2], {sched::Factor(8), sched::Factor(-1)}, true);
  p.sch.prefetch(p.block, read_index(f, "C", "W"), k[0]);
  std::string text = to_string(p.sch.func());
  EXPECT_NE(text.find(", 2 lines)"), std::string::npos) << text;
  expect_equivalent(f, p.sch.func());
}

TEST(SchedPrefetch, Rejections) {
  PrimFunc f = make_panel_matmul(3, 16, 64);
  PanelSchedule p = panels_outside(f);
  PrimFunc g = p.sch.func();
  std::vector<const VarNode*> loops = loops_of(g, "C");  // i1_0 (panels), i0 (rows), k2, i1_1
  const VarNode *n0 = loops[0], *k = loops[2];
  expect_error([&] { sched::prefetch(g, "C", read_index(g, "C", "W"), n0); }, "prefetch.slice_varies",
               "changes inside");
  expect_error([&] { sched::prefetch(g, "C", 7, k); }, "prefetch.bad_index", "index 7");
  // A's rows are its slices, and its row loop is m: a prefetch inside m streams the next row.
  EXPECT_NO_THROW(sched::prefetch(g, "C", read_index(g, "C", "A"), k));
  PrimFunc two = make_two_stage(6, 5, 4);
  expect_error([&] { sched::prefetch(two, "C", read_index(two, "C", "B"), loops_of(two, "C")[2]); },
               "prefetch.not_parameter", "'B'");
}

}  // namespace
}  // namespace tessel::block_test
