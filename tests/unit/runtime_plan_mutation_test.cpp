// The plan's loader under structured corruption: every bit flip is caught by
// the checksum, and every mutation that keeps a valid checksum (bytes changed
// then resealed, fields set to boundary values, truncations) is either a
// PlanError or a plan the executor runs within its buffers. Never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "src/runtime/checksum.h"
#include "src/runtime/plan.h"
#include "src/runtime/plan_executor.h"
#include "tessel/runtime.h"
#include "tests/unit/runtime_test_plan.h"

namespace tessel::rt {
namespace {

constexpr uint32_t kKernels = 2;
constexpr uint64_t kWeights = 24;
constexpr size_t kSlack = 256;  // canary bytes after the arena
constexpr uint8_t kCanary = 0xa5;

Plan rich_plan() {
  Plan p = looped_plan();
  p.cpu_features = {"avx2", "fma"};
  p.weights_checksum = 0x0123456789abcdefull;
  return p;
}

// The kernels of a mutated plan write every byte of every argument, as the
// generated kernels may: the sizes come from the plan being run, where every
// call of one kernel passes buffers of the same sizes (a loop calls it again).
thread_local const Plan* t_plan = nullptr;

template <uint32_t kKernel>
int32_t touch_all(void* const* args) {
  for (const Step& s : t_plan->steps) {
    if (s.kernel != kKernel) continue;
    for (size_t i = 0; i < s.args.size(); ++i) std::memset(args[i], 0x11, t_plan->buffers[s.args[i]].bytes);
    break;
  }
  return 0;
}

struct Outcome {
  int accepted = 0, rejected = 0;
};

// Parses, validates and, if the plan is accepted, runs it on caller tensors
// of the plan's own specs and checks that no byte past the arena was written.
void load_and_run(const std::vector<uint8_t>& blob, Outcome& outcome) {
  Plan plan;
  try {
    plan = deserialize_plan(blob.data(), blob.size());
    validate_plan(plan, kKernels, kWeights);
  } catch (const PlanError& e) {
    EXPECT_EQ(e.status(), TESSEL_ERR_CORRUPT_MODEL);
    ++outcome.rejected;
    return;
  }
  ++outcome.accepted;
  EXPECT_EQ(serialize_plan(plan), blob) << "an accepted plan reserialises to its bytes";
  constexpr uint64_t kRunnable = 1 << 20;  // a valid plan may claim up to 2^40 bytes; not allocated here
  if (plan.arena_bytes > kRunnable) return;
  for (const auto* specs : {&plan.inputs, &plan.outputs})
    for (const TensorSpec& spec : *specs)
      if (tensor_bytes(spec) > kRunnable) return;
  alignas(64) static uint8_t weights[64] = {};
  PlanExecutor executor(plan, {&touch_all<0>, &touch_all<1>}, weights);
  std::vector<std::vector<uint8_t>> storage;
  std::vector<tessel_tensor> tensors[2];
  for (int k = 0; k < 2; ++k)
    for (const TensorSpec& spec : k == 0 ? plan.inputs : plan.outputs) {
      storage.emplace_back(tensor_bytes(spec) + 64);
      tensors[k].push_back(
          {storage.back().data(), tessel_dtype(spec.dtype), int32_t(spec.shape.size()), spec.shape.data()});
    }
  std::vector<uint8_t> arena(plan.arena_bytes + kSlack + 64, kCanary);
  uint8_t* base = arena.data() + (64 - reinterpret_cast<uintptr_t>(arena.data()) % 64) % 64;
  t_plan = &executor.plan();
  executor.run(tensors[0].data(), int32_t(tensors[0].size()), tensors[1].data(), int32_t(tensors[1].size()),
               base);
  for (size_t i = 0; i < kSlack; ++i)
    ASSERT_EQ(base[plan.arena_bytes + i], kCanary) << "written past the arena";
}

TEST(RuntimePlanMutation, EveryBitFlipIsACorruptModel) {
  std::vector<uint8_t> blob = serialize_plan(rich_plan());
  int flips = 0;
  for (size_t i = 0; i < blob.size(); ++i)
    for (int bit = 0; bit < 8; ++bit, ++flips) {
      std::vector<uint8_t> bad = blob;
      bad[i] ^= uint8_t(1 << bit);
      try {
        deserialize_plan(bad.data(), bad.size());
        ADD_FAILURE() << "bit " << bit << " of byte " << i << " flipped and accepted";
      } catch (const PlanError& e) {
        std::string m = e.what();
        bool named = m.find("checksum mismatch") != std::string::npos ||
                     m.find("bad magic") != std::string::npos ||
                     m.find("format version") != std::string::npos;
        EXPECT_TRUE(named) << "byte " << i << ": " << m;
      }
    }
  EXPECT_EQ(flips, int(blob.size()) * 8);
}

TEST(RuntimePlanMutation, ResealedByteMutationsAreRejectedOrRunSafely) {
  const std::vector<uint8_t> blob = serialize_plan(rich_plan());
  Outcome outcome;
  int mutations = 0;
  // The header (magic, version) is rejected before the checksum is read; mutate the rest.
  for (size_t i = 12; i + 8 < blob.size(); ++i) {
    uint8_t b = blob[i];
    for (uint8_t v : {uint8_t(0), uint8_t(0xff), uint8_t(0x7f), uint8_t(0x80), uint8_t(b ^ 1),
                      uint8_t(b ^ 0x40), uint8_t(b ^ 0x80), uint8_t(b + 1), uint8_t(b - 1), uint8_t(0x40)}) {
      if (v == b) continue;
      std::vector<uint8_t> bad = blob;
      bad[i] = v;
      reseal(bad);
      SCOPED_TRACE("byte " + std::to_string(i) + " = " + std::to_string(v));
      load_and_run(bad, outcome);
      ++mutations;
    }
  }
  // Truncated and extended, resealed.
  for (size_t n = 12 + 8; n < blob.size(); ++n) {
    std::vector<uint8_t> cut(blob.begin(), blob.begin() + long(n));
    reseal(cut);
    load_and_run(cut, outcome);
    ++mutations;
  }
  std::vector<uint8_t> longer = blob;
  longer.insert(longer.end() - 8, 4, 0);
  reseal(longer);
  load_and_run(longer, outcome);
  ++mutations;
  EXPECT_GT(mutations, 2000);
  EXPECT_GT(outcome.rejected, 0);
  EXPECT_GT(outcome.accepted, 0);  // names, flops: harmless changes stay harmless
  std::printf("%d byte mutations: %d rejected, %d accepted and ran within bounds\n", mutations,
              outcome.rejected, outcome.accepted);
}

// Each field of the plan set to the values that break naive loaders: zero,
// one, the limits, just past the arena or the weights, alignment edges.
TEST(RuntimePlanMutation, BoundaryFieldValuesAreRejectedOrRunSafely) {
  const Plan base = rich_plan();
  const uint64_t u64[] = {0,
                          1,
                          8,
                          23,
                          24,
                          25,
                          40,
                          63,
                          64,
                          65,
                          128,
                          uint64_t(1) << 32,
                          uint64_t(1) << 40,
                          (uint64_t(1) << 40) + 64,
                          uint64_t(1) << 62,
                          uint64_t(1) << 63,
                          std::numeric_limits<uint64_t>::max() - 63,
                          std::numeric_limits<uint64_t>::max()};
  const uint32_t u32[] = {0, 1, 2, 3, 4, 5, 0x7fffffffu, 0x80000000u, 0xffffffffu};
  const int64_t dims[] = {
      -1, 0, 1, 2, 3, 6, int64_t(1) << 31, int64_t(1) << 61, std::numeric_limits<int64_t>::max()};
  Outcome outcome;
  int mutations = 0;
  auto attempt = [&](const char* what, auto&& mutate) {
    Plan p = base;
    mutate(p);
    SCOPED_TRACE(what);
    load_and_run(serialize_plan(p), outcome);
    ++mutations;
  };
  for (size_t b = 0; b < base.buffers.size(); ++b) {
    for (uint64_t v : u64) {
      attempt("buffer offset", [&](Plan& p) { p.buffers[b].offset = v; });
      attempt("buffer bytes", [&](Plan& p) { p.buffers[b].bytes = v; });
    }
    for (uint32_t v : u32) attempt("buffer index", [&](Plan& p) { p.buffers[b].index = v; });
    for (int s = 0; s < 256; s += 1)
      attempt("buffer storage", [&](Plan& p) { p.buffers[b].storage = Storage(s); });
  }
  for (size_t s = 0; s < base.steps.size(); ++s) {
    for (uint32_t v : u32) {
      attempt("step kernel", [&](Plan& p) { p.steps[s].kernel = v; });
      for (size_t a = 0; a < base.steps[s].args.size(); ++a)
        attempt("step argument", [&](Plan& p) { p.steps[s].args[a] = v; });
    }
    attempt("no arguments", [&](Plan& p) { p.steps[s].args.clear(); });
    attempt("an extra argument", [&](Plan& p) { p.steps[s].args.push_back(0); });
    attempt("step kernel swapped", [&](Plan& p) { p.steps[s].kernel ^= 1; });
    for (double v :
         {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 1e300})
      attempt("step flops", [&](Plan& p) { p.steps[s].flops = v; });
  }
  for (uint32_t v : u32) attempt("output buffer", [&](Plan& p) { p.output_buffers[0] = v; });
  attempt("no output buffers", [&](Plan& p) { p.output_buffers.clear(); });
  attempt("two output buffers", [&](Plan& p) { p.output_buffers.push_back(3); });
  for (uint64_t v : u64) {
    attempt("arena bytes", [&](Plan& p) { p.arena_bytes = v; });
    attempt("weights bytes", [&](Plan& p) { p.weights_bytes = v; });
  }
  for (int k = 0; k < 2; ++k) {
    auto specs = [k](Plan& p) -> std::vector<TensorSpec>& { return k == 0 ? p.inputs : p.outputs; };
    for (int dtype = 0; dtype < 256; ++dtype)
      attempt("dtype", [&](Plan& p) { specs(p)[0].dtype = uint8_t(dtype); });
    for (size_t d = 0; d < 2; ++d)
      for (int64_t v : dims) attempt("dimension", [&](Plan& p) { specs(p)[0].shape[d] = v; });
    attempt("rank 0", [&](Plan& p) { specs(p)[0].shape.clear(); });
    attempt("rank 65", [&](Plan& p) { specs(p)[0].shape.assign(65, 1); });
    attempt("no tensors", [&](Plan& p) { specs(p).clear(); });
    attempt("a second tensor", [&](Plan& p) { specs(p).push_back(specs(p)[0]); });
  }
  attempt("empty feature", [&](Plan& p) { p.cpu_features.push_back(""); });
  attempt("feature with a space", [&](Plan& p) { p.cpu_features.push_back("avx 2"); });
  attempt("long feature", [&](Plan& p) { p.cpu_features.push_back(std::string(65, 'a')); });
  EXPECT_GT(mutations, 1000);
  EXPECT_GT(outcome.rejected, 0);
  std::printf("%d field mutations: %d rejected, %d accepted and ran within bounds\n", mutations,
              outcome.rejected, outcome.accepted);
}

TEST(RuntimePlanMutation, AHugeArenaIsRefusedBeforeItsSizeOverflows) {
  Plan p = rich_plan();
  p.arena_bytes = std::numeric_limits<uint64_t>::max() - 10;  // rounded up to 64: 0
  p.buffers[2].offset = 0;
  try {
    validate_plan(p, kKernels, kWeights);
    ADD_FAILURE() << "accepted";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("an arena of"), std::string::npos) << e.what();
  }
}

TEST(RuntimePlanMutation, WeightsChecksum) {
  alignas(64) uint8_t weights[kWeights] = {1, 2, 3};
  Plan p = rich_plan();
  p.weights_checksum = checksum64(weights, kWeights);
  verify_weights_checksum(p, weights, kWeights);
  for (size_t i = 0; i < kWeights; ++i) {
    weights[i] ^= 4;
    try {
      verify_weights_checksum(p, weights, kWeights);
      ADD_FAILURE() << "flipped weight byte " << i << " accepted";
    } catch (const PlanError& e) {
      EXPECT_EQ(e.status(), TESSEL_ERR_CORRUPT_MODEL);
      EXPECT_NE(std::string(e.what()).find("model data corrupt: checksum mismatch"), std::string::npos)
          << e.what();
    }
    weights[i] ^= 4;
  }
}

// XXH64's published values, so the checksum is the algorithm it claims to be.
TEST(RuntimePlanMutation, ChecksumIsXxh64) {
  EXPECT_EQ(checksum64("", 0), 0xef46db3751d8e999ull);
  EXPECT_EQ(checksum64("a", 1), 0xd24ec4f1a98c6e5bull);
  EXPECT_EQ(checksum64("abc", 3), 0x44bc2cf5ad770999ull);
  const char* s37 = "0123456789abcdef0123456789abcdef01234";
  EXPECT_EQ(checksum64(s37, 37), 0x3f889232c2743804ull);
  std::vector<uint8_t> bytes;
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 256; ++i) bytes.push_back(uint8_t(i));
  EXPECT_EQ(checksum64(bytes.data(), bytes.size()), 0x8e03c838c596036full);
}

}  // namespace
}  // namespace tessel::rt
