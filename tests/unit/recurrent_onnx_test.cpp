// LSTM, GRU and RNN imported as Scans (adapters_recurrent.cpp): a case
// worked out by hand for sequence lengths in both directions, then the
// variants ONNX's own cases leave out (bidirectional, batch-first layout,
// sequence lengths given at run time, clip, coupled input and forget gates,
// GRU's reset before the product, activation lists with their alphas),
// compiled through LLVM against the reference executor. The reference
// itself is held to ONNX Runtime by the speech model of the model tests.
#include <gtest/gtest.h>

#include <cmath>

#include "src/driver/compile_model.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

std::vector<float> pattern(size_t n, double scale, int seed) {
  std::vector<float> v;
  for (size_t i = 0; i < n; ++i)
    v.push_back(float(scale * std::sin(double(i * 7 + size_t(seed) * 13) * 0.37)));
  return v;
}

// h_t = relu(2 x_t + 0.5 h_{t-1}) over x = 1, 0, -1 with one valid step in
// two: forward 2, 1 then zero padding; reverse starts at step 1: 0, then 2.
TEST(RecurrentOps, RnnWithSequenceLengthsByHand) {
  for (const char* direction : {"forward", "reverse"}) {
    ModelBuilder b(14);
    b.input("x", {3, 1, 1});
    b.input("lens", {1}, onnx::TensorProto::INT32);
    b.float_initializer("w", {1, 1, 1}, {2});
    b.float_initializer("r", {1, 1, 1}, {0.5});
    onnx::NodeProto* n = b.node("RNN", {"x", "w", "r", "", "lens"}, {"y", "y_h"}, "rnn");
    ModelBuilder::set_int(n, "hidden_size", 1);
    ModelBuilder::set_string(n, "direction", direction);
    ModelBuilder::set_strings(n, "activations", {"Relu"});
    b.output("y");
    b.output("y_h");
    graph::Graph g = b.import();
    Tensor lens(DType::kI32, {1});
    lens.set_f64(0, 2);
    std::vector<Tensor> inputs = {f32({1, 0, -1}, {3, 1, 1}), lens};
    bool forward = std::string(direction) == "forward";
    std::vector<double> want_y = forward ? std::vector<double>{2, 1, 0} : std::vector<double>{2, 0, 0};
    std::vector<double> want_h = {forward ? 1.0 : 2.0};
    SCOPED_TRACE(direction);
    std::vector<Tensor> ref = reference::Executor(g).run(inputs);
    EXPECT_EQ(ref[0].to_f64_vector(), want_y);
    EXPECT_EQ(ref[1].to_f64_vector(), want_h);
    driver::JitModel jit(driver::compile_graph(g, {}));
    std::vector<Tensor> out = jit.run(inputs);
    EXPECT_EQ(out[0].to_f64_vector(), want_y);
    EXPECT_EQ(out[1].to_f64_vector(), want_h);
  }
}

struct Variant {
  const char* op;
  const char* direction;
  bool batch_first;
  bool run_time_lengths;
  std::function<void(onnx::NodeProto*)> attrs;
};

int gates(const std::string& op) {
  return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
}

// X [5, 3, 4] (or batch-first), hidden 6, every optional input given.
void expect_compiled_matches_reference(const Variant& v) {
  const int64_t T = 5, B = 3, I = 4, H = 6, D = std::string(v.direction) == "bidirectional" ? 2 : 1;
  const int64_t G = gates(v.op);
  ModelBuilder b(14);
  b.input("x", v.batch_first ? std::vector<std::variant<int64_t, std::string>>{B, T, I}
                             : std::vector<std::variant<int64_t, std::string>>{T, B, I});
  b.float_initializer("w", {D, G * H, I}, pattern(size_t(D * G * H * I), 0.4, 1));
  b.float_initializer("r", {D, G * H, H}, pattern(size_t(D * G * H * H), 0.4, 2));
  b.float_initializer("bias", {D, 2 * G * H}, pattern(size_t(D * 2 * G * H), 0.2, 3));
  if (v.run_time_lengths)
    b.input("lens", {B}, onnx::TensorProto::INT32);
  else
    b.int64_initializer("lens64", {B}, {5, 3, 1});
  std::string lens = v.run_time_lengths ? "lens" : "lens_i32";
  if (!v.run_time_lengths) {
    onnx::NodeProto* cast = b.node("Cast", {"lens64"}, {"lens_i32"}, "cast");
    ModelBuilder::set_int(cast, "to", onnx::TensorProto::INT32);
  }
  b.input("h0", v.batch_first ? std::vector<std::variant<int64_t, std::string>>{B, D, H}
                              : std::vector<std::variant<int64_t, std::string>>{D, B, H});
  std::vector<std::string> ins = {"x", "w", "r", "bias", lens, "h0"};
  std::vector<std::string> outs = {"y", "y_h"};
  if (std::string(v.op) == "LSTM") {
    b.input("c0", v.batch_first ? std::vector<std::variant<int64_t, std::string>>{B, D, H}
                                : std::vector<std::variant<int64_t, std::string>>{D, B, H});
    b.float_initializer("p", {D, 3 * H}, pattern(size_t(D * 3 * H), 0.3, 4));
    ins.insert(ins.end(), {"c0", "p"});
    outs.push_back("y_c");
  }
  onnx::NodeProto* n = b.node(v.op, ins, outs, "cell");
  ModelBuilder::set_int(n, "hidden_size", H);
  ModelBuilder::set_string(n, "direction", v.direction);
  if (v.batch_first) ModelBuilder::set_int(n, "layout", 1);
  if (v.attrs) v.attrs(n);
  for (const std::string& o : outs) b.output(o);
  graph::Graph g = b.import();
  std::vector<Tensor> inputs;
  for (const graph::Value* in : g.inputs()) {
    Tensor t(in->type.dtype, in->type.static_dims());
    std::vector<float> values = pattern(size_t(t.numel()), 1.5, int(inputs.size()) + 7);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.set_f64(i, in->name == "lens" ? double(i * 2 + 1) : values[size_t(i)]);
    inputs.push_back(t);
  }
  std::vector<Tensor> ref = reference::Executor(g).run(inputs);
  driver::JitModel jit(driver::compile_graph(g, {}));
  std::vector<Tensor> out = jit.run(inputs);
  ASSERT_EQ(out.size(), ref.size());
  for (size_t k = 0; k < out.size(); ++k) {
    std::vector<double> a = ref[k].to_f64_vector(), c = out[k].to_f64_vector();
    ASSERT_EQ(a.size(), c.size());
    double worst = 0, largest = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      worst = std::max(worst, std::abs(a[i] - c[i]));
      largest = std::max(largest, std::abs(a[i]));
    }
    EXPECT_GT(largest, 0.01) << "output " << k << " is all but zero: the case tests nothing";
    EXPECT_LE(worst, 1e-5) << "output " << k;
  }
}

