// The preview domains: the optimizers of ai.onnx.preview.training
// (adapters_training.cpp), one step of Momentum, Adagrad and Adam worked by
// hand, and FlexAttention of ai.onnx.preview (adapters_flex_attention.cpp), on
// the reference executor and compiled; malformed nodes refused with a
// UserError naming the node.
#include <gtest/gtest.h>

#include <cmath>

#include "src/driver/compile_model.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

// A model importing only the training domain, with R = 0.1 and T = `step`.
ModelBuilder optimizer(const std::string& op, const std::vector<std::string>& ins,
                       const std::vector<std::string>& outs, int64_t step) {
  ModelBuilder b;
  b.model.mutable_opset_import(0)->set_domain("ai.onnx.preview.training");
  b.model.mutable_opset_import(0)->set_version(1);
  b.float_initializer("R", {}, {0.1f});
  b.int64_initializer("T", {}, {step});
  std::vector<std::string> all{"R", "T"};
  for (const std::string& in : ins) {
    b.input(in, {2});
    all.push_back(in);
  }
  onnx::NodeProto* n = b.node(op, all, outs, "step");
  n->set_domain("ai.onnx.preview.training");
  for (const std::string& out : outs) b.output(out);
  return b;
}

Tensor floats2(double a, double b) {
  Tensor t(DType::kF32, {2});
  t.set_f64(0, a);
  t.set_f64(1, b);
  return t;
}

// Every output, reference then compiled, within float rounding of `want`.
void expect_outputs(ModelBuilder& b, const std::vector<Tensor>& inputs,
                    const std::vector<std::vector<double>>& want) {
  graph::Graph ref = b.import();
  std::vector<Tensor> r = reference::Executor(ref).run(inputs);
  graph::Graph g = b.import();
  driver::JitModel jit(driver::compile_graph(g, {}));
  std::vector<Tensor> compiled = jit.run(inputs);
  ASSERT_EQ(r.size(), want.size());
  ASSERT_EQ(compiled.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k)
    for (size_t i = 0; i < want[k].size(); ++i) {
      EXPECT_NEAR(r[k].get_f64(int64_t(i)), want[k][i], 1e-6) << "reference, output " << k << "[" << i << "]";
      EXPECT_NEAR(compiled[k].get_f64(int64_t(i)), want[k][i], 1e-6)
          << "LLVM, output " << k << "[" << i << "]";
    }
}

TEST(PreviewOps, MomentumStandardAndNesterov) {
  // G_reg = G (norm 0); V_new = 0.5 V + beta_adjusted G; beta_adjusted = 1 at T = 0.
  for (int64_t step : {0, 3}) {
    double beta = step > 0 ? 0.2 : 1.0;
    for (std::string mode : {"standard", "nesterov"}) {
      ModelBuilder b = optimizer("Momentum", {"X", "G", "V"}, {"X_new", "V_new"}, step);
      onnx::NodeProto* n = b.g->mutable_node(0);
      ModelBuilder::set_float(n, "alpha", 0.5f);
      ModelBuilder::set_float(n, "beta", 0.2f);
      ModelBuilder::set_float(n, "norm_coefficient", 0.0f);
      ModelBuilder::set_string(n, "mode", mode);
      std::vector<double> v_new{0.5 * 1 + beta * 2, 0.5 * -1 + beta * 4};
      std::vector<double> x_new;
      for (size_t i = 0; i < 2; ++i) {
        double g = i ? 4 : 2, x = i ? 20 : 10;
        x_new.push_back(mode == "standard" ? x - 0.1 * v_new[i] : x - 0.1 * (g + 0.5 * v_new[i]));
      }
      expect_outputs(b, {floats2(10, 20), floats2(2, 4), floats2(1, -1)}, {x_new, v_new});
    }
  }
}

TEST(PreviewOps, AdagradAndAdamBiasCorrection) {
  ModelBuilder ada = optimizer("Adagrad", {"X", "G", "H"}, {"X_new", "H_new"}, 2);
  ModelBuilder::set_float(ada.g->mutable_node(0), "decay_factor", 0.5f);
  ModelBuilder::set_float(ada.g->mutable_node(0), "epsilon", 0.0f);
  // r = 0.1 / (1 + 2 * 0.5); H_new = H + G^2; X_new = X - r G / sqrt(H_new)
  expect_outputs(ada, {floats2(1, 2), floats2(3, 4), floats2(16, 9)},
                 {{1 - 0.05 * 3 / 5, 2 - 0.05 * 4 / 5}, {25, 25}});
  for (int64_t step : {0, 2}) {
    ModelBuilder adam = optimizer("Adam", {"X", "G", "V", "H"}, {"X_new", "V_new", "H_new"}, step);
    ModelBuilder::set_float(adam.g->mutable_node(0), "epsilon", 0.0f);
    double v = 0.9 * 1 + 0.1 * 2, h = 0.999 * 4 + 0.001 * 4;
    double r = step > 0 ? 0.1 * std::sqrt(1 - std::pow(0.999, 2)) / (1 - std::pow(0.9, 2)) : 0.1;
    expect_outputs(adam, {floats2(5, 5), floats2(2, 2), floats2(1, 1), floats2(4, 4)},
                   {{5 - r * v / std::sqrt(h), 5 - r * v / std::sqrt(h)}, {v, v}, {h, h}});
  }
}

