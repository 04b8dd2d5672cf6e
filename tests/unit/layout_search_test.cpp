// Conv layouts as part of the tuner's search space: the candidates of each
// kind of conv (the default's first), the choices a log or a session's
// alternative makes, every alternative of a model's convs compiled against
// the reference, and the decision a session takes from measured kernels.
#include <gtest/gtest.h>

#include <set>

#include "schedules/defaults/cpu_layouts.h"
#include "src/driver/check_job.h"
#include "src/driver/compile_model.h"
#include "src/driver/run_inputs.h"
#include "src/driver/tune_layouts.h"
#include "src/driver/tune_session.h"
#include "src/reference/executor.h"
#include "tessel/error.h"
#include "tests/unit/graph_build_util.h"

namespace tessel {
namespace {

using lower::ConvForm;
using lower::ConvLayout;
using lower::ConvShape;

ConvShape conv2d(int64_t m, int64_t plane, int64_t k, int64_t group = 1, int64_t in_per_group = 16,
                 int64_t stride = 1) {
  int64_t pad = (k - 1) / 2;
  return {{1, m, plane, plane}, {k, k}, {stride, stride}, {1, 1},   {pad, pad},
          {pad, pad},           group,  in_per_group,     m / group};
}

std::vector<std::string> candidates(const ConvShape& c, int lanes = 16) {
  sched::CpuScheduleOptions o;
  o.vector_lanes = lanes;
  std::vector<std::string> out;
  for (const ConvLayout& l : sched::cpu_conv_layout_candidates(c, o)) out.push_back(lower::to_string(l));
  return out;
}

TEST(ConvLayoutCandidates, TheDefaultFirstThenEachFormOfWholeVectors) {
  EXPECT_EQ(candidates(conv2d(64, 56, 3)),
            (std::vector<std::string>{"flat align 48", "channels-last align 1", "direct"}));
  EXPECT_EQ(candidates(conv2d(512, 7, 3)),
            (std::vector<std::string>{"channels-last align 1", "flat align 16", "direct"}))
      << "listed as if packed: the packing pass and the lowering see the same list";
  EXPECT_EQ(candidates(conv2d(64, 7, 1)),
            (std::vector<std::string>{"flat-pointwise align 16", "flat align 16", "channels-last align 1",
                                      "direct"}));
  EXPECT_EQ(candidates(conv2d(32, 56, 3, 32, 1)), (std::vector<std::string>{"direct", "flat align 48"}))
      << "depthwise: no channels-last (one channel per group)";
  EXPECT_EQ(candidates(conv2d(32, 3, 3, 32, 1)), (std::vector<std::string>{"flat align 16", "direct"}))
      << "depthwise with ragged rows: flat by default";
  EXPECT_EQ(candidates(conv2d(24, 14, 3), 16), (std::vector<std::string>{"flat align 16", "direct"}))
      << "24 channels: not whole vectors of 16";
  EXPECT_EQ(candidates(conv2d(256, 13, 3)),
            (std::vector<std::string>{"channels-last align 8", "flat align 16", "channels-last align 1", "direct"}))
      << "169 positions padded to 176 by default, or tiles of 13 rows";
  EXPECT_EQ(candidates(conv2d(64, 1, 1)),
            (std::vector<std::string>{"direct", "flat align 16", "channels-last align 8", "channels-last align 1"}))
      << "a squeeze-excite conv: one position, one vector of positions or one row";
  ConvShape one_d{{1, 16, 40}, {3}, {1}, {1}, {1}, {1}, 1, 4, 16};
  EXPECT_EQ(candidates(one_d), (std::vector<std::string>{"direct"}));
}

lower::LayoutChoices searched(std::map<std::string, ConvLayout> decided, int alternative) {
  sched::CpuScheduleOptions o;
  o.vector_lanes = 16;
  return sched::searched_cpu_layouts(o, std::move(decided), alternative);
}

TEST(SearchedLayouts, ALogsDecisionOrAnAlternativeReplacesTheDefault) {
  ConvShape c = conv2d(64, 56, 3);
  c.weight_channels_last = true;
  EXPECT_EQ(lower::to_string(searched({}, 0).conv_layout(c)), "flat align 48");
  EXPECT_EQ(lower::to_string(searched({}, 1).conv_layout(c)), "channels-last align 1");
  EXPECT_EQ(lower::to_string(searched({}, 2).conv_layout(c)), "direct");
  EXPECT_EQ(lower::to_string(searched({}, 3).conv_layout(c)), "flat align 48") << "no fourth: the default";
  std::string key = lower::conv_key(c);
  EXPECT_EQ(key, "conv 1x64x56x56 k3x3 s1x1 d1x1 p1,1,1,1 g1 c16");
  EXPECT_EQ(lower::to_string(searched({{key, {ConvForm::kDirect, 1}}}, 0).conv_layout(c)), "direct");
  EXPECT_EQ(lower::to_string(searched({{key, {ConvForm::kFlat, 7}}}, 0).conv_layout(c)), "flat align 48")
      << "a decision that is not one of the conv's candidates is not taken";
  ConvShape unpacked = c;
  unpacked.weight_channels_last = false;
  EXPECT_EQ(lower::conv_key(unpacked), key) << "the key leaves out whether the weight is packed yet";
  EXPECT_EQ(lower::to_string(searched({}, 1).conv_layout(unpacked)), "flat align 48")
      << "channels-last without a packed weight: the default's";
  for (ConvForm f : {ConvForm::kDirect, ConvForm::kFlat, ConvForm::kFlatPointwise, ConvForm::kChannelsLast})
    EXPECT_EQ(lower::conv_form_named(lower::conv_form_name(f)), f);
  EXPECT_FALSE(lower::conv_form_named("nchw16c").has_value());
}

// A constant f32 weight, small distinct values.
Tensor weight(int64_t m, int64_t c, int64_t k) {
  Tensor w(DType::kF32, {m, c, k, k});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = float((i * 37) % 17 - 8) / 64;
  return w;
}

graph::Value* conv(graph::Graph& g, graph::Value* x, int64_t m, int64_t k, int64_t group, int64_t stride) {
  int64_t c = x->type.static_dims()[1], pad = (k - 1) / 2;
  graph::Attrs attrs;
  attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  attrs.set("strides", std::vector<int64_t>{stride, stride});
  attrs.set("group", group);
  graph::Value* w = g.add_constant("W" + std::to_string(g.num_nodes()), weight(m, c / group, k));
  return add(g, "Relu", {add(g, "Conv", {x, w}, attrs)->outputs[0]})->outputs[0];
}

// Each kind of conv a CNN has: dense 3x3, depthwise strided, pointwise,
// grouped, dense strided.
graph::Graph cnn() {
  graph::Graph g;
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, 16, 14, 14}));
  x = conv(g, x, 32, 3, 1, 1);
  x = conv(g, x, 32, 3, 32, 2);
  x = conv(g, x, 64, 1, 1, 1);
  x = conv(g, x, 64, 3, 4, 1);
  x = conv(g, x, 32, 3, 1, 2);
  g.set_outputs({x});
  return g;
}

