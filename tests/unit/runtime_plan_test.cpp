// The execution plan's binary form and its validation: round trip, every
// truncation, and a must-fail case per check (runtime_plan_mutation_test.cpp
// corrupts it systematically).
#include <gtest/gtest.h>

#include <cstring>

#include "src/runtime/plan.h"
#include "tessel/runtime.h"
#include "tests/unit/runtime_test_plan.h"

namespace tessel::rt {
namespace {

void expect_plan_error(const std::vector<uint8_t>& blob, const std::string& substring) {
  try {
    Plan p = deserialize_plan(blob.data(), blob.size());
    validate_plan(p, 2, 24);
    ADD_FAILURE() << "no PlanError; expected one mentioning '" << substring << "'";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
    EXPECT_EQ(e.status(), TESSEL_ERR_CORRUPT_MODEL);
  }
}

void expect_invalid(const Plan& p, const std::string& substring) {
  try {
    validate_plan(p, 2, 24);
    ADD_FAILURE() << "no PlanError; expected one mentioning '" << substring << "'";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  }
}

TEST(RuntimePlan, RoundTripIsEqual) {
  Plan p = add_relu_plan();
  p.steps[1].flops = 1.5e9;
  p.weights_checksum = 0xfedcba9876543210ull;
  p.cpu_features = {"avx2", "fma"};
  std::vector<uint8_t> blob = serialize_plan(p);
  EXPECT_EQ(std::memcmp(blob.data(), "TSLPLAN\0", 8), 0);
  Plan q = deserialize_plan(blob.data(), blob.size());
  validate_plan(q, 2, 24);
  EXPECT_EQ(q.model_name, "tiny");
  ASSERT_EQ(q.inputs.size(), 1u);
  EXPECT_EQ(q.inputs[0].name, "x");
  EXPECT_EQ(q.inputs[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(q.outputs[0].dtype, TESSEL_F32);
  ASSERT_EQ(q.buffers.size(), 4u);
  EXPECT_EQ(q.buffers[1].storage, Storage::kWeight);
  EXPECT_EQ(q.buffers[3].storage, Storage::kOutput);
  ASSERT_EQ(q.steps.size(), 2u);
  EXPECT_EQ(q.steps[0].args, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(q.steps[1].name, "relu");
  EXPECT_EQ(q.steps[1].flops, 1.5e9);
  EXPECT_EQ(q.steps[0].bytes, 72);
  EXPECT_EQ(q.output_buffers, (std::vector<uint32_t>{3}));
  EXPECT_EQ(q.arena_bytes, 64u);
  EXPECT_EQ(q.weights_bytes, 24u);
  EXPECT_EQ(q.weights_checksum, 0xfedcba9876543210ull);
  EXPECT_EQ(q.cpu_features, (std::vector<std::string>{"avx2", "fma"}));
  EXPECT_EQ(serialize_plan(q), blob);
}

TEST(RuntimePlan, EveryTruncationIsAPlanError) {
  std::vector<uint8_t> blob = serialize_plan(add_relu_plan());
  for (size_t n = 0; n < blob.size(); ++n) {
    std::vector<uint8_t> prefix(blob.begin(), blob.begin() + long(n));
    EXPECT_THROW(deserialize_plan(prefix.data(), prefix.size()), PlanError) << "prefix of " << n << " bytes";
  }
  std::vector<uint8_t> longer = blob;
  longer.insert(longer.end() - 8, 0);  // before the checksum
  reseal(longer);
  expect_plan_error(longer, "trailing");
  EXPECT_THROW(deserialize_plan(nullptr, 0), PlanError);
}

TEST(RuntimePlan, HugeCountIsRefusedBeforeAllocating) {
  std::vector<uint8_t> blob = serialize_plan(add_relu_plan());
  // The input count follows magic (8), version (4), model name (4 + 4).
  size_t at = 8 + 4 + 4 + 4;
  uint32_t huge = 0xfffffff0u;
  std::memcpy(blob.data() + at, &huge, 4);
  reseal(blob);
  expect_plan_error(blob, "input count");
}

TEST(RuntimePlan, BadMagicAndVersion) {
  std::vector<uint8_t> blob = serialize_plan(add_relu_plan());
  std::vector<uint8_t> magic = blob;
  magic[0] ^= 1;
  expect_plan_error(magic, "bad magic");
  std::vector<uint8_t> version = blob;
  version[8] = 99;
  expect_plan_error(version, "format version 99");
}

TEST(RuntimePlan, ValidationNamesTheProblem) {
  Plan dtype = add_relu_plan();
  dtype.inputs[0].dtype = 42;
  expect_invalid(dtype, "dtype 42");
  Plan arena = add_relu_plan();
  arena.buffers[2].offset = 64;
  expect_invalid(arena, "outside the arena");
  Plan arg = add_relu_plan();
  arg.steps[1].args[0] = 17;
  expect_invalid(arg, "argument buffer id 17 out of range");
  Plan kernel = add_relu_plan();
  kernel.steps[0].kernel = 2;
  expect_invalid(kernel, "kernel 2 out of range");
  Plan weights = add_relu_plan();
  weights.buffers[1].bytes = 32;
  expect_invalid(weights, "outside the weights");
  Plan input_bytes = add_relu_plan();
  input_bytes.buffers[0].bytes = 20;
  expect_invalid(input_bytes, "for input 'x'");
  Plan input_index = add_relu_plan();
  input_index.buffers[0].index = 1;
  expect_invalid(input_index, "input 1 out of range");
  Plan outputs = add_relu_plan();
  outputs.output_buffers.clear();
  expect_invalid(outputs, "0 output buffers for 1 outputs");
  Plan output_size = add_relu_plan();
  output_size.output_buffers = {2};
  output_size.buffers[2].bytes = 16;
  expect_invalid(output_size, "output 'y'");
  Plan storage = add_relu_plan();
  storage.buffers[2].storage = Storage(7);
  expect_invalid(storage, "storage kind 7");
  Plan negative = add_relu_plan();
  negative.outputs[0].shape = {2, -3};
  expect_invalid(negative, "negative dimension");
  Plan misaligned = add_relu_plan();
  misaligned.arena_bytes = 128;
  misaligned.buffers[2].offset = 8;
  expect_invalid(misaligned, "not 64-byte aligned");
  EXPECT_THROW(validate_plan(add_relu_plan(), 2, 16), PlanError);  // the library holds fewer weight bytes
}

TEST(RuntimePlan, OutputCopiedFromAnInputIsValid) {
  Plan p = add_relu_plan();
  p.output_buffers = {0};
  validate_plan(p, 2, 24);
}

}  // namespace
}  // namespace tessel::rt
