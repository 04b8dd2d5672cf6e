// The opset-27 operators of linear-attention and state-space layers
// (adapters_state_space.cpp): a hand-worked linear attention step, every
// update rule with grouped query heads and a past state compiled through LLVM
// (fused, and one kernel per node) against the reference executor (ONNX's own cases hold the reference to
// ONNX's function bodies), the causal conv's state carried from one call to
// the next, and the mistakes a user makes refused by name.
#include <gtest/gtest.h>

#include <cmath>

#include "src/driver/compile_model.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

std::vector<double> wave(int64_t n, double scale, int seed) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(scale * std::sin(double(i * 5 + seed * 11) * 0.41));
  return v;
}

double max_difference(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_f64_vector(), y = b.to_f64_vector();
  double worst = x.size() == y.size() ? 0 : INFINITY;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

// One head of size 2, one step from a zero state: S = k v^T, o = q^T S / sqrt(2).
TEST(StateSpaceOps, ALinearAttentionStepByHand) {
  ModelBuilder b(27);
  for (const char* name : {"q", "k", "v"}) b.input(name, {1, 1, 2});
  onnx::NodeProto* n = b.node("LinearAttention", {"q", "k", "v"}, {"o", "s"}, "la");
  ModelBuilder::set_int(n, "q_num_heads", 1);
  ModelBuilder::set_int(n, "kv_num_heads", 1);
  ModelBuilder::set_string(n, "update_rule", "linear");
  b.output("o");
  b.output("s");
  graph::Graph g = b.import();
  std::vector<Tensor> inputs = {f32({1, 2}, {1, 1, 2}), f32({3, 4}, {1, 1, 2}), f32({5, 6}, {1, 1, 2})};
  // S = [[15, 18], [20, 24]]; q^T S = [55, 66].
  std::vector<double> state = {15, 18, 20, 24}, out = {55 / std::sqrt(2.0), 66 / std::sqrt(2.0)};
  for (const std::vector<Tensor>& got :
       {reference::Executor(g).run(inputs), driver::JitModel(driver::compile_graph(g, {})).run(inputs)}) {
    EXPECT_LE(max_difference(got[0], f32(out, {1, 1, 2})), 1e-5);
    EXPECT_LE(max_difference(got[1], f32(state, {1, 1, 2, 2})), 1e-5);
  }
}

// Two steps after a past state, 4 query heads on 2 key/value heads.
TEST(StateSpaceOps, EveryUpdateRuleCompiledMatchesTheReference) {
  const int64_t B = 2, T = 3, Hq = 4, Hkv = 2, dk = 3, dv = 2;
  for (const char* rule : {"linear", "gated", "delta", "gated_delta"}) {
    SCOPED_TRACE(rule);
    ModelBuilder b(27);
    b.input("q", {B, T, Hq * dk});
    b.input("k", {B, T, Hkv * dk});
    b.input("v", {B, T, Hkv * dv});
    b.input("past", {B, Hkv, dk, dv});
    b.input("decay", {B, T, Hkv});  // per head
    b.input("beta", {B, T, Hkv});
    onnx::NodeProto* n =
        b.node("LinearAttention", {"q", "k", "v", "past", "decay", "beta"}, {"o", "s"}, "la");
    ModelBuilder::set_int(n, "q_num_heads", Hq);
    ModelBuilder::set_int(n, "kv_num_heads", Hkv);
    ModelBuilder::set_string(n, "update_rule", rule);
    ModelBuilder::set_float(n, "scale", 0.5f);
    b.output("o");
    b.output("s");
    graph::Graph g = b.import();
    std::vector<Tensor> inputs = {f32(wave(B * T * Hq * dk, 0.5, 1), {B, T, Hq * dk}),
                                  f32(wave(B * T * Hkv * dk, 0.5, 2), {B, T, Hkv * dk}),
                                  f32(wave(B * T * Hkv * dv, 0.5, 3), {B, T, Hkv * dv}),
                                  f32(wave(B * Hkv * dk * dv, 0.3, 4), {B, Hkv, dk, dv}),
                                  f32(wave(B * T * Hkv, 0.2, 5), {B, T, Hkv}),
                                  f32(wave(B * T * Hkv, 0.4, 6), {B, T, Hkv})};
    std::vector<Tensor> want = reference::Executor(g).run(inputs);
    // One kernel per node too: the final state is the Scan's state buffer, a
    // model output the kernels after the loop must not reuse.
    for (passes::FusionPolicy fusion : {passes::FusionPolicy::kDefault, passes::FusionPolicy::kNone}) {
      driver::CompileOptions options;
      options.fusion = fusion;
      std::vector<Tensor> got = driver::JitModel(driver::compile_graph(g, options)).run(inputs);
      ASSERT_EQ(got.size(), 2u);
      EXPECT_LE(max_difference(got[0], want[0]), 1e-5);
      EXPECT_LE(max_difference(got[1], want[1]), 1e-5);
    }
  }
}

// A prompt of 5 in one call equals 3 then 2 with the state carried over.
TEST(StateSpaceOps, ACausalConvCarriesItsStateBetweenCalls) {
  auto model = [](int64_t length, bool with_past) {
    ModelBuilder b(27);
    b.input("x", {1, 2, length});
    b.float_initializer("w", {2, 1, 3}, {0.5, -1, 2, 1, 0.25, -0.5});
    b.float_initializer("bias", {2}, {0.1, -0.2});
    if (with_past) b.input("past", {1, 2, 2});
    onnx::NodeProto* n =
        b.node("CausalConvWithState", {"x", "w", "bias", with_past ? "past" : ""}, {"y", "s"}, "cc");
    ModelBuilder::set_string(n, "activation", "silu");
    b.output("y");
    b.output("s");
    graph::Graph g = b.import();
    return driver::JitModel(driver::compile_graph(g, {}));
  };
  std::vector<double> x = {1, 2, 3, 4, 5, -1, 0, 1, 0, -1};
  std::vector<Tensor> whole = model(5, false).run({f32(x, {1, 2, 5})});
  std::vector<Tensor> first = model(3, false).run({f32({1, 2, 3, -1, 0, 1}, {1, 2, 3})});
  std::vector<Tensor> second = model(2, true).run({f32({4, 5, 0, -1}, {1, 2, 2}), first[1]});
  std::vector<double> y = whole[0].to_f64_vector(), a = first[0].to_f64_vector(),
                      c = second[0].to_f64_vector();
  for (int64_t ch = 0; ch < 2; ++ch) {
    for (int64_t t = 0; t < 3; ++t) EXPECT_NEAR(y[size_t(ch * 5 + t)], a[size_t(ch * 3 + t)], 1e-6);
    for (int64_t t = 0; t < 2; ++t) EXPECT_NEAR(y[size_t(ch * 5 + 3 + t)], c[size_t(ch * 2 + t)], 1e-6);
  }
  EXPECT_EQ(second[1].to_f64_vector(), whole[1].to_f64_vector());  // the last two inputs of each channel
  EXPECT_EQ(whole[1].to_f64_vector(), (std::vector<double>{4, 5, 0, -1}));
}

TEST(StateSpaceOps, MistakesAreRefusedByName) {
  {
    ModelBuilder b(27);
    for (const char* name : {"q", "k", "v"}) b.input(name, {1, 2, 8});
    onnx::NodeProto* n = b.node("LinearAttention", {"q", "k", "v"}, {"o", "s"}, "la");
    ModelBuilder::set_int(n, "q_num_heads", 2);
    ModelBuilder::set_int(n, "kv_num_heads", 2);
    b.output("o");
    expect_import_error(b, "the gated update rules need the decay input");
  }
  {
    ModelBuilder b(27);
    for (const char* name : {"q", "k", "v"}) b.input(name, {1, 2, 8});
    onnx::NodeProto* n = b.node("LinearAttention", {"q", "k", "v"}, {"o", "s"}, "la");
    ModelBuilder::set_int(n, "q_num_heads", 3);
    ModelBuilder::set_int(n, "kv_num_heads", 2);
    ModelBuilder::set_string(n, "update_rule", "linear");
    b.output("o");
    expect_import_error(b, "must be a positive multiple of kv_num_heads");
  }
  {
    ModelBuilder b(27);
    for (const char* name : {"q", "k", "v"}) b.input(name, {1, 2, 8});
    b.input("decay", {1, 2, 3});
    onnx::NodeProto* n = b.node("LinearAttention", {"q", "k", "v", "", "decay"}, {"o", "s"}, "la");
    ModelBuilder::set_int(n, "q_num_heads", 2);
    ModelBuilder::set_int(n, "kv_num_heads", 2);
    ModelBuilder::set_string(n, "update_rule", "gated");
    b.output("o");
    expect_import_error(b, "decay must be [batch, time, kv_num_heads x 4] (per key)");
  }
  {
    ModelBuilder b(27);
    b.input("x", {1, 2, 4});
    b.input("past", {1, 2, 3});
    b.float_initializer("w", {2, 1, 3}, {1, 1, 1, 1, 1, 1});
    b.node("CausalConvWithState", {"x", "w", "", "past"}, {"y", "s"}, "cc");
    b.output("y");
    expect_import_error(b, "past_state must be (batch, channels, 2)");
  }
  {
    ModelBuilder b(27);
    b.input("x", {1, 2, 4});
    b.float_initializer("w", {2, 1, 3}, {1, 1, 1, 1, 1, 1});
    onnx::NodeProto* n = b.node("CausalConvWithState", {"x", "w"}, {"y", "s"}, "cc");
    ModelBuilder::set_string(n, "activation", "gelu");
    b.output("y");
    expect_import_error(b, "activation must be 'none', 'silu' or 'swish', got 'gelu'");
  }
}

}  // namespace
}  // namespace tessel::onnx_test
