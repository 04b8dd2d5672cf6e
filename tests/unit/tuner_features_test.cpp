// The tuner's features (tuner/features/features.h) on hand-computed cases: a
// row-wise add with a broadcast operand, a transposed read, a read that does
// not move along the vector loop; the vector's layout and its pooling; the
// bytes a prefetch asks for over its loops; a GPU launch's threads, blocks
// and shared memory.
#include "tuner/features/features.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "src/tir_passes/flatten_blocks.h"
#include "tests/unit/cuda_test_util.h"
#include "tests/unit/sched_workloads_util.h"

namespace tessel::tune {
namespace {

using namespace tir;

// for i in 0..64 parallel: for j in 0..64 vectorized: C[i, j] = A[...] + B[...]
PrimFunc add_func(std::function<Expr(const Buffer&, const Var&, const Var&)> a_read,
                  std::function<Expr(const Buffer&, const Var&, const Var&)> b_read) {
  Buffer a = make_buffer("A", DType::kF32, {64, 64}), b = make_buffer("B", DType::kF32, {64});
  Buffer c = make_buffer("C", DType::kF32, {64, 64});
  Var i = var("i"), j = var("j");
  Stmt store = make_store(c, a_read(a, i, j) + b_read(b, i, j), {i, j});
  Stmt nest = make_for(i, int_imm(0), int_imm(64), ForKind::kParallel,
                       make_for(j, int_imm(0), int_imm(64), ForKind::kVectorized, store));
  return make_prim_func("add", {a, b}, {c}, nest);
}

double feature(const std::vector<double>& store, const std::string& name) {
  const std::vector<std::string>& names = store_feature_names();
  auto it = std::find(names.begin(), names.end(), name);
  EXPECT_NE(it, names.end()) << name;
  return store.at(size_t(it - names.begin()));
}

TEST(TunerFeatures, ARowWiseAddWithABroadcastOperand) {
  PrimFunc f = add_func([](const Buffer& a, const Var& i, const Var& j) { return load(a, {i, j}); },
                        [](const Buffer& b, const Var&, const Var& j) { return load(b, {j}); });
  std::vector<std::vector<double>> stores = store_features(f);
  ASSERT_EQ(stores.size(), 1u);
  const std::vector<double>& s = stores[0];
  EXPECT_EQ(feature(s, "iterations"), 4096);
  EXPECT_EQ(feature(s, "float_add"), 4096);
  EXPECT_EQ(feature(s, "float_mul"), 0);
  EXPECT_EQ(feature(s, "loads"), 8192);
  EXPECT_EQ(feature(s, "vector_lanes"), 64);
  EXPECT_EQ(feature(s, "parallel"), 64);
  EXPECT_EQ(feature(s, "loop_depth"), 2);
  // C and A: 16 KiB each, distinct, in order; B: 256 distinct bytes read 64 times over, in order.
  EXPECT_EQ(feature(s, "access0.unique_bytes"), 16384);
  EXPECT_EQ(feature(s, "access1.unique_bytes"), 16384);
  EXPECT_EQ(feature(s, "access2.bytes"), 16384);
  EXPECT_EQ(feature(s, "access2.unique_bytes"), 256);
  EXPECT_EQ(feature(s, "access2.stride"), 1);
  EXPECT_EQ(feature(s, "access2.unit_stride"), 1);
  EXPECT_EQ(feature(s, "access3.bytes"), 0) << "three accesses: the fourth slot is empty";
}

TEST(TunerFeatures, StridesAlongTheInnermostLoop) {
  PrimFunc transposed = add_func([](const Buffer& a, const Var& i, const Var& j) { return load(a, {j, i}); },
                                 [](const Buffer& b, const Var& i, const Var&) { return load(b, {i}); });
  std::vector<std::vector<double>> stores = store_features(transposed);
  ASSERT_EQ(stores.size(), 1u);
  const std::vector<double>& s = stores[0];
  // Sorted by distinct bytes: C (16 KiB, stride 1), A (16 KiB, read a row apart), B (256 B, one per row).
  EXPECT_EQ(feature(s, "access0.stride"), 1);
  EXPECT_EQ(feature(s, "access1.stride"), 64);
  EXPECT_EQ(feature(s, "access1.unit_stride"), 0);
  EXPECT_EQ(feature(s, "access2.stride"), 0);
  EXPECT_EQ(feature(s, "access2.no_stride"), 1);
}

TEST(TunerFeatures, TheVectorIsFixedLengthPooledAndLogScaled) {
  EXPECT_EQ(feature_count(), 2 * store_feature_names().size() + 8);
  std::set<std::string> unique(feature_names().begin(), feature_names().end());
  EXPECT_EQ(unique.size(), feature_count());
  PrimFunc f = add_func([](const Buffer& a, const Var& i, const Var& j) { return load(a, {i, j}); },
                        [](const Buffer& b, const Var&, const Var& j) { return load(b, {j}); });
  std::vector<float> v = extract_features(f);
  ASSERT_EQ(v.size(), feature_count());
  auto at = [&](const std::string& name) {
    return v[size_t(std::find(feature_names().begin(), feature_names().end(), name) - feature_names().begin())];
  };
  EXPECT_FLOAT_EQ(at("sum.float_add"), float(std::log2(4097.0)));
  EXPECT_FLOAT_EQ(at("program.stores"), 1.0f);  // log2(1 + 1)
  EXPECT_FLOAT_EQ(at("program.flops"), float(std::log2(4097.0)));
  // Every workload, scheduled and flattened, gives a vector of the same length with finite values.
  for (sched_workloads::Workload w : sched_workloads::kAllWorkloads) {
    std::vector<float> fw = extract_features(tir_passes::flatten_blocks(sched_workloads::lower_workload(w)));
    ASSERT_EQ(fw.size(), feature_count()) << sched_workloads::workload_name(w);
    for (float x : fw) EXPECT_TRUE(std::isfinite(x)) << sched_workloads::workload_name(w);
  }
}

// Two lines per row of A asked for ahead, 64 rows: 8 KiB, and nothing without the prefetch.
TEST(TunerFeatures, BytesPrefetchedCountEveryIterationOfTheLoopsAround) {
  PrimFunc plain = add_func(
      [](const Buffer& a, const Var& i, const Var& j) {
        return load(a, {i, j});
      },
      [](const Buffer& b, const Var&, const Var& j) { return load(b, {j}); });
  const auto& outer = static_cast<const ForNode&>(*plain->body);
  Stmt ahead = make_prefetch(plain->inputs[0], (Expr(outer.var) + int_imm(1)) * int_imm(64), 2);
  PrimFunc prefetching =
      make_prim_func("add", plain->inputs, plain->outputs, with_body(outer, make_seq({ahead, outer.body})));
  auto prefetched = [](const PrimFunc& f) {
    std::vector<float> v = extract_features(f);
    return v[size_t(std::find(feature_names().begin(), feature_names().end(), "program.prefetch_bytes") -
                    feature_names().begin())];
  };
  EXPECT_FLOAT_EQ(prefetched(plain), 0.0f);
  EXPECT_FLOAT_EQ(prefetched(prefetching), float(std::log2(1.0 + 64 * 2 * 64)));
}

// The default GPU schedule of a 128 x 128 x 32 matmul: 2 x 2 blocks of 16 x
// 16 threads, each a 4 x 4 register tile; A's and B's tiles of each step of
// 16 in shared memory.
TEST(TunerFeatures, AGpuLaunchHasItsThreadsBlocksAndSharedMemory) {
  PrimFunc f = tir::gpu_matmul(128, 128, 32);
  std::vector<std::vector<double>> stores = store_features(f);
  double most_threads = 0, most_blocks = 0, shared_reads = 0;
  for (const std::vector<double>& s : stores) {
    most_threads = std::max(most_threads, feature(s, "gpu_threads"));
    most_blocks = std::max(most_blocks, feature(s, "gpu_blocks"));
    for (int slot = 0; slot < 4; ++slot)
      shared_reads += feature(s, "access" + std::to_string(slot) + ".shared");
  }
  EXPECT_EQ(most_threads, 256);
  EXPECT_EQ(most_blocks, 4);
  EXPECT_GE(shared_reads, 2) << "the product reads both operands from shared memory";
  std::vector<float> v = extract_features(f);
  size_t shared =
      size_t(std::find(feature_names().begin(), feature_names().end(), "program.shared_alloc_bytes") -
             feature_names().begin());
  EXPECT_FLOAT_EQ(v.at(shared), float(std::log2(1.0 + 2 * 64 * 16 * 4)));
  // A CPU program has none.
  PrimFunc cpu = add_func(
      [](const Buffer& a, const Var& i, const Var& j) {
        return load(a, {i, j});
      },
      [](const Buffer& b, const Var&, const Var& j) { return load(b, {j}); });
  EXPECT_EQ(feature(store_features(cpu)[0], "gpu_threads"), 1);
  EXPECT_EQ(extract_features(cpu).at(shared), 0.0f);
}

}  // namespace
}  // namespace tessel::tune