TEST(LayoutSearchCompile, EveryAlternativeOfEveryConvMatchesTheReference) {
  std::map<std::string, std::set<std::string>> seen;  // conv -> layouts compiled
  for (int alternative = 0; alternative < 4; ++alternative) {
    SCOPED_TRACE(alternative);
    graph::Graph g = cnn();
    driver::CompileOptions options;
    options.layout_alternative = alternative;
    driver::CompiledGraph compiled = driver::compile_graph(g, options);
    for (const driver::CompiledKernel& k : compiled.kernels)
      for (const auto& [key, layout] : k.conv_layouts) seen[key].insert(lower::to_string(layout));
    driver::JitModel model(std::move(compiled));
    graph::Graph reference_graph = cnn();
    std::vector<Tensor> inputs = driver::random_inputs(reference_graph, 5);
    std::vector<Tensor> want = reference::Executor(reference_graph).run(inputs);
    std::vector<Tensor> got = model.run(inputs);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_LE(driver::error_stats(got[0], want[0]).max_rel, 1e-5);
  }
  ASSERT_EQ(seen.size(), 5u);
  std::set<std::string> all;
  for (const auto& [key, layouts] : seen) all.insert(layouts.begin(), layouts.end());
  for (const char* form : {"direct", "flat align 16", "flat-pointwise align 16", "channels-last align 1"})
    EXPECT_TRUE(all.count(form)) << form << " never compiled";
  EXPECT_GE(seen.begin()->second.size(), 2u);
}

TEST(LayoutSearchCompile, ALogsDecisionIsWhatTheConvIsCompiledIn) {
  graph::Graph g = cnn();
  driver::CompiledGraph base = driver::compile_graph(g, {});
  const auto& [key, layout] = base.kernels.front().conv_layouts.front();
  ASSERT_NE(layout.form, ConvForm::kDirect);
  auto tuned = std::make_shared<driver::TunedSchedules>();
  tuned->conv_layouts[key] = {ConvForm::kDirect, 1};
  driver::CompileOptions options;
  options.tuned = tuned;
  graph::Graph again = cnn();
  driver::CompiledGraph decided = driver::compile_graph(again, options);
  EXPECT_EQ(decided.kernels.front().conv_layouts.front(),
            std::make_pair(key, ConvLayout{ConvForm::kDirect, 1}));
}