TEST(RecurrentOps, VariantsCompileLikeTheReference) {
  auto clip_and_couple = [](onnx::NodeProto* n) {
    ModelBuilder::set_float(n, "clip", 0.8f);
    ModelBuilder::set_int(n, "input_forget", 1);
  };
  auto reset_first = [](onnx::NodeProto* n) { ModelBuilder::set_int(n, "linear_before_reset", 1); };
  auto activations = [](onnx::NodeProto* n) {
    ModelBuilder::set_strings(n, "activations", {"HardSigmoid", "LeakyRelu", "ScaledTanh", "Affine"});
    auto* a = n->add_attribute();
    a->set_name("activation_alpha");
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float f : {0.3f, 0.05f, 1.5f, 0.7f}) a->add_floats(f);
    auto* beta = n->add_attribute();
    beta->set_name("activation_beta");
    beta->set_type(onnx::AttributeProto::FLOATS);
    for (float f : {0.4f, 0.6f, 0.1f}) beta->add_floats(f);
  };
  const Variant variants[] = {
      {"LSTM", "bidirectional", false, true, nullptr},     {"LSTM", "reverse", true, false, clip_and_couple},
      {"GRU", "bidirectional", true, true, reset_first},   {"GRU", "reverse", false, false, nullptr},
      {"GRU", "bidirectional", false, false, activations}, {"RNN", "bidirectional", false, true, nullptr},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(std::string(v.op) + " " + v.direction + (v.batch_first ? " batch-first" : "") +
                 (v.run_time_lengths ? " run-time lengths" : ""));
    expect_compiled_matches_reference(v);
  }
}

// A length above the sequence or below zero stops the run with an error
// naming the node, on the reference and compiled; a constant one, the import.
TEST(RecurrentOps, SequenceLengthsOutsideTheSequenceAreRefused) {
  ModelBuilder b(14);
  b.input("x", {3, 2, 1});
  b.input("lens", {2}, onnx::TensorProto::INT32);
  b.float_initializer("w", {1, 1, 1}, {2});
  b.float_initializer("r", {1, 1, 1}, {0.5});
  onnx::NodeProto* n = b.node("RNN", {"x", "w", "r", "", "lens"}, {"y", "y_h"}, "rnn");
  ModelBuilder::set_int(n, "hidden_size", 1);
  b.output("y");
  b.output("y_h");
  graph::Graph g = b.import();
  driver::JitModel jit(driver::compile_graph(g, {}));
  graph::Graph fresh = b.import();
  for (double bad : {4.0, -1.0}) {
    Tensor lens(DType::kI32, {2});
    lens.set_f64(0, 3);
    lens.set_f64(1, bad);
    std::vector<Tensor> inputs = {f32({1, 2, 3, 4, 5, 6}, {3, 2, 1}), lens};
    SCOPED_TRACE(bad);
    for (int compiled = 0; compiled < 2; ++compiled) {
      try {
        compiled ? jit.run(inputs) : reference::Executor(fresh).run(inputs);
        ADD_FAILURE() << "ran";
      } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("rnn/"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
      }
    }
  }
  Tensor good(DType::kI32, {2});
  good.set_f64(0, 3);
  good.set_f64(1, 0);
  std::vector<double> got = jit.run({f32({1, 2, 3, 4, 5, 6}, {3, 2, 1}), good})[0].to_f64_vector();
  std::vector<double> want =
      reference::Executor(fresh).run({f32({1, 2, 3, 4, 5, 6}, {3, 2, 1}), good})[0].to_f64_vector();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  EXPECT_EQ(want[1], 0);  // batch 1 has no valid step: zeros
}

TEST(RecurrentOps, RefusalsNameTheNode) {
  ModelBuilder b(14);
  b.input("x", {2, 1, 3});
  b.float_initializer("w", {1, 4, 3}, pattern(12, 1, 0));
  b.float_initializer("r", {1, 4, 1}, pattern(4, 1, 0));
  onnx::NodeProto* n = b.node("LSTM", {"x", "w", "r"}, {"y"}, "cell");
  ModelBuilder::set_strings(n, "activations", {"Sigmoid", "Cube", "Tanh"});
  b.output("y");
  try {
    b.import();
    ADD_FAILURE() << "imported";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported activation 'Cube'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cell"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessel::onnx_test
