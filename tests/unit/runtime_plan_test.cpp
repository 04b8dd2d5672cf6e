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

TEST(RuntimePlan, LoopsRoundTripAndNameWhatIsWrong) {
  Plan p = looped_plan();
  std::vector<uint8_t> blob = serialize_plan(p);
  Plan q = deserialize_plan(blob.data(), blob.size());
  validate_plan(q, 2, 24);
  ASSERT_EQ(q.loops.size(), 1u);
  EXPECT_EQ(q.loops[0].count, 2u);
  EXPECT_EQ(q.loops[0].begin, 1u);
  EXPECT_TRUE(q.loops[0].slice_out[0].reverse);
  EXPECT_EQ(q.loops[0].carry[0].to, 2u);
  EXPECT_EQ(serialize_plan(q), blob);

  Plan parent = looped_plan();
  parent.loops[0].parent = 0;
  expect_invalid(parent, "parent 0 is not an earlier loop");
  Plan outside = looped_plan();
  outside.loops[0].end = 3;
  expect_invalid(outside, "steps [1, 3) outside [0, 2)");
  Plan overlap = looped_plan();
  overlap.loops.push_back(overlap.loops[0]);
  overlap.loops[1].begin = 1;
  expect_invalid(overlap, "inside the loop before it");
  Plan slices = looped_plan();
  slices.loops[0].count = 3;
  expect_invalid(slices, "is not 3 slices of 24");
  Plan into_weights = looped_plan();
  into_weights.loops[0].carry[0].to = 1;
  expect_invalid(into_weights, "copies into buffer 1, a weight");
  Plan into_input = looped_plan();
  into_input.loops[0].init[0] = {2, 0, false};
  expect_invalid(into_input, "a model input");
  Plan sizes = looped_plan();
  sizes.loops[0].init[0] = {4, 2, false};
  expect_invalid(sizes, "of different sizes");
  Plan condition = looped_plan();
  condition.loops[0].condition = 0;
  expect_invalid(condition, "condition buffer 0 is not a bool");
  Plan while_condition = looped_plan();
  while_condition.loops[0].while_condition = 0;
  expect_invalid(while_condition, "condition buffer 0 is not a bool");
  Plan none = looped_plan();
  none.loops[0].count = 0;
  expect_invalid(none, "0 iterations");
  // A while loop may run up to 2^63 - 1 iterations when it copies no slices,
  // whose buffers would be that many times as large.
  Plan endless = looped_plan();
  endless.buffers.push_back({Storage::kArena, 0, 128, 1});
  endless.arena_bytes = 192;
  endless.loops[0].while_condition = uint32_t(endless.buffers.size() - 1);
  endless.loops[0].count = uint64_t(1) << 40;
  expect_invalid(endless,
                 "1099511627776 iterations (1 to 2^32, or to 2^63 - 1 for a while loop without slices)");
  endless.loops[0].slice_in.clear();
  endless.loops[0].slice_out.clear();
  validate_plan(endless, 2, 24);
  std::vector<uint8_t> endless_blob = serialize_plan(endless);
  EXPECT_EQ(deserialize_plan(endless_blob.data(), endless_blob.size()).loops[0].while_condition,
            endless.loops[0].while_condition);
  Plan direction = looped_plan();
  blob = serialize_plan(direction);
  std::vector<uint8_t> bad = blob;
  // The init copy's direction byte: before the three other copy lists (a count
  // and one copy of 9 bytes each), the conditions (9), the output buffers (8
  // bytes), the arena and weights sizes and checksum (24), the CPU feature
  // count (4), the data-dependent extent count (4), the seal (8).
  size_t at = blob.size() - 8 - 4 - 4 - 24 - 8 - 9 - 3 * (4 + 9) - 1;
  ASSERT_EQ(bad[at], 0);
  bad[at] = 2;
  reseal(bad);
  expect_plan_error(bad, "loop copy direction 2");
}

TEST(RuntimePlan, DataDependentExtentsRoundTripAndNameWhatIsWrong) {
  Plan p = add_relu_plan();
  p.buffers.push_back({Storage::kArena, 0, 64, 8});
  p.arena_bytes = 128;
  p.data_dependent = {{0, 1, 4}};
  std::vector<uint8_t> blob = serialize_plan(p);
  Plan q = deserialize_plan(blob.data(), blob.size());
  validate_plan(q, 2, 24);
  ASSERT_EQ(q.data_dependent.size(), 1u);
  EXPECT_EQ(q.data_dependent[0].axis, 1u);
  EXPECT_EQ(q.data_dependent[0].size_buffer, 4u);

  Plan output = p;
  output.data_dependent[0].output = 1;
  expect_invalid(output, "data-dependent extent of output 1 (of 1, each once)");
  Plan twice = p;
  twice.data_dependent.push_back(twice.data_dependent[0]);
  expect_invalid(twice, "data-dependent extent of output 0");
  Plan axis = p;
  axis.data_dependent[0].axis = 2;
  expect_invalid(axis, "data-dependent axis 2 of output 'y'");
  Plan wide = p;
  wide.data_dependent[0].size_buffer = 2;  // 24 bytes
  expect_invalid(wide, "the size of output 'y' is not in a buffer of one int64");
  Plan input = p;
  input.data_dependent[0].size_buffer = 0;
  expect_invalid(input, "not in a buffer of one int64");
}

TEST(RuntimePlan, OutputCopiedFromAnInputIsValid) {
  Plan p = add_relu_plan();
  p.output_buffers = {0};
  validate_plan(p, 2, 24);
}

}  // namespace
}  // namespace tessel::rt