driver::TunedTask task(const std::string& key, double default_ms, double best_ms) {
  driver::TunedTask t;
  t.key = key;
  t.default_ms = default_ms;
  t.best_ms = best_ms;
  return t;
}

TEST(LayoutDecisions, TheFastestLayoutSummedOverInstancesWhenClearlyFaster) {
  driver::ConvLayoutVariants variants;
  variants["a"] = {{{ConvForm::kFlat, 48}, {"f1", "f2"}},
                   {{ConvForm::kChannelsLast, 1}, {"c1", "c2"}},
                   {{ConvForm::kDirect, 1}, {"d1", "d2"}}};
  variants["b"] = {{{ConvForm::kFlat, 16}, {"g"}}, {{ConvForm::kDirect, 1}, {"h"}}};
  variants["c"] = {{{ConvForm::kFlat, 16}, {"unmeasured"}}, {{ConvForm::kDirect, 1}, {"h"}}};
  variants["d"] = {{{ConvForm::kFlat, 16}, {"g"}}};
  std::vector<driver::TunedTask> tasks = {task("f1", 1.0, 0.9), task("f2", 1.0, 1.0), task("c1", 0.9, 0.9),
                                          task("c2", 0.9, 0.9), task("d1", 0.5, 0.5), task("g", 1.0, 1.0),
                                          task("h", 0.98, 0.98)};
  std::vector<tune::LayoutRecord> decided = driver::decide_layouts(variants, tasks, "llvm", "0.1.0");
  ASSERT_EQ(decided.size(), 2u) << "c: its default unmeasured; d: one layout";
  EXPECT_EQ(decided[0].conv, "a");
  ASSERT_EQ(decided[0].measured.size(), 2u) << "d2 unmeasured: direct left out";
  EXPECT_DOUBLE_EQ(decided[0].measured[0].ms, 1.9) << "f1 tuned to 0.9, plus f2";
  EXPECT_EQ(decided[0].measured[1].form, "channels-last");
  EXPECT_EQ(decided[0].choice, 1u);
  EXPECT_EQ(decided[1].choice, 0u) << "b: 0.98 against 1.0 is within the margin";

  driver::TuneSummary summary;
  summary.tasks = {task("f1", 1.0, 0.9), task("f2", 1.0, 1.0)};
  summary.tasks[0].weight = summary.tasks[1].weight = 1;
  summary.layouts = decided;
  EXPECT_DOUBLE_EQ(summary.tuned_ms(), 1.8) << "1.9 - (1.9 - 1.8)";
  EXPECT_EQ(driver::decided_layouts(decided).at("a"), (ConvLayout{ConvForm::kChannelsLast, 1}));
  decided[0].measured[1].form = "nchw16c";
  EXPECT_THROW(driver::decided_layouts(decided), UserError);
}

// Trials go to a conv's layouts that can still win: one whose kernels take
// more than kHopelessLayoutRatio times the fastest layout's is left out of
// the task scheduler's estimate until it is no longer that slow.
TEST(LayoutDecisions, LayoutsFarSlowerThanTheFastestAreHopeless) {
  driver::ConvLayoutVariants variants;
  variants["a"] = {{{ConvForm::kFlat, 48}, {"f"}},
                   {{ConvForm::kChannelsLast, 1}, {"c1", "c2"}},
                   {{ConvForm::kDirect, 1}, {"d"}},
                   {{ConvForm::kFlat, 16}, {"unmeasured"}}};
  variants["b"] = {{{ConvForm::kFlat, 16}, {"shared"}}, {{ConvForm::kDirect, 1}, {"e"}}};
  variants["c"] = {{{ConvForm::kFlat, 16}, {"shared"}}, {{ConvForm::kDirect, 1}, {"g"}}};
  std::map<std::string, double> best = {{"f", 1.0},      {"c1", 0.5}, {"c2", 0.7}, {"d", 3.0},
                                        {"shared", 2.0}, {"e", 1.0},  {"g", 2.1}};
  EXPECT_EQ(driver::hopeless_layout_tasks(variants, best), (std::set<std::string>{"d"}))
      << "f: 1.0 against 1.2 is the fastest; shared: hopeless for b, not for c";
  best["f"] = 0.9;
  best["d"] = 1.1;
  EXPECT_EQ(driver::hopeless_layout_tasks(variants, best), (std::set<std::string>{"c1", "c2"}));
  driver::ConvLayoutVariants single;
  single["x"] = {{{ConvForm::kDirect, 1}, {"only"}}};
  EXPECT_TRUE(driver::hopeless_layout_tasks(single, {{"only", 1.0}}).empty());
}

}  // namespace
}  // namespace tessel
