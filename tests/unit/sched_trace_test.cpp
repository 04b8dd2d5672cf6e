// Traces: JSON round trip, replay on a fresh function, decision mutation (a
// different but still correct function), illegal decisions, malformed JSON,
// and the sampling rules behind the decisions.
#include <gtest/gtest.h>

#include <set>

#include "ir/tensor/structural.h"
#include "schedules/primitives/loop_primitives.h"
#include "tests/unit/sched_test_util.h"

namespace tessel::sched_test {
namespace {

using sched::BlockRV;
using sched::IntRV;
using sched::LoopRV;
using sched::Trace;

// A tiled matmul: i split by a sampled perfect tile, j by 4, k between the
// outer and the inner tiles, the outer tile parallel, the inner j vectorized.
void schedule_tiled_matmul(Schedule& sch) {
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<IntRV> tile = sch.sample_perfect_tile(loops[0], 2, 8);
  std::vector<LoopRV> i = sch.split(loops[0], {tile[0], tile[1]});
  std::vector<LoopRV> j = sch.split(loops[1], {-1, 4});
  sch.reorder({i[0], j[0], loops[2], i[1], j[1]});
  sch.parallel(i[0]);
  sch.vectorize(j[1]);
  IntRV unroll = sch.sample_categorical({0, 16, 64}, {0.5, 0.25, 0.25});
  sch.annotate(c, "auto_unroll_max", sch.value(unroll));
}

PrimFunc matmul() {
  return make_matmul_func(16, 12, 8);
}

size_t index_of(const Trace& trace, const std::string& kind) {
  for (size_t i = 0; i < trace.size(); ++i)
    if (trace.instructions()[i].kind == kind) return i;
  ADD_FAILURE() << "no " << kind << " in the trace";
  return 0;
}

TEST(SchedTrace, JsonRoundTrip) {
  Schedule sch(matmul(), /*seed=*/3);
  schedule_tiled_matmul(sch);
  std::string json = sch.trace().to_json();
  EXPECT_NE(json.find("\"kind\":\"sample_perfect_tile\""), std::string::npos) << json;
  Trace back = Trace::from_json(json);
  EXPECT_EQ(back, sch.trace());
  EXPECT_EQ(back.to_json(), json);
}

TEST(SchedTrace, ReplayOnFreshFunctionGivesTheSameFunction) {
  Schedule sch(matmul(), /*seed=*/11);
  schedule_tiled_matmul(sch);
  Schedule fresh(matmul(), /*seed=*/999);  // the recorded decisions win over the seed
  Trace::from_json(sch.trace().to_json()).apply(fresh);
  EXPECT_TRUE(structural_equal(fresh.func(), sch.func())) << fresh.func() << "\nvs\n" << sch.func();
  EXPECT_EQ(fresh.trace().to_json(), sch.trace().to_json());
  expect_same_results(matmul(), fresh.func());
}

TEST(SchedTrace, SameSeedSameSamples) {
  Schedule a(matmul(), 5), b(matmul(), 5);
  schedule_tiled_matmul(a);
  schedule_tiled_matmul(b);
  EXPECT_EQ(a.trace().to_json(), b.trace().to_json());
}

TEST(SchedTrace, MutatedTileDecisionGivesAnotherCorrectFunction) {
  Schedule sch(matmul(), /*seed=*/1);
  schedule_tiled_matmul(sch);
  size_t at = index_of(sch.trace(), "sample_perfect_tile");
  std::vector<int64_t> old = *sch.trace().instructions()[at].decision;
  std::vector<int64_t> other = old[1] == 2 ? std::vector<int64_t>{4, 4} : std::vector<int64_t>{8, 2};
  Schedule mutated(matmul());
  sch.trace().with_decision(at, other).apply(mutated);
  EXPECT_FALSE(structural_equal(mutated.func(), sch.func()));
  EXPECT_EQ(*mutated.trace().instructions()[at].decision, other);
  expect_same_results(matmul(), mutated.func());
}

TEST(SchedTrace, IllegalDecisionFailsTheReplay) {
  Schedule sch(matmul(), /*seed=*/2);
  schedule_tiled_matmul(sch);
  size_t tile = index_of(sch.trace(), "sample_perfect_tile");
  size_t category = index_of(sch.trace(), "sample_categorical");
  auto replay_fails = [&](const Trace& trace, const std::string& substring) {
    Schedule fresh(matmul());
    try {
      trace.apply(fresh);
      ADD_FAILURE() << "replay accepted an illegal decision";
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), "sample.invalid_decision");
      EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
    }
  };
  replay_fails(sch.trace().with_decision(tile, {3, 5}), "multiplies to 15");
  replay_fails(sch.trace().with_decision(tile, {1, 16}), "innermost factor exceeds 8");
  replay_fails(sch.trace().with_decision(tile, {16}), "does not have 2 factors");
  replay_fails(sch.trace().with_decision(category, {3}), "not an index into 3 candidates");
  EXPECT_THROW(sch.trace().with_decision(0, {1}), std::invalid_argument);  // get_block samples nothing
  EXPECT_THROW(sch.trace().with_decision(sch.trace().size(), {1}), std::invalid_argument);
}

