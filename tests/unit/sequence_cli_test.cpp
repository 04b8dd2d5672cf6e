// A model with a sequence input and a sequence output through the real
// binary: `--sequence-length` and `--input-shape "xs[0]=..."` say what the
// model's types leave open; compiled, run and checked against the reference
// like any model; each missing or malformed flag one message and exit code 2.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/unit/cli_runner.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel {
namespace {

using cli_test::contains;
using cli_test::expect_user_error;
using cli_test::run_tessel;
using cli_test::TempDir;

// xs: a sequence of f32 vectors of open length; y = the elements
// concatenated; ys = xs with Relu of its first element appended.
std::string write_model(const TempDir& dir) {
  onnx_test::ModelBuilder b(17);
  auto* vi = b.g->add_input();
  vi->set_name("xs");
  auto* tt = vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("n");
  b.int64_initializer("zero", {}, {0});
  onnx_test::ModelBuilder::set_int(b.node("ConcatFromSequence", {"xs"}, {"y"}), "axis", 0);
  b.node("SequenceAt", {"xs", "zero"}, {"first"});
  b.node("Relu", {"first"}, {"relu"});
  b.node("SequenceInsert", {"xs", "relu"}, {"ys"});
  b.output("y");
  auto* out = b.g->add_output();
  out->set_name("ys");
  out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  std::string path = (dir / "sequences.onnx").string();
  std::ofstream file(path, std::ios::binary);
  b.model.SerializeToOstream(&file);
  return path;
}

TEST(SequenceCli, CompilesRunsAndChecksWithTheSequenceGiven) {
  TempDir dir;
  std::string model = write_model(dir);
  std::vector<std::string> given{"--sequence-length", "xs=2",          "--input-shape",
                                 "xs[0]=3",           "--input-shape", "xs[1]=4"};
  std::vector<std::string> check{"check", model};
  check.insert(check.end(), given.begin(), given.end());
  cli_test::Result checked = run_tessel(check);
  EXPECT_EQ(checked.code, 0) << checked.out << checked.err;
  std::vector<std::string> compile{"compile", model, "-o", (dir / "m.so").string()};
  compile.insert(compile.end(), given.begin(), given.end());
  cli_test::Result compiled = run_tessel(compile);
  ASSERT_EQ(compiled.code, 0) << compiled.out << compiled.err;
  cli_test::Result ran = run_tessel({"run", (dir / "m.so").string()});
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_TRUE(contains(ran.out, "output 'y' f32[7]")) << ran.out;
  EXPECT_TRUE(contains(ran.out, "output 'ys[2]' f32[3]")) << ran.out;
}

TEST(SequenceCli, WhatTheModelLeavesOpenMustBeGiven) {
  TempDir dir;
  std::string model = write_model(dir);
  std::string so = (dir / "m.so").string();
  expect_user_error(run_tessel({"compile", model, "-o", so}),
                    "input 'xs' is a sequence, and its type leaves its length open: give it "
                    "(--sequence-length xs=N)");
  expect_user_error(run_tessel({"compile", model, "-o", so, "--sequence-length", "xs=two"}),
                    "--sequence-length xs=two: expected NAME=N, N >= 0");
  expect_user_error(
      run_tessel({"compile", model, "-o", so, "--sequence-length", "xs=1", "--sequence-length", "ys=1"}),
      "--sequence-length names 'ys', which is not a sequence input of the graph");
  expect_user_error(run_tessel({"compile", model, "-o", so, "--sequence-length", "xs=1"}),
                    "got f32[n] (bind inputs with --input-shape)");
}

}  // namespace
}  // namespace tessel