TEST(PreviewOps, MalformedNodesAreUserErrors) {
  ModelBuilder short_lists = optimizer("Adam", {"X", "G", "V"}, {"X_new", "V_new"}, 1);
  expect_import_error(short_lists, "expects R, T and 4 lists of as many tensors");
  ModelBuilder mode = optimizer("Momentum", {"X", "G", "V"}, {"X_new", "V_new"}, 1);
  ModelBuilder::set_string(mode.g->mutable_node(0), "mode", "heavy");
  expect_import_error(mode, "mode must be \"standard\" or \"nesterov\", got \"heavy\"");
  ModelBuilder unimported = optimizer("Adagrad", {"X", "G", "H"}, {"X_new", "H_new"}, 1);
  unimported.model.mutable_opset_import(0)->set_domain("");
  unimported.model.mutable_opset_import(0)->set_version(17);
  expect_import_error(unimported, "uses domain ai.onnx.preview.training but does not import it");
}

// FlexAttention with 4 query heads over 2 key/value heads; `score_mod`, when
// given, adds a constant to every score (which Softmax ignores).
ModelBuilder flex_attention(bool with_score_mod, int64_t kv_heads = 2) {
  ModelBuilder b;  // the default domain for score_mod's Add, and the preview one
  auto* preview = b.model.add_opset_import();
  preview->set_domain("ai.onnx.preview");
  preview->set_version(1);
  b.input("Q", {1, 4, 3, 8});
  b.input("K", {1, kv_heads, 5, 8});
  b.input("V", {1, kv_heads, 5, 8});
  onnx::NodeProto* n = b.node("FlexAttention", {"Q", "K", "V"}, {"Y"}, "flex");
  n->set_domain("ai.onnx.preview");
  if (with_score_mod) {
    auto* a = n->add_attribute();
    a->set_name("score_mod");
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name("shift");
    ModelBuilder::value_info(g->add_input(), "s", {1, 4, 3, 5}, onnx::TensorProto::FLOAT);
    auto* c = g->add_initializer();
    c->set_name("three");
    c->set_data_type(onnx::TensorProto::FLOAT);
    c->add_float_data(3.0f);
    auto* add = g->add_node();
    add->set_op_type("Add");
    add->add_input("s");
    add->add_input("three");
    add->add_output("t");
    g->add_output()->set_name("t");
  }
  b.output("Y");
  return b;
}

Tensor ramp(Dims shape, double step) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, std::sin(double(i) * step));
  return t;
}

TEST(PreviewOps, FlexAttentionRepeatsKeyHeadsAndInlinesItsScoreMod) {
  std::vector<Tensor> inputs{ramp({1, 4, 3, 8}, 0.3), ramp({1, 2, 5, 8}, 0.7), ramp({1, 2, 5, 8}, 1.1)};
  ModelBuilder plain = flex_attention(false), shifted = flex_attention(true);
  graph::Graph a = plain.import(), b = shifted.import();
  Tensor want = reference::Executor(a).run(inputs)[0];
  Tensor got = reference::Executor(b).run(inputs)[0];
  graph::Graph c = shifted.import();
  Tensor compiled = driver::JitModel(driver::compile_graph(c, {})).run(inputs)[0];
  ASSERT_EQ(want.shape(), (Dims{1, 4, 3, 8}));
  for (int64_t i = 0; i < want.numel(); ++i) {
    EXPECT_NEAR(got.get_f64(i), want.get_f64(i), 1e-6) << i;
    EXPECT_NEAR(compiled.get_f64(i), want.get_f64(i), 1e-5) << i;
  }
  // Query head 3 reads key/value head 1: the same as head 2 when both query heads are equal.
  std::vector<Tensor> same = inputs;
  for (int64_t i = 0; i < 3 * 8; ++i) same[0].set_f64(3 * 24 + i, same[0].get_f64(2 * 24 + i));
  Tensor y = reference::Executor(a).run(same)[0];
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(y.get_f64(3 * 24 + i), y.get_f64(2 * 24 + i)) << i;
}

TEST(PreviewOps, FlexAttentionWithHeadsThatDoNotGroupIsAUserError) {
  ModelBuilder b = flex_attention(false, 3);
  expect_import_error(b, "Q's 4 heads must be a multiple of K's and V's 3");
}

}  // namespace
}  // namespace tessel::onnx_test