// A cache read of the relu's input, and the matmul computed at a sampled
// loop of the copy; every decision replays to a correct, distinct function.
TEST(SchedTrace, ComputeLocationDecisionsReplay) {
  PrimFunc func = make_matmul_relu_func(8, 6, 4);
  Schedule sch(func, /*seed=*/4);
  BlockRV c = sch.get_block("C");
  BlockRV copy = sch.cache_read(sch.get_block("D"), 0, MemScope::kLocal);
  EXPECT_EQ(sch.block_name(copy), "C_local");
  std::optional<LoopRV> at = sch.sample_compute_location(c, /*decision=*/1);
  ASSERT_TRUE(at.has_value());
  sch.compute_at(c, *at);
  expect_same_results(func, sch.func());
  Trace trace = Trace::from_json(sch.trace().to_json());
  EXPECT_EQ(trace, sch.trace());
  size_t sample = index_of(trace, "sample_compute_location");
  std::set<uint64_t> shapes;
  for (int64_t decision : {-1, 0, 1}) {
    Schedule replay(make_matmul_relu_func(8, 6, 4));
    trace.with_decision(sample, {decision}).apply(replay);
    expect_same_results(func, replay.func());
    shapes.insert(structural_hash(replay.func()));
    if (decision == 1) {
      EXPECT_TRUE(structural_equal(replay.func(), sch.func()));
    }
  }
  EXPECT_EQ(shapes.size(), 3u);
  Schedule replay(func);
  try {
    trace.with_decision(sample, {2}).apply(replay);
    ADD_FAILURE() << "a decision past the legal locations replayed";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), "sample.invalid_decision");
    EXPECT_NE(std::string(e.what()).find("which has 2 legal locations"), std::string::npos) << e.what();
  }
}

// The trace of `sch` survives JSON and replays on `fresh` to the same function.
void expect_replays(const Schedule& sch, const PrimFunc& original, const PrimFunc& fresh) {
  std::string json = sch.trace().to_json();
  Trace trace = Trace::from_json(json);
  EXPECT_EQ(trace.to_json(), json);
  Schedule replay(fresh);
  trace.apply(replay);
  EXPECT_TRUE(structural_equal(replay.func(), sch.func())) << replay.func() << "\nvs\n" << sch.func();
  EXPECT_EQ(replay.trace().to_json(), json);
  expect_same_results(original, replay.func());
}

TEST(SchedTrace, BlockPrimitivesRecordAndReplay) {
  auto func = [] { return make_matmul_relu_func(8, 6, 4); };
  Schedule fused(func());
  BlockRV c = fused.get_block("C"), d = fused.get_block("D");
  std::vector<LoopRV> loops = fused.get_loops(c);
  fused.storage_align(c, 0, 0, 8, 1);
  fused.reverse_compute_at(d, loops[1]);
  BlockRV init = fused.decompose_reduction(c, loops[2]);
  EXPECT_EQ(fused.block_name(init), "C_init");
  expect_replays(fused, func(), func());

  Schedule factored(func());
  BlockRV rf = factored.rfactor(factored.get_loops(factored.get_block("C"))[2], 0);
  EXPECT_EQ(factored.block_name(rf), "C_rf");
  BlockRV copy = factored.cache_write(factored.get_block("D"), 0, MemScope::kLocal);
  factored.reverse_compute_inline(copy);
  expect_replays(factored, func(), func());

  Schedule inlined(func());
  BlockRV relu = inlined.get_block("D");
  inlined.cache_write(relu, 0, MemScope::kLocal);
  inlined.compute_inline(relu);
  expect_rejected(
      inlined, [&] { inlined.get_loops(relu); }, "handle.stale", "block D");
  expect_replays(inlined, func(), func());
}

