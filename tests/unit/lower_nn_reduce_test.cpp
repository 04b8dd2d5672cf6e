// Compute definitions of the normalisations, Softmax / LogSoftmax, the reduce
// ops and ArgMax / ArgMin: interpreted on random data and compared with the
// reference executor, with the stages (reduction blocks) each one builds.
#include "tests/unit/lower_nn_test_util.h"

namespace tessel::lower_nn_test {
namespace {

using std::vector;

// ---- Normalisations

TEST(LowerNnNorm, BatchNormIsOneInjectiveStage) {
  Tensor var = random_tensor(DType::kF32, {3}, 7);
  for (int64_t i = 0; i < 3; ++i) var.set_f64(i, var.get_f64(i) + 1.5);  // variances are positive
  LoweredNode n = check_op("BatchNormalization", "bn",
                           {f32_arg({2, 3, 4, 4}), f32_arg({3}), f32_arg({3}), f32_arg({3}), value_arg(var)},
                           attrs(kv("epsilon", 1e-3)));
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"out0: S S S S"}));
}

TEST(LowerNnNorm, LayerNormAxesAndStatistics) {
  LoweredNode n = check_op("LayerNormalization", "ln", {f32_arg({2, 3, 4}), f32_arg({4}), f32_arg({4})});
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"ln_sum: S S R", "ln_var_sum: S S R", "out0: S S S"}));
  check_op("LayerNormalization", "ln", {f32_arg({2, 3, 4}), f32_arg({3, 4})}, attrs(kv("axis", int64_t(1))));
  check_op("LayerNormalization", "ln", {f32_arg({2, 3, 4}), f32_arg({2, 3, 4}), f32_arg({1})},
           attrs(kv("axis", int64_t(0)), kv("epsilon", 0.1)));
  check_op("LayerNormalization", "ln", {f32_arg({2, 3, 2, 2}), f32_arg({1, 1, 2}), f32_arg({2, 2})},
           attrs(kv("axis", int64_t(-2))));
  // Mean and InvStdDev keep the leading axes, 1 for the normalised ones.
  check_op("LayerNormalization", "ln", {f32_arg({2, 3, 4}), f32_arg({4}), f32_arg({4})}, {}, 3);
  check_op("LayerNormalization", "ln", {f32_arg({2, 3, 4}), f32_arg({3, 4}), omitted()},
           attrs(kv("axis", int64_t(-2)), kv("stash_type", int64_t(11))), 3);
}

TEST(LowerNnNorm, InstanceAndGroupNorm) {
  LoweredNode n = check_op("InstanceNormalization", "in", {f32_arg({2, 3, 5}), f32_arg({3}), f32_arg({3})});
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"in_sum: S S R", "in_var_sum: S S R", "out0: S S S"}));
  check_op("InstanceNormalization", "in", {f32_arg({1, 2, 3, 3}), f32_arg({2}), f32_arg({2})},
           attrs(kv("epsilon", 0.01)));
  LoweredNode g = check_op("GroupNormalization", "gn", {f32_arg({2, 4, 3, 3}), f32_arg({4}), f32_arg({4})},
                           attrs(kv("num_groups", int64_t(2))));
  EXPECT_EQ(block_shapes(g.func),
            (vector<std::string>{"gn_sum: S S R R R", "gn_var_sum: S S R R R", "out0: S S S S"}));
  check_op("GroupNormalization", "gn", {f32_arg({1, 4, 5}), f32_arg({4}), f32_arg({4})},
           attrs(kv("num_groups", int64_t(4)), kv("epsilon", 0.1)));
  check_op("GroupNormalization", "gn", {f32_arg({1, 6, 2}), f32_arg({6}), f32_arg({6})},
           attrs(kv("num_groups", int64_t(1))));
}

// ---- Softmax

// The max, the exponentials (computed once, read by the sum and the
// output), their sum, and the output as exp * (1 / sum).
TEST(LowerNnSoftmax, FourStagesAlongEachAxis) {
  LoweredNode n = check_op("Softmax", "sm", {f32_arg({2, 3, 4})});
  EXPECT_EQ(block_shapes(n.func),
            (vector<std::string>{"sm_max: S S R", "sm_exp: S S S", "sm_exp_sum: S S R", "out0: S S S"}));
  for (int64_t axis : {0, 1, -2}) check_op("Softmax", "sm", {f32_arg({2, 3, 4})}, attrs(kv("axis", axis)));
  check_op("Softmax", "sm", {f32_arg({5})});
  Tensor large = random_tensor(DType::kF32, {2, 3}, 3);
  for (int64_t i = 0; i < large.numel(); ++i)
    large.set_f64(i, 1000 + 10 * large.get_f64(i));  // exp would overflow unshifted
  check_op("Softmax", "sm", {value_arg(large)});
  for (int64_t axis : {-1, 1}) check_op("LogSoftmax", "lsm", {f32_arg({2, 3, 4})}, attrs(kv("axis", axis)));
}

// ---- Reduce ops

Arg axes(vector<int64_t> a) {
  return const_arg(Tensor::from_i64(a));
}