void expect_malformed(const std::string& json, const std::string& substring) {
  try {
    Trace::from_json(json);
    ADD_FAILURE() << "accepted " << json;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  }
}

TEST(SchedTrace, MalformedJsonIsRejectedClearly) {
  expect_malformed("{\"version\":1,", "not valid JSON");
  expect_malformed("[]", "expected an object with \"version\" and \"instructions\"");
  expect_malformed("{\"version\":2,\"instructions\":[]}", "expected 1, got 2");
  expect_malformed("{\"version\":1,\"instructions\":[{\"kind\":\"tile\",\"inputs\":[],\"outputs\":[]}]}",
                   "instruction 0: unknown instruction kind \"tile\"");
  expect_malformed(
      "{\"version\":1,\"instructions\":[{\"kind\":\"get_loops\",\"inputs\":[[\"loopy\",0]],\"outputs\":[]}]}",
      "unknown operand kind \"loopy\"");
  expect_malformed("{\"version\":1,\"instructions\":[{\"kind\":\"parallel\",\"inputs\":[]}]}",
                   "needs \"inputs\" and \"outputs\"");
  expect_malformed(
      "{\"version\":1,\"instructions\":[{\"kind\":\"get_block\",\"inputs\":[],\"outputs\":[],"
      "\"decision\":[\"x\"]}]}",
      "\"decision\" is an array of integers");
  // Well-formed JSON whose instructions do not fit together fails at replay.
  Trace dangling = Trace::from_json(
      "{\"version\":1,\"instructions\":[{\"kind\":\"parallel\",\"inputs\":[[\"loop\",4]],\"outputs\":[]}]}");
  Schedule sch(matmul());
  EXPECT_THROW(dangling.apply(sch), std::invalid_argument);
  EXPECT_EQ(sch.trace().size(), 0u);
}

TEST(SchedSampling, PerfectTilingsAreExactlyTheFactorizations) {
  using Tiles = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(sched::perfect_tilings(8, 2, 8), (Tiles{{1, 8}, {2, 4}, {4, 2}, {8, 1}}));
  EXPECT_EQ(sched::perfect_tilings(8, 2, 2), (Tiles{{4, 2}, {8, 1}}));
  EXPECT_EQ(sched::perfect_tilings(12, 3, 12).size(), 18u);  // ordered triples with product 12
  EXPECT_EQ(sched::perfect_tilings(7, 1, 4).size(), 0u);
}

TEST(SchedSampling, SamplesCoverTheChoicesAndRespectTheBounds) {
  Schedule sch(matmul(), /*seed=*/17);
  LoopRV i = sch.get_loops(sch.get_block("C"))[0];
  std::set<std::vector<int64_t>> seen;
  for (int round = 0; round < 200; ++round) {
    std::vector<IntRV> tile = sch.sample_perfect_tile(i, 3, 4);
    std::vector<int64_t> values;
    for (IntRV v : tile) values.push_back(sch.value(v));
    EXPECT_EQ(values[0] * values[1] * values[2], 16);
    EXPECT_LE(values[2], 4);
    seen.insert(values);
  }
  EXPECT_EQ(seen.size(), sched::perfect_tilings(16, 3, 4).size());
  std::set<int64_t> picked;
  for (int round = 0; round < 50; ++round)
    picked.insert(sch.value(sch.sample_categorical({10, 20, 30}, {0, 1, 1})));
  EXPECT_EQ(picked, (std::set<int64_t>{20, 30}));
  expect_rejected(
      sch,
      [&] {
        sch.sample_categorical({1, 2}, {1});
      },
      "sample_categorical.bad_request", "as many of each");
  expect_rejected(
      sch,
      [&] {
        sch.sample_perfect_tile(i, 2, 8, std::vector<int64_t>{2, 9});
      },
      "sample.invalid_decision", "multiplies to 18");
}

}  // namespace
}  // namespace tessel::sched_test