TEST(LowerNnReduce, SumKeepsOrDropsAxes) {
  LoweredNode keep = check_op("ReduceSum", "rs", {f32_arg({2, 3, 4}), axes({1})});
  EXPECT_EQ(block_shapes(keep.func), (vector<std::string>{"rs: S S S R"}));
  LoweredNode drop =
      check_op("ReduceSum", "rs", {f32_arg({2, 3, 4}), axes({0, 2})}, attrs(kv("keepdims", int64_t(0))));
  EXPECT_EQ(block_shapes(drop.func), (vector<std::string>{"rs: S R R"}));
  check_op("ReduceSum", "rs", {f32_arg({2, 3, 4}), axes({-1})});
  check_op("ReduceSum", "rs", {f32_arg({2, 3, 4})}, attrs(kv("keepdims", int64_t(0))));  // all axes
  check_op("ReduceSum", "rs", {f32_arg({2, 3, 4}), axes({})});
  check_op("ReduceSum", "rs", {rand_arg(DType::kI32, {3, 4}), axes({1})});
}

TEST(LowerNnReduce, NoopWithEmptyAxesAndEmptySets) {
  LoweredNode noop =
      check_op("ReduceSum", "rs", {f32_arg({2, 3}), axes({})}, attrs(kv("noop_with_empty_axes", int64_t(1))));
  EXPECT_EQ(block_shapes(noop.func), (vector<std::string>{"out0: S S"}));
  check_op("ReduceSum", "rs", {f32_arg({2, 0, 3}), axes({1})});     // folds nothing: 0
  check_op("ReduceProd", "rp", {f32_arg({2, 0, 3}), axes({1})});    // 1
  check_op("ReduceMax", "rm", {f32_arg({2, 0, 3}), axes({1})});     // -inf
  check_op("ReduceSum", "rs", {f32_arg({0, 3}), axes({1})});        // no output elements
  check_op("ReduceLogSumExp", "rl", {f32_arg({2, 0}), axes({1})});  // -inf
}

TEST(LowerNnReduce, EveryFold) {
  const char* ops[] = {"ReduceSum", "ReduceMean", "ReduceProd",      "ReduceMax",    "ReduceMin",
                       "ReduceL1",  "ReduceL2",   "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"};
  for (const char* op : ops) {
    // LogSum needs positive sums: read |x| + 0.5 for it.
    Tensor x = random_tensor(DType::kF32, {2, 3, 4}, 11);
    if (std::string(op) == "ReduceLogSum")
      for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, std::abs(x.get_f64(i)) + 0.5);
    check_op(op, "r", {value_arg(x), axes({1})});
    check_op(op, "r", {value_arg(x), axes({0, 2})}, attrs(kv("keepdims", int64_t(0))));
    check_op(op, "r", {value_arg(x)});
  }
}

TEST(LowerNnReduce, Integers) {
  for (const char* op :
       {"ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceSumSquare"})
    check_op(op, "r", {rand_arg(DType::kI32, {3, 4}), axes({0})}, attrs(kv("keepdims", int64_t(0))));
  check_op("ReduceMean", "r", {rand_arg(DType::kI8, {2, 30}), axes({1})});  // the sum leaves i8's range
  check_op("ReduceL2", "r", {rand_arg(DType::kI64, {3, 4}), axes({1})});
  check_op("ReduceMax", "r", {rand_arg(DType::kU8, {3, 4}), axes({1})});
}

// 16-bit floats accumulate in f32 (as the reference does) and round once at the end.
TEST(LowerNnReduce, HalfFloatsAccumulateInF32) {
  for (DType t : {DType::kF16, DType::kBF16})
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceL2", "ReduceLogSumExp"}) {
      LoweredNode n = check_op(op, "r", {rand_arg(t, {3, 40}), axes({1})}, {}, 1, 1e-2);
      EXPECT_NE(n.text().find("alloc r: f32"), std::string::npos) << n.text();
    }
}

TEST(LowerNnReduce, LogSumExpIsTwoReductions) {
  LoweredNode n = check_op("ReduceLogSumExp", "lse", {f32_arg({3, 4}), axes({1})});
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"lse_max: S S R", "lse: S S R", "out0: S S"}));
}

// ---- ArgMax / ArgMin

TEST(LowerNnArgReduce, FirstOrLastExtreme) {
  LoweredNode n = check_op("ArgMax", "am", {f32_arg({3, 4, 2})}, attrs(kv("axis", int64_t(1))));
  EXPECT_EQ(block_shapes(n.func), (vector<std::string>{"am_max: S S S R", "am: S S S R"}));
  check_op("ArgMin", "am", {f32_arg({3, 4, 2})}, attrs(kv("axis", int64_t(-1)), kv("keepdims", int64_t(0))));
  check_op("ArgMax", "am", {f32_arg({5, 3})});
  // Small integers repeat: ties pick the first, or the last with select_last_index.
  for (const char* op : {"ArgMax", "ArgMin"})
    for (int64_t last : {0, 1})
      check_op(op, "am", {rand_arg(DType::kI32, {4, 6})},
               attrs(kv("axis", int64_t(1)), kv("select_last_index", last), kv("keepdims", int64_t(0))));
}

}  // namespace
}  // namespace tessel::lower_nn_test
